"""Unified diff text into rows the diff view draws: pure functions, no Textual.

The view gets diffs from two places: tool results (``metadata["diff"]``, possibly several
files) and the history (old and new texts, diffed by ``app.core.diff``). Both arrive here as
unified diff text, so one parser serves both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Literal

LineKind = Literal["file", "hunk", "context", "added", "removed"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
# C0 controls other than tab would move the terminal cursor: show them as one visible cell.
_CONTROLS = {code: "\ufffd" for code in range(32) if code != 9} | {127: "\ufffd"}


@dataclass(frozen=True)
class DiffLine:
    """One drawn line. ``file`` and ``hunk`` lines span the whole width in split mode; a
    ``file`` line names its ``path`` (``text`` adds the stats), cut to fit when drawn."""

    kind: LineKind
    text: str
    old_no: int | None = None
    new_no: int | None = None
    path: str | None = None


@dataclass
class FileDiff:
    path: str
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def additions(self) -> int:
        return sum(line.kind == "added" for line in self.lines)

    @property
    def deletions(self) -> int:
        return sum(line.kind == "removed" for line in self.lines)


SplitRow = tuple[DiffLine | None, DiffLine | None]
"""(left: old side, right: new side); context, file and hunk lines are on both sides."""


def parse_unified_diff(diff: str, path: str = "") -> list[FileDiff]:
    """The files of a unified diff. Hunk line counts decide where a hunk ends, so a removed
    line that starts with "--" is never taken for a file header. Hunks before any header
    belong to ``path``."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    old_no = new_no = old_left = new_left = 0
    pending_old_path: str | None = None
    for raw in diff.splitlines():
        in_hunk = old_left > 0 or new_left > 0
        if in_hunk:
            kind, text = _body_line(raw)
            if kind is None:
                continue
            assert current is not None
            line = DiffLine(
                kind,
                text,
                old_no if kind != "added" else None,
                new_no if kind != "removed" else None,
            )
            current.lines.append(line)
            if kind != "added":
                old_no, old_left = old_no + 1, old_left - 1
            if kind != "removed":
                new_no, new_left = new_no + 1, new_left - 1
        elif raw.startswith("--- "):
            pending_old_path = _header_path(raw[4:])
        elif raw.startswith("+++ ") and pending_old_path is not None:
            new_path = _header_path(raw[4:])
            current = FileDiff(new_path if new_path != "/dev/null" else pending_old_path)
            files.append(current)
            pending_old_path = None
        elif match := _HUNK.match(raw):
            if current is None:
                current = FileDiff(path)
                files.append(current)
            old_no, new_no = int(match[1]), int(match[3])
            old_left = int(match[2]) if match[2] is not None else 1
            new_left = int(match[4]) if match[4] is not None else 1
            current.lines.append(DiffLine("hunk", raw))
    return files


def _body_line(raw: str) -> tuple[LineKind | None, str]:
    if raw.startswith("\\"):  # "\ No newline at end of file"
        return None, ""
    sign, text = raw[:1], clean(raw[1:])
    if sign == "+":
        return "added", text
    if sign == "-":
        return "removed", text
    return "context", text  # " " or an empty line whose space was stripped


def _header_path(header: str) -> str:
    """"a/src/x.py\t2024-01-01" -> "src/x.py"."""
    name = header.split("\t", 1)[0].strip()
    return name[2:] if name[:2] in ("a/", "b/") else name


def clean(text: str) -> str:
    """A line ready to draw: the CR of a CRLF file dropped, other controls made visible."""
    return text.removesuffix("\r").translate(_CONTROLS)


def code_blocks(lines: list[DiffLine], max_lines: int = 200) -> list[list[int]]:
    """Indexes of the code lines to highlight together, ``max_lines`` at a time across
    hunks (lexing costs most per call), so a huge diff is coloured a screenful at a time,
    as it is drawn."""
    code = [index for index, line in enumerate(lines) if line.kind in ("context", "added", "removed")]
    return [code[start : start + max_lines] for start in range(0, len(code), max_lines)]


def unified_rows(files: list[FileDiff]) -> list[DiffLine]:
    """All lines in order; file headers only when there is more than one file."""
    rows: list[DiffLine] = []
    for diff in files:
        if len(files) > 1:
            rows.append(DiffLine("file", f"{diff.path}  +{diff.additions} -{diff.deletions}", path=diff.path))
        rows.extend(diff.lines)
    return rows


def split_rows(files: list[FileDiff]) -> list[SplitRow]:
    """Side by side: context on both sides; each run of removals faces the additions that
    follow it (one pair per row, the shorter side padded)."""
    rows: list[SplitRow] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []

    def flush() -> None:
        rows.extend(zip_longest(removed, added))
        removed.clear()
        added.clear()

    for line in unified_rows(files):
        if line.kind == "removed":
            if added:  # a removal after additions starts a new change block
                flush()
            removed.append(line)
        elif line.kind == "added":
            added.append(line)
        else:
            flush()
            rows.append((line, line))
    flush()
    return rows
