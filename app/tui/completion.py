"""Where the prompt offers completions: a ``/command`` being typed at the very start of
the prompt, or an ``@path`` being typed anywhere. Pure functions over the text and the
cursor, so the rules are tested without an app."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

_COMMAND_SO_FAR = re.compile(r"/[A-Za-z0-9_.-]*")
_MENTION_SO_FAR = re.compile(r"(?:^|(?<=\s))@(?P<query>[^\s@]*)$")


class Trigger(NamedTuple):
    """A token the list completes: ``kind`` "command" or "file", ``query`` what is typed
    after the ``/`` or ``@``, and its place on ``row``: columns ``start`` (the ``/`` or
    ``@``) to ``end`` (the token's end, which may lie past the cursor)."""

    kind: Literal["command", "file"]
    query: str
    row: int
    start: int
    end: int


class Choice(NamedTuple):
    """One entry of the list: ``insert`` replaces the token; ``runs``: enter sends the
    prompt at once (a command that needs nothing more)."""

    insert: str
    label: str
    description: str = ""
    runs: bool = False


def find_trigger(text: str, row: int, column: int) -> Trigger | None:
    """The token at the cursor that a list completes, if any."""
    lines = text.split("\n")
    if row >= len(lines):
        return None
    line = lines[row]
    before = line[:column]
    end = column  # the token goes on past the cursor up to the next space
    while end < len(line) and not line[end].isspace():
        end += 1
    if row == 0 and _COMMAND_SO_FAR.fullmatch(before):
        return Trigger("command", before[1:], row, 0, end)
    match = _MENTION_SO_FAR.search(before)
    if match is not None:
        return Trigger("file", match["query"], row, match.start(), end)
    return None
