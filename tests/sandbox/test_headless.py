"""A headless session under deny rules (`opencode -p ... --yes`, the real CLI speaking
to the fake OpenAI server) whose model runs thirty everyday commands, `python -c` and
scripts: in the sandbox nobody is asked and it exits 0. On a machine without either
mechanism (hidden by a seccomp filter and a PATH without bwrap) start-up says so in one
line and the judge alone applies, as before: `python -c` needs a person, so it exits 3."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.headless.run import EXIT_NEEDS_APPROVAL, EXIT_OK
from app.sandbox.mechanisms import bwrap_problem, landlock_abi
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.sandbox.conftest import RULES, SECRET
from tests.sandbox.test_everyday import EVERYDAY, PACKAGE

REPO = Path(__file__).resolve().parents[2]
HIDE = Path(__file__).with_name("hide_sandbox.py")
MORE = [
    "python3 tool.py",
    "sh build.sh",
    "python3 -c 'import os; print(len(os.listdir(\".\")))'",
    "python3 -c 'open(\"secrets/key.txt\", \"w\").write(\"pwned\")' || true",
    "git rev-parse --abbrev-ref HEAD",
    "git show --stat HEAD",
    "wc -l src/notes.txt",
    "head -1 README.md",
    "sort src/notes.txt | uniq",
    "python3 --version",
    "date +%Y >/dev/null && echo ok",
    "env | grep -c TMPDIR",
]
SCRIPTS = {"tool.py": "import json\nprint(json.dumps({'ok': True}))\n", "build.sh": "mkdir -p build && echo built > build/log.txt\n"}


def script(fake: FakeOpenAI, commands: list[str]) -> None:
    for number, command in enumerate(commands):
        fake.reply(ToolCall("bash", json.dumps({"command": command}), id=f"call_{number}"))
    fake.reply(Text("All done."))


def cli(workspace: Path, fake: FakeOpenAI, *, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env.update(fake.env, HOME=str(workspace.parent / "home"), XDG_CONFIG_HOME=str(workspace.parent / "config"))
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    argv = [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "tidy up", "--yes", "--model", fake.model]
    return subprocess.run([*prefix, *argv], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)


@pytest.fixture
def project(repo: Path) -> Path:
    for rel, text in {**PACKAGE, **SCRIPTS}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / ".opencode.json").write_text(json.dumps({"permission": {"rules": RULES}, "lsp": {"python": {"disabled": True}}}))
    return repo


def test_a_session_under_deny_rules_asks_nothing_in_the_sandbox(project: Path, fake_llm: FakeOpenAI):
    if bwrap_problem() is not None and not isinstance(landlock_abi(), int):
        pytest.skip("this machine has neither bwrap nor Landlock")
    commands = [*EVERYDAY, *MORE]
    assert len(commands) >= 30
    script(fake_llm, commands)

    run = cli(project, fake_llm)

    assert run.returncode == EXIT_OK, run.stderr
    assert "✗" not in run.stderr and "sandbox unavailable" not in run.stderr, run.stderr
    assert run.stdout.strip() == "All done."
    assert (project / "secrets" / "key.txt").read_text() == SECRET


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the seccomp filter that hides Landlock is Linux's")
def test_without_either_mechanism_start_up_says_so_and_the_judge_alone_applies(
    project: Path, fake_llm: FakeOpenAI, tmp_path: Path
):
    folder = tmp_path / "bin"
    folder.mkdir()
    for program in ("python3", "git"):
        if (found := shutil.which(program)) is not None:
            (folder / program).symlink_to(found)
    script(fake_llm, ["echo hello", "python3 -c 'print(1)'"])

    run = cli(project, fake_llm, prefix=(sys.executable, str(HIDE), str(folder)))

    notices = [line for line in run.stderr.splitlines() if "sandbox" in line]
    assert len(notices) == 1 and notices[0].startswith("opencode: sandbox unavailable (bwrap is not installed; "), run.stderr
    assert "judged by the permission rules alone" in notices[0]
    assert run.returncode == EXIT_NEEDS_APPROVAL, run.stderr
    assert "only a person can approve this" in run.stderr, run.stderr
