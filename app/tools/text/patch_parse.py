"""Grammar of the patch format (docs/specs/002-patch.md): text in, records out, nothing touched.

Lenient exactly where Codex's ``apply_patch`` is, because models are trained on it: a
heredoc wrapper (``apply_patch <<'EOF'`` ... ``EOF``, or ``cd <dir> && apply_patch <<'EOF'``,
whose paths start in <dir>), markers padded with whitespace, a first hunk without ``@@``,
a blank line inside a hunk read as an empty context line.
Where spec 002's grammar allows more than Codex does, so do we: an Update File with a
Move to and no hunks (a plain rename), and an empty ``@@ <line>`` hunk right before
another ``@@`` (the nested form OpenAI's apply_patch instructions teach). Strict
everywhere else, and every failure is one ``PatchError`` line that says where
(patch line, file, hunk) and what to send instead.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, count
from operator import itemgetter, not_
from typing import ClassVar, Literal, NamedTuple

from app.core.errors import ToolError

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"

_HEREDOC_OPEN = re.compile(r"(?P<command>.*?)<<\s*(['\"]?)(?P<tag>\w+)\2")
# The commands Codex takes before a heredoc: apply_patch alone, or after one `cd <dir> &&`.
_APPLY_COMMAND = re.compile(
    r"(?:cd\s+(?:'(?P<single>[^']+)'|\"(?P<double>[^\"]+)\"|(?P<word>[^\s'\"&|;]+))\s*&&\s*)?"
    r"(?:apply_patch|applypatch)"
)
_UNIFIED_RANGE = re.compile(r"-\d+(,\d+)? \+\d+(,\d+)? @@")
_HUNK_OPS = " -+"


class PatchError(ToolError):
    """The patch is malformed or does not fit the files; nothing was changed."""


def quote(text: str) -> str:
    """A line of user text inside a one-line message: quoted, escaped, clipped."""
    return json.dumps(text if len(text) <= 80 else text[:77] + "...", ensure_ascii=False)


HunkOp = Literal[" ", "-", "+"]

# A body line's first character as its op; an empty line is context (parsing admits no other).
_OPS: dict[str, HunkOp] = {"": " ", " ": " ", "-": "-", "+": "+"}


class HunkLine(NamedTuple):
    op: HunkOp
    text: str


@dataclass(frozen=True)  # no slots: cached_property keeps its values in __dict__
class Hunk:
    """One ``@@`` block. ``header`` is the optional ``@@ <line>`` anchor; a hunk with an
    empty ``body`` only positions the next one (nested ``@@`` lines).

    ``body`` holds the hunk's lines as the patch wrote them: each is ``""`` (a blank
    context line) or starts with its op. Kept raw, a 2,000-hunk patch is parsed without
    building an object per line; ``lines`` gives them as ``HunkLine``s."""

    number: int
    header: str | None
    body: tuple[str, ...]
    end_of_file: bool

    # Made once (placing and applying the hunk read them several times).
    @cached_property
    def old_lines(self) -> list[str]:
        """What must already be in the file: context and removed lines, in order."""
        return [line[1:] for line in self.body if line[:1] != "+"]

    @cached_property
    def new_lines(self) -> list[str]:
        """What the file holds there afterwards: context and added lines, in order."""
        return [line[1:] for line in self.body if line[:1] != "-"]

    @property
    def lines(self) -> tuple[HunkLine, ...]:
        return tuple(HunkLine(_OPS[line[:1]], line[1:]) for line in self.body)


@dataclass(frozen=True, slots=True)
class _Titled:
    """A file section's name in messages, e.g. ``Update File src/a.py``."""

    verb: ClassVar[str]
    path: str

    @property
    def title(self) -> str:
        return f"{self.verb} {self.path}"


@dataclass(frozen=True, slots=True)
class AddFile(_Titled):
    verb: ClassVar[str] = "Add File"
    path: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeleteFile(_Titled):
    verb: ClassVar[str] = "Delete File"
    path: str


@dataclass(frozen=True, slots=True)
class UpdateFile(_Titled):
    verb: ClassVar[str] = "Update File"
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]


Section = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class Patch:
    sections: tuple[Section, ...]
    workdir: str | None = None
    """The folder of a ``cd <dir> && apply_patch <<EOF`` wrapper: the paths start there."""


def parse_patch(text: str) -> Patch:
    """Parse a whole patch; raises ``PatchError`` (and nothing else) on any bad input."""
    _refuse_surrogates(text)
    lines = _split_lines(text)
    first, stop, workdir = _envelope(lines)
    sections = _Parser(lines, first, stop).sections()
    if not sections:
        raise PatchError(
            "the patch has no file sections; put *** Add File:, *** Update File: or "
            "*** Delete File: sections between *** Begin Patch and *** End Patch"
        )
    return Patch(tuple(sections), workdir)


def _refuse_surrogates(text: str) -> None:
    """A lone surrogate cannot be written to a file; only it makes UTF-8 encoding fail."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as bad:
        line = text.count("\n", 0, bad.start) + 1
        raise PatchError(
            f"line {line}: the patch contains a lone UTF-16 surrogate; send valid Unicode text"
        ) from None


def _split_lines(text: str) -> list[str]:
    """The patch's lines without "\\n" or "\\r\\n" (a CRLF patch reads like an LF one)."""
    if "\r" not in text:
        return text.split("\n")
    lines = text.replace("\r\n", "\n").split("\n")
    lines[-1] = lines[-1].removesuffix("\r")
    return lines


def _envelope(lines: list[str]) -> tuple[int, int, str | None]:
    """Index range of the lines between the Begin and End markers (heredoc removed), and
    the folder a heredoc wrapper's ``cd`` names."""
    start, stop = _trim_blank(lines, 0, len(lines))
    if start == stop:
        raise PatchError("the patch is empty; send *** Begin Patch, the file sections, then *** End Patch")
    workdir = None
    opener = _HEREDOC_OPEN.fullmatch(lines[start].strip())
    if opener and stop - start >= 2 and lines[stop - 1].strip() == opener["tag"]:
        workdir = _heredoc_workdir(opener["command"].strip(), start)
        start, stop = _trim_blank(lines, start + 1, stop - 1)
    if start == stop or lines[start].strip() != BEGIN:
        raise PatchError(
            f"line {start + 1}: the patch must start with '{BEGIN}'; wrap the file sections in it"
        )
    if stop - start < 2 or lines[stop - 1].strip() != END:
        raise PatchError(f"line {stop}: the patch must end with '{END}'; add it after the last file section")
    return start + 1, stop - 1, workdir


def _heredoc_workdir(command: str, at: int) -> str | None:
    """The folder of a ``cd <dir> && apply_patch`` heredoc wrapper (None without ``cd``).
    Any other command is refused, not ignored: there is no shell to run it, and a dropped
    ``cd`` would put the changes in another folder's files of the same names."""
    if not command:
        return None
    wrapper = _APPLY_COMMAND.fullmatch(command)
    if wrapper is None:
        raise PatchError(
            f"line {at + 1}: the heredoc wrapper runs {quote(command)}, which the patch tool cannot run; "
            "send the patch alone, or wrapped as apply_patch <<'EOF' or cd <folder> && apply_patch <<'EOF'"
        )
    return wrapper["single"] or wrapper["double"] or wrapper["word"]


def _trim_blank(lines: list[str], start: int, stop: int) -> tuple[int, int]:
    while start < stop and not lines[start].strip():
        start += 1
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    return start, stop


class _Parser:
    """A cursor over the body lines; ``pos`` is an index into the whole patch."""

    def __init__(self, lines: list[str], start: int, stop: int) -> None:
        self.lines = lines
        self.pos = start
        self.stop = stop
        self.breaks = _breaks(lines)

    def sections(self) -> list[Section]:
        sections: list[Section] = []
        while self.pos < self.stop:
            marker = self.lines[self.pos].strip()
            self.pos += 1
            if not marker:
                continue
            if marker.startswith(ADD):
                sections.append(AddFile(self._path(marker, ADD), self._added_lines()))
            elif marker.startswith(DELETE):
                sections.append(DeleteFile(self._path(marker, DELETE)))
            elif marker.startswith(UPDATE):
                sections.append(self._update(self._path(marker, UPDATE)))
            elif marker[0] in _HUNK_OPS and sections and not isinstance(sections[-1], UpdateFile):
                rule = (
                    "a Delete File section has no lines"
                    if isinstance(sections[-1], DeleteFile)
                    else "a line not starting with '+' ends an added file (write an empty line as '+' alone)"
                )
                raise PatchError(f"line {self.pos}: {quote(marker)} is outside {sections[-1].title}: {rule}")
            else:
                raise PatchError(
                    f"line {self.pos}: unknown header {quote(marker)}; a file section starts with "
                    f"'{ADD} <path>', '{UPDATE} <path>' or '{DELETE} <path>'"
                )
        return sections

    def _path(self, marker: str, prefix: str) -> str:
        if path := marker[len(prefix) :].strip():
            return path
        raise PatchError(f"line {self.pos}: '{prefix}' needs a path; write '{prefix} <relative path>'")

    def _added_lines(self) -> tuple[str, ...]:
        added = []
        while self.pos < self.stop and self.lines[self.pos].startswith("+"):
            added.append(self.lines[self.pos][1:])
            self.pos += 1
        return tuple(added)

    def _update(self, path: str) -> UpdateFile:
        title = f"{UpdateFile.verb} {path}"
        header_line = self.pos
        move_to = None
        if self.pos < self.stop and self.lines[self.pos].strip().startswith(MOVE):
            self.pos += 1
            move_to = self._path(self.lines[self.pos - 1].strip(), MOVE)
        hunks: list[Hunk] = []
        while self.pos < self.stop:
            line = self.lines[self.pos]
            stripped = line.strip()
            if not stripped:
                self.pos += 1
            elif stripped.startswith("***"):
                break
            else:
                hunks.append(self._hunk(title, len(hunks) + 1))
        if not hunks and move_to is None:  # with a Move to, no hunks is a plain rename
            raise PatchError(
                f"{title} (line {header_line}): no hunks; add '@@' followed by ' ' context, "
                "'-' removed and '+' added lines (or a '*** Move to:' line to only rename it)"
            )
        return UpdateFile(path, move_to, tuple(hunks))

    def _hunk(self, title: str, number: int) -> Hunk:
        at = self.pos
        first = self.lines[at]
        header = None
        if first.strip().startswith("@@"):
            header = first.strip()[2:].strip() or None
            if header and _UNIFIED_RANGE.match(header):
                raise PatchError(
                    f"{_where(title, number, at)}: {quote(first.strip())} is a unified-diff range; this "
                    "format takes '@@' or '@@ <a line of the file>' and no line numbers"
                )
            self.pos += 1
        elif number > 1 or first[0] not in _HUNK_OPS:
            raise PatchError(
                f"{_where(title, number, at)}: unexpected line {quote(first)}; hunk lines start with "
                "' ', '-' or '+', and each hunk after the first starts with '@@'"
            )
        body, end_of_file = self._body()
        if not body:
            self._check_positioning(title, number, at, header, end_of_file)
        return Hunk(number, header, body, end_of_file)

    def _check_positioning(
        self, title: str, number: int, at: int, header: str | None, end_of_file: bool
    ) -> None:
        """An empty hunk is only an ``@@ <line>`` right before another ``@@``: the nested
        form of OpenAI's apply_patch instructions (``@@ class A`` then ``@@ def m():``),
        which moves the search past that line. Anything else is refused, saying why."""
        following = self.lines[self.pos].strip() if self.pos < self.stop else ""
        if header is not None and not end_of_file and following.startswith("@@"):
            return
        if following and not following.startswith(("***", "@@")):
            raise PatchError(
                f"{_where(title, number, self.pos)}: unexpected line {quote(self.lines[self.pos])}; "
                "hunk lines start with ' ' (context), '-' (removed) or '+' (added)"
            )
        raise PatchError(
            f"{_where(title, number, at)}: the hunk is empty; add ' ', '-' or '+' lines after '@@'"
        )

    def _body(self) -> tuple[tuple[str, ...], bool]:
        """The hunk lines from ``pos`` up to the first line that is not one, and whether
        *** End of File ended them. Only the breaks are looked at one by one."""
        lines, start, stop = self.lines, self.pos, self.stop
        blanks = []
        end_of_file = False
        while True:
            end = min(self.breaks[bisect_left(self.breaks, self.pos)], stop)
            stripped = lines[end].strip() if end < stop else None
            if stripped == "":  # whitespace only: blank context
                blanks.append(end)
                self.pos = end + 1
                continue
            self.pos = end
            if stripped == END_OF_FILE:
                end_of_file = True
                self.pos += 1
            break
        body = lines[start:end]
        for at in blanks:
            body[at - start] = ""
        return tuple(body), end_of_file


def _where(title: str, number: int, at: int) -> str:
    """A hunk in messages: ``Update File a.py, hunk 2 (line 14)``."""
    return f"{title}, hunk {number} (line {at + 1})"


def _breaks(lines: list[str]) -> list[int]:
    """Indexes of the lines whose first character does not continue a hunk (markers,
    anything unprefixed, whitespace-only lines such as "\t"), then ``len(lines)``.
    Found in one C-level sweep, so a hunk's end is found by bisecting, not line by line;
    an empty line is blank context and no break."""
    firsts = map(itemgetter(slice(1)), lines)
    breaks = list(compress(count(), map(not_, map(_HUNK_OPS.__contains__, firsts))))
    breaks.append(len(lines))
    return breaks
