"""Fixtures of the sandbox tests: a git repository under deny rules, with a secret, a
read-denied file and a home folder holding a key, and each mechanism to run in. A test
of bwrap is skipped only where bwrap cannot run (CI installs it); Landlock is forced
with sandbox.mechanism."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app.sandbox.mechanisms import bwrap_problem, landlock_abi
from tests.llm.conftest import fake_llm  # noqa: F401 - the fixture, shared

RULES = {
    "edit": {"secrets/*": "deny"},
    "view": {"private/*": "deny"},
    "bash": {"*": "allow"},
}
SECRET, TOKEN, KEY = "s3cr3t\n", "private-token-value", "ssh-key-value"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def skip_unless_available(mechanism: str) -> None:
    if mechanism == "bwrap" and (problem := bwrap_problem()) is not None:
        pytest.skip(f"{problem}: CI installs bubblewrap, so this runs there")
    if mechanism == "landlock" and not isinstance(abi := landlock_abi(), int):
        pytest.skip(abi)


@pytest.fixture(params=["bwrap", "landlock"])
def mechanism(request: pytest.FixtureRequest) -> str:
    skip_unless_available(request.param)
    return request.param


@pytest.fixture
def repo(workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workspace as a committed git repository with the guarded files; HOME is
    ``home``, holding ~/.ssh/id_rsa."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(KEY)
    files = {"secrets/key.txt": SECRET, "private/token.txt": TOKEN, "README.md": "hello\n"}
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "."], cwd=workspace, check=True)
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=workspace, check=True)
    return workspace


@pytest.fixture
def sandboxed(make_runtime, repo: Path) -> Callable[..., object]:
    """``sandboxed(mechanism, rules=RULES)``: a headless --yes runtime on ``repo`` whose
    bash runs under ``mechanism``."""

    def make(mechanism: str, rules: dict | None = None, **sandbox: object):
        config = {
            "permission": {"rules": rules or RULES},
            "lsp": {"python": {"disabled": True}},
            "sandbox": {"mechanism": mechanism, **sandbox},
        }
        return make_runtime("headless-yes", config)

    return make
