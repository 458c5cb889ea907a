"""`opencode --worktree NAME` and `opencode worktree list|remove` (app/worktrees/repository.py): real
git repositories, real opencode processes, the fake OpenAI server as the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

REPO = Path(__file__).resolve().parents[1]
GIT_IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_IDENTITY, "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "a.txt").write_text("main\n")
    (top / ".gitignore").write_text(".env\n.opencode/\n")
    (top / ".opencode.json").write_text('{"lsp": {"python": {"disabled": true}}}')
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "start")
    (top / ".env").write_text("SECRET=1\n")
    return top


def opencode(folder: Path, fake: FakeOpenAI, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_") and not k.endswith("_API_KEY")}
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **fake.env}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(folder), *args],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_a_worktree_session_edits_only_the_worktree_and_remove_guards_its_changes(repo: Path, fake_llm: FakeOpenAI, tmp_path: Path):
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "a.txt"}), id="v1"))
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "a.txt", "content": "feat\n"}), id="w1"))
    fake_llm.reply(Text("Changed a.txt."))

    done = opencode(repo, fake_llm, tmp_path, "--worktree", "feat", "-p", "change a.txt", "--yes", "--model", fake_llm.model)

    assert done.returncode == 0, done.stderr
    tree = repo / ".opencode" / "worktrees" / "feat"
    assert (tree / "a.txt").read_text() == "feat\n"
    assert (repo / "a.txt").read_text() == "main\n"  # the main checkout is untouched
    assert (tree / ".env").read_text() == "SECRET=1\n"  # worktree.copy's default
    assert git(tree, "branch", "--show-current").strip() == "feat"
    assert git(repo, "status", "--porcelain", "--", "a.txt") == ""
    assert git(tree, "status", "--porcelain") == " M a.txt\n"  # its sessions live outside the checkout

    listed = opencode(repo, fake_llm, tmp_path, "worktree", "list")
    assert listed.returncode == 0
    assert listed.stdout.startswith("feat  branch feat  1 uncommitted  1 session (latest: change a.txt)  ")

    refused = opencode(repo, fake_llm, tmp_path, "worktree", "remove", "feat")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("opencode: error: worktree feat has uncommitted changes (1 file: a.txt)")
    assert refused.stderr.count("\n") == 1 and "--force" in refused.stderr
    assert (tree / "a.txt").exists()

    git(tree, "commit", "-q", "-am", "feat work")
    removed = opencode(repo, fake_llm, tmp_path, "worktree", "remove", "feat")
    assert removed.returncode == 0, removed.stderr
    assert not tree.exists()
    assert git(repo, "log", "--format=%s", "feat").splitlines()[0] == "feat work"  # the branch stays


def test_the_worktree_is_reused_and_its_session_continued(repo: Path, fake_llm: FakeOpenAI, tmp_path: Path):
    fake_llm.reply(Text("first"))
    fake_llm.reply(Text("second"))
    assert opencode(repo, fake_llm, tmp_path, "--worktree", "feat", "-p", "one", "--model", fake_llm.model).returncode == 0
    again = opencode(repo, fake_llm, tmp_path, "--worktree", "feat", "-p", "two", "--continue", "--model", fake_llm.model)
    assert again.returncode == 0, again.stderr
    sent = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"]
    assert sent == ["one", "two"]
    assert "1 session" in opencode(repo, fake_llm, tmp_path, "worktree", "list").stdout


def test_force_removes_a_worktree_with_changes(repo: Path, fake_llm: FakeOpenAI, tmp_path: Path):
    fake_llm.reply(Text("nothing"))
    assert opencode(repo, fake_llm, tmp_path, "--worktree", "spike", "-p", "hi", "--model", fake_llm.model).returncode == 0
    (repo / ".opencode" / "worktrees" / "spike" / "new.txt").write_text("scratch\n")
    removed = opencode(repo, fake_llm, tmp_path, "worktree", "remove", "spike", "--force")
    assert removed.returncode == 0, removed.stderr
    assert opencode(repo, fake_llm, tmp_path, "worktree", "list").stdout == "No worktrees: 'opencode --worktree NAME' makes one\n"


@pytest.mark.parametrize("name", ["../out", "_x", "a..b", "x.lock", "sp ace"])
def test_a_bad_name_is_one_line(repo: Path, fake_llm: FakeOpenAI, tmp_path: Path, name: str):
    done = opencode(repo, fake_llm, tmp_path, "--worktree", name, "-p", "hi")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "cannot name a worktree" in done.stderr
    assert not (repo / ".opencode" / "worktrees").exists()


def test_outside_a_repository_it_says_so(fake_llm: FakeOpenAI, tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    done = opencode(plain, fake_llm, tmp_path, "--worktree", "feat", "-p", "hi")
    assert done.returncode == 2 and "is not in a git repository (worktrees need one)" in done.stderr
