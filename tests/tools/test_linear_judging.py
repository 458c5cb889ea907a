"""Words a model may emit by accident or be led to emit: a 100,000-character word before
an unclosed quote, long runs of the characters the judge's patterns look for. Every
pattern the bash judge applies to a command is linear in its length (possessive runs,
no pattern that rescans from each start), so each of these is judged in about a second;
one backtracking pattern would turn any of them into a hang. None is allowed unasked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config import Config
from app.permission.effects import hooks_folders
from app.permission.shell.judge import explain_command
from app.permission.shell.parse import split_words
from app.tools.bash import authorize

LONG = 100_000
UNCLOSED = ['"', "'", "`", "$'", '$"', "$(", "${", "<(", "\\"]
"""Every way a word can open a quote or an expansion that never closes (a trailing
backslash escapes nothing)."""


def _verdict(workspace: Path, command: str) -> str:
    return explain_command(Config.model_validate({}), workspace, command, "coder").splitlines()[0]


@pytest.mark.parametrize("opening", UNCLOSED)
def test_a_long_word_before_an_unclosed_quote_is_judged_and_asked(opening: str, workspace: Path) -> None:
    command = "echo " + "a" * LONG + opening + ("cc" if opening != "\\" else "")
    assert (split_words(command) is None) == (opening in ('"', "'", "$'", '$"', "\\"))
    assert _verdict(workspace, command).startswith("ask")


@pytest.mark.parametrize("opening", UNCLOSED)
def test_an_unclosed_quote_after_a_long_run_of_quoted_pieces_is_asked(opening: str, workspace: Path) -> None:
    command = "echo " + "a'b'\"c\"\\d" * (LONG // 45) + opening + "cc"  # 20,000 characters
    assert _verdict(workspace, command).startswith("ask")


# Long words for the programs whose arguments the judge reads with patterns of its own:
# awk's print redirections, sed's addresses, sqlite3's dot commands, mktemp's template,
# brace lists, /proc paths, git's object:path names.
PROGRAM_WORDS = [
    "awk '" + "print " * (LONG // 6) + "'",
    "sed '" + "/\\/" * (LONG // 3) + "'",
    "sed '\\x" + "y" * LONG + "'",
    "sqlite3 db -cmd '" + ";\n" * (LONG // 2) + "'",
    "python3 -" + "B" * LONG + " x.py",
    "mktemp " + "X" * LONG + "a",
    "echo " + "{," * (LONG // 2),
    "echo " + "{a,b}" * (LONG // 5),
    "cp x /proc/" + "/" * LONG + "self",
    "git show HEAD:" + "a" * LONG + "\nb",
    "cat " + "{" + "," * LONG,
]


@pytest.mark.parametrize("command", PROGRAM_WORDS, ids=[command[:12] for command in PROGRAM_WORDS])
def test_long_words_for_programs_read_by_patterns_are_judged(command: str, workspace: Path) -> None:
    assert _verdict(workspace, command).split()[0] in ("ask", "allow", "deny")


def test_a_long_blank_git_config_is_read_in_one_pass(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n" + "\n" * 64_000 + "\thooksPath =" + " " * 4000 + "x\n")
    assert hooks_folders(workspace.as_posix()) == []  # x is outside the 64 KiB read
    (workspace / ".git" / "config").write_text("[core]\n\thooksPath = " + " " * 60_000 + ".husky  \n")
    assert hooks_folders(workspace.as_posix()) == [".husky"]


# The characters the judge's patterns and its word splitter look at.
_SIGNIFICANT = "a '\"\\$`{},;|/X\n\t!:=-"


@pytest.fixture(scope="module")
def empty_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    program=st.sampled_from(["echo", "awk", "sed", "sqlite3 db -cmd", "psql -c", "mktemp", "git show", "bash -c"]),
    unit=st.text(alphabet=_SIGNIFICANT, min_size=1, max_size=4),
    repeat=st.integers(1_000, 10_000),
    opening=st.sampled_from(UNCLOSED),
)
def test_any_long_word_with_an_unclosed_quote_is_judged_and_never_run_unasked(
    program: str, unit: str, repeat: int, opening: str, empty_workspace: Path
) -> None:
    command = f"{program} {unit * repeat}{opening}"
    verdict = _verdict(empty_workspace, command)
    if split_words(command) is None:  # no shell can read it: asked, never run unasked
        assert verdict.startswith("ask"), verdict


async def test_judging_leaves_the_event_loop_free(make_runtime) -> None:
    """The verdict is worked out in a worker thread: the loop's other tasks (a TUI's keys,
    its spinner) take turns while a long command is judged. Judged on the loop, an allowed
    command would return before any other task ran."""
    runtime = make_runtime(config={"lsp": {"python": {"disabled": True}}, "permission": {"rules": {"bash": "allow"}}})
    ctx = runtime.context(runtime.store.sessions.create(title="judged").id)
    turns = 0
    judged = False

    async def other_task() -> None:
        nonlocal turns
        while not judged:
            turns += 1
            await asyncio.sleep(0)

    running = asyncio.create_task(other_task())
    await asyncio.sleep(0)
    before = turns
    await authorize(ctx, "echo " + "a" * LONG, "a long echo")
    during = turns - before
    judged = True
    await running
    assert during > 0
