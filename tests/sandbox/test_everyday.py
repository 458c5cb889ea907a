"""Everyday commands work in the sandbox, under the deny rules, with nobody asked: git,
pytest, pip into a workspace .venv, make, npm, ruff, grep, sed, the temp folder."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.permission.attack import call
from tests.sandbox.conftest import GIT_ENV

RUFF = Path(sys.executable).with_name("ruff")
PACKAGE = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tinypkg"\nversion = "0.1"\n\n[tool.setuptools]\npackages = ["tinypkg"]\n'
    ),
    "tinypkg/__init__.py": "def answer():\n    return 42\n",
    "tests/test_answer.py": "from tinypkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n",
    "Makefile": "build/out.txt: tinypkg/__init__.py\n\tmkdir -p build\n\tcp tinypkg/__init__.py build/out.txt\n",
    "package.json": '{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node check.js"}}\n',
    "check.js": "require('fs').writeFileSync('node-ran.txt', 'ok'); console.log('node ok');\n",
    "src/notes.txt": "colour\nneedle here\n",
}
EVERYDAY = [
    "git status",
    "git add tinypkg tests",
    "git add src && git commit -qm 'add the notes'",
    "git diff HEAD~1 --stat",
    "git log --oneline -n 2",
    "git branch feature && git branch -d feature",
    f"PYTHONPATH=. {sys.executable} -m pytest -q -p no:cacheprovider tests",
    f"{RUFF} check --no-cache tinypkg",
    "make",
    "grep -r needle src",
    "sed -i 's/colour/color/' src/notes.txt && grep -q color src/notes.txt",
    'echo scratch > "$TMPDIR/scratch.txt" && cat "$TMPDIR/scratch.txt"',
    "mkdir -p out/deep && touch out/deep/x && ls out/deep",
    "cp src/notes.txt src/copy.txt && mv src/copy.txt src/moved.txt && rm src/moved.txt",
    "python3 -c 'print(6 * 7)'",
    "find . -name '*.py' -not -path './.venv/*' | sort | head -5",
    'tar czf "$TMPDIR/src.tgz" src && tar tzf "$TMPDIR/src.tgz"',
    "cat README.md | wc -l",
    "ls -la",
    "mkdir -p out && echo done > out/result.txt && cat out/result.txt",
]


def _venv_with_setuptools() -> str | None:
    """A python whose site-packages hold setuptools, for `pip install -e .` offline."""
    for python in ("/usr/bin/python3", shutil.which("python3")):
        if python and subprocess.run([python, "-c", "import setuptools, pip"], capture_output=True).returncode == 0:
            return python
    return None


@pytest.fixture
def project(repo: Path) -> Path:
    for rel, text in PACKAGE.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


@pytest.mark.parametrize("command", EVERYDAY)
async def test_an_everyday_command_runs_sandboxed_without_a_question(command, sandboxed, project: Path):
    runtime = sandboxed("bwrap")
    ctx = runtime.context(runtime.store.sessions.create().id)
    if "diff HEAD~1" in command:
        subprocess.run(["git", "add", "-A"], cwd=project, check=True)
        subprocess.run(["git", "commit", "-qm", "more"], cwd=project, check=True)
    result = await runtime.tools["bash"].call({"command": command}, ctx)
    assert result.metadata["exit_code"] == 0, result.output
    assert result.metadata["sandbox"] == "bwrap"


async def test_pip_installs_into_a_workspace_venv(sandboxed, project: Path):
    python = _venv_with_setuptools()
    if python is None:
        pytest.skip("no python here has setuptools and pip for an offline editable install")
    runtime = sandboxed("bwrap")
    command = (
        f"{python} -m venv --system-site-packages .venv && "
        ".venv/bin/python -m pip install -q --no-index --no-build-isolation -e . && "
        ".venv/bin/python -c 'import tinypkg; print(tinypkg.answer())'"
    )
    output = await call(runtime, "bash", {"command": command})
    assert "42" in output and "Exit code: 0" in output, output


async def test_npm_test_runs_sandboxed(sandboxed, project: Path):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed here")
    runtime = sandboxed("bwrap")
    output = await call(runtime, "bash", {"command": "npm test --silent"})
    assert "node ok" in output and "Exit code: 0" in output, output
    assert (project / "node-ran.txt").read_text() == "ok"


TAMPER_WITH_GIT = """
import subprocess
common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()
for path, text in ((common + "/config", "[core]\\n\\thooksPath = /tmp\\n"), (common + "/hooks/post-commit", "echo pwned\\n"),
                   ("." + "git", "gitdir: /tmp\\n")):
    try:
        open(path, "a").write(text)
    except OSError as err:
        print(path, err)
"""
"""Paths computed as it runs, so the judge cannot refuse them up front: the kernel holds them."""


async def test_a_linked_worktree_commits_sandboxed_and_its_git_control_stays_read_only(
    mechanism: str, make_runtime, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "README.md").write_text("hello\n")
    for command in (["init", "-q", "."], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *command], cwd=origin, check=True)
    workspace.rmdir()
    subprocess.run(["git", "worktree", "add", "-q", str(workspace), "-b", "feat"], cwd=origin, check=True)
    dot_git, config = (workspace / ".git").read_text(), (origin / ".git" / "config").read_text()
    runtime = make_runtime("headless-yes", {"lsp": {"python": {"disabled": True}}, "sandbox": {"mechanism": mechanism}})
    ctx = runtime.context(runtime.store.sessions.create().id)

    committed = await runtime.tools["bash"].call({"command": "echo more >> README.md && git commit -qam more"}, ctx)
    tampered = await runtime.tools["bash"].call({"command": f"python3 -c {shlex.quote(TAMPER_WITH_GIT)}"}, ctx)

    assert committed.metadata["exit_code"] == 0, committed.output
    log = subprocess.run(["git", "log", "--format=%s", "feat"], cwd=origin, capture_output=True, text=True, check=True)
    assert log.stdout.split() == ["more", "start"]
    assert tampered.metadata["sandbox"] == mechanism
    assert (workspace / ".git").read_text() == dot_git and (origin / ".git" / "config").read_text() == config
    assert not (origin / ".git" / "hooks" / "post-commit").exists()
