"""Commands of any length: the judge reads them in time linear in their length, and the
shell gets them as a script file, so a command far above the 128 KiB limit of one
argument runs (or fails with the shell's own error)."""

from __future__ import annotations

import asyncio
import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.permission.shell.parse import parse_command, split_words, unquote_word
from app.tools.bash import BashTool

CALL_BOUND_S = 120
"""Generous: each call takes about a second; the bound only turns a hang into a failure."""
BIG = 1_600_000


def _shlex_words(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab '\"\\\t\n\x0b", max_size=12))
def test_word_splitting_agrees_with_posix_shlex(text: str) -> None:
    assert split_words(text) == _shlex_words(text)
    words = _shlex_words(text)
    assert unquote_word(text) == (words[0] if words is not None and len(words) == 1 else None)


async def _run(ctx, command: str):
    return await asyncio.wait_for(BashTool().call({"command": command}, ctx), CALL_BOUND_S)


async def test_a_megabyte_argument_is_judged_and_run(ctx) -> None:
    result = await _run(ctx, f"printf %s {'a' * BIG} | wc -c")
    assert result.output.splitlines()[0].strip() == str(BIG)
    assert result.metadata["exit_code"] == 0


async def test_a_script_over_the_argument_limit_runs_every_line(ctx) -> None:
    script = "true\n" * 30_000 + "echo done"  # 150 KB, over the 128 KiB of one argument
    result = await _run(ctx, script)
    assert result.output.splitlines()[0] == "done"


async def test_a_long_command_with_a_syntax_error_fails_with_the_shells_own_error(ctx) -> None:
    result = await _run(ctx, "echo " + "a" * BIG + " )")
    assert "syntax error" in result.output
    assert result.metadata["exit_code"] == 2


def test_a_long_quoted_word_is_one_part_with_its_program() -> None:
    parsed = parse_command("git commit -m '" + "x" * BIG + "'")
    assert parsed.complete
    assert [part.programs for part in parsed.parts] == [("git",)]


async def test_a_megabyte_alias_definition_is_judged_and_run(ctx) -> None:
    result = await _run(ctx, f"alias x='{'a' * BIG}'; echo defined")
    assert result.output.splitlines()[0] == "defined"
