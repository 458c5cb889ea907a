"""Moving a model's line to the file's indentation.

A model often remembers a block one level too shallow or too deep, or with spaces where
the file has tabs. Given a line the model wrote and one pair of lines that correspond
(the model's version of a line and the file's), `Indentation.shift` gives the model's
line the indentation it would have had, had the model remembered that pair right.
Indentation is measured in columns, a tab counting `tab_width` of them, so that a
change of style (spaces in the model's text, tabs in the file) maps level to level.
`Reindent` applies that to the lines a change adds (the edit tool's fitted changes and
the patch tool's hunks alike), after deciding whether they need it at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from math import gcd

DEFAULT_TAB_WIDTH = 4
"""The columns a tab stands for when no text shows a spaces unit."""
SAMPLED_LINES = 2000
"""At most this many of the file's lines are read to learn its indentation style."""


def indent_of(line: str) -> str:
    """The leading spaces and tabs of `line`."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def _uses_tabs(indents: Iterable[str]) -> bool | None:
    """Whether most of `indents` (non-empty ones) start with a tab; None if all are empty."""
    votes = Counter(indent[0] == "\t" for indent in indents if indent)
    if not votes:
        return None
    return votes[True] > votes[False]


def _space_unit(indents: Iterable[str]) -> int | None:
    """The spaces one level stands for: the gcd of the space-only indentation widths."""
    unit = 0
    for indent in indents:
        if indent and "\t" not in indent:
            unit = gcd(unit, len(indent))
    return unit if 2 <= unit <= 8 else None


@dataclass(frozen=True)
class Indentation:
    """The file's indentation style: `tabs` (else spaces), and the columns of a tab."""

    tabs: bool
    tab_width: int

    @classmethod
    def learn(
        cls, model_lines: Sequence[str], matched_lines: Sequence[str], file_lines: Callable[[], Sequence[str]]
    ) -> Indentation:
        """The style of the file, from the matched lines or else the first SAMPLED_LINES
        of `file_lines()`; the tab width from whichever side indents with spaces (only
        needed, and so only looked for, when one side has tabs)."""
        sample: list[str] = []

        def file_indents() -> list[str]:
            if not sample:
                sample.extend(indent_of(line) for line in file_lines()[:SAMPLED_LINES] if line.strip())
            return sample

        tabs = _uses_tabs(indent_of(line) for line in matched_lines if line.strip())
        if tabs is None:
            tabs = bool(_uses_tabs(file_indents()))
        model = [indent_of(line) for line in model_lines if line.strip()]
        # The side with spaces says how many make one tab of the other side; with no
        # tabs on either side the width is never used.
        if tabs:
            width = _space_unit(model)
        elif any("\t" in indent for indent in model):
            width = _space_unit(file_indents())
        else:
            width = None
        return cls(tabs, width or DEFAULT_TAB_WIDTH)

    def columns(self, indent: str) -> int:
        return indent.count("\t") * self.tab_width + indent.count(" ")

    def render(self, columns: int) -> str:
        if self.tabs:
            return "\t" * (columns // self.tab_width) + " " * (columns % self.tab_width)
        return " " * columns

    def shift(self, line: str, model: str, file: str) -> str:
        """`line` moved by the offset between `model`'s indentation and `file`'s (the
        model's and the file's version of one line); a blank line stays blank, and a
        line already indented as the pair is, keeps its own characters."""
        if not line.strip():
            return line
        own, model_indent, file_indent = indent_of(line), indent_of(model), indent_of(file)
        if model_indent == file_indent:
            return line
        if own == model_indent:
            return file_indent + line[len(own) :]
        target = self.columns(own) + self.columns(file_indent) - self.columns(model_indent)
        return self.render(max(0, target)) + line[len(own) :]

    def describe(self, offsets: set[int], converted: bool) -> str:
        """The note telling the model how its lines were moved: by one offset (in the
        file's unit), into the file's style, or line by line."""
        if converted:
            unit = "tabs" if self.tabs else f"{self.tab_width}-space indentation"
            return f"matched with different indentation: re-indented the replacement to the file's {unit}"
        if len(offsets) != 1:
            return (
                "matched with different indentation: re-indented each new line like the line "
                "of the file it replaces"
            )
        (offset,) = offsets
        if self.tabs and offset % self.tab_width == 0:
            count, unit = offset // self.tab_width, "tab"
        else:
            count, unit = offset, "space"
        return f"matched with different indentation: re-indented the replacement by {count} {unit}{'s' * (abs(count) != 1)}"


class Reindent:
    """Moves a change's added lines to the file's indentation, and says how it did.

    `old_lines` and `new_lines` are the model's (before and after), `found` the file's
    lines that matched, `pairs` which old line stands for which found line, `sample`
    gives the file's lines (only asked for when the style must be learned). Nothing
    moves when every paired line has the file's indentation, or when newString already
    sits at the file's level while oldString did not (see `_already_at_file_level`)."""

    def __init__(
        self,
        old_lines: Sequence[str],
        new_lines: Sequence[str],
        found: Sequence[str],
        pairs: Mapping[int, int],
        sample: Callable[[], Sequence[str]],
    ) -> None:
        self.old_lines, self.found, self.pairs = old_lines, found, pairs
        self.offsets: set[int] = set()
        self.converted = False
        shifted = [
            i
            for i, at in pairs.items()
            if old_lines[i].strip() and indent_of(old_lines[i]) != indent_of(found[at])
        ]
        self.style: Indentation | None = None
        if shifted:
            style = Indentation.learn([*old_lines, *new_lines], found, sample)
            if not _already_at_file_level(style, old_lines, new_lines, found, pairs):
                self.style = style

    def shift(self, line: str, anchor: int | None) -> str:
        """`line` (of newString) moved like old line `anchor` and its pair (None: as is)."""
        if self.style is None or anchor is None or not line.strip():
            return line
        model, file = self.old_lines[anchor], self.found[self.pairs[anchor]]
        if not model.strip() or not file.strip():
            return line
        shifted = self.style.shift(line, model, file)
        if shifted != line:
            model_indent, file_indent = indent_of(model), indent_of(file)
            self.offsets.add(self.style.columns(file_indent) - self.style.columns(model_indent))
            self.converted |= bool(model_indent and file_indent) and (
                ("\t" in model_indent) != ("\t" in file_indent)
            )
        return shifted

    def notes(self) -> list[str]:
        if self.style is None or not (self.offsets or self.converted):
            return []
        return [self.style.describe(self.offsets, self.converted)]


def _already_at_file_level(
    style: Indentation,
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    found: Sequence[str],
    pairs: Mapping[int, int],
) -> bool:
    """Whether the model wrote newString for the file as it is (so moving it by
    oldString's offset would move it twice) although oldString was off.

    The evidence is where newString replaces lines: a replacement that starts with the
    very indentation the file gives the line it replaces (same characters), where
    oldString had that line otherwise, was written in the file's frame; one that starts where oldString had it
    (or anywhere else), in the model's. Every replacement must agree. Without any,
    newString's outermost line decides: at the matched lines' outermost level while
    oldString's was not."""
    votes = set()
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_at = next((i for i in range(i1, i2) if i in pairs and old_lines[i].strip()), None)
        new_at = next((j for j in range(j1, j2) if new_lines[j].strip()), None)
        if tag != "replace" or old_at is None or new_at is None:
            continue
        model, file = indent_of(old_lines[old_at]), indent_of(found[pairs[old_at]])
        if model != file:
            votes.add(indent_of(new_lines[new_at]) == file)
    if votes:
        return votes == {True}

    def outermost(lines: Sequence[str]) -> int | None:
        columns = [style.columns(indent_of(line)) for line in lines if line.strip()]
        return min(columns) if columns else None

    return outermost(new_lines) == outermost(found) != outermost(old_lines)
