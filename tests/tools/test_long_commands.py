"""Commands of any length: the judge reads them in time linear in their length, and the
shell gets them as a script file, so a command far above the 128 KiB limit of one
argument runs (or fails with the shell's own error)."""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.tools.shell_parse import parse_command, unquote_word

BIG = 1_600_000


def _shlex_word(raw: str) -> str | None:
    try:
        words = shlex.split(raw)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab '\"\\\t\n", min_size=1, max_size=12).map(lambda text: text.strip(" \t\r\n")))
def test_quote_removal_agrees_with_posix_shlex(raw: str) -> None:
    assert unquote_word(raw) == _shlex_word(raw)


def test_a_long_quoted_word_is_one_part_with_its_program() -> None:
    parsed = parse_command("git commit -m '" + "x" * BIG + "'")
    assert parsed.complete
    assert [part.programs for part in parsed.parts] == [("git",)]
