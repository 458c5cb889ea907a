"""Locating hunks in a file and rewriting its lines: pure, and safer than Codex.

A file is kept as lines with their own endings (``\\r\\n``, ``\\r`` or ``\\n``) and its
BOM, so every line the patch does not touch is written back byte for byte. Lines the
patch writes take the file's most common ending, and a final line without an ending
keeps lacking one only while the patch leaves it last and untouched.

Old lines (context and removed) are found with Codex's passes in Codex's order: exact,
ignoring trailing whitespace, ignoring surrounding whitespace, then with Unicode
punctuation normalised. Unlike Codex a hunk that fits two places is refused, not
guessed. Search is indexed (line key -> line numbers, built lazily per pass) so a
2,000-hunk patch over a 100,000-line file stays linear-ish.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import compress

from app.tools.text.patch_parse import Hunk, HunkLine, PatchError, quote

_EOL = re.compile(r"(\r\n|\r|\n)")
_BOM = "\ufeff"

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _normalised(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


# Codex's matching passes, loosest last; ``None`` is the exact pass (no key function).
_PASSES: tuple[Callable[[str], str] | None, ...] = (None, str.rstrip, str.strip, _normalised)


@dataclass
class FileText:
    """A decoded text file; ``endings[i]`` is ``""`` only for a last line without one."""

    bom: bool
    texts: list[str]
    endings: list[str]

    @classmethod
    def decode(cls, data: bytes) -> FileText:
        # surrogateescape: bytes that are not UTF-8 survive the round trip untouched.
        text = data.decode("utf-8", "surrogateescape")
        bom = text.startswith(_BOM)
        if bom:
            text = text[1:]
        if "\r" in text:
            parts = _EOL.split(text)
            texts, endings = parts[0::2], parts[1::2]
        else:  # the common case, several times faster than the regex
            texts = text.split("\n")
            endings = ["\n"] * (len(texts) - 1)
        if texts[-1]:
            endings.append("")
        else:
            texts.pop()
        return cls(bom, texts, endings)

    def encode(self) -> bytes:
        parts = [""] * (2 * len(self.texts))
        parts[0::2] = self.texts  # interleaving by slices keeps the loop in C
        parts[1::2] = self.endings
        return ((_BOM if self.bom else "") + "".join(parts)).encode("utf-8", "surrogateescape")

    def usual_ending(self) -> str:
        """The most common line ending (the first seen wins a tie); ``\\n`` if none."""
        counts = {ending: self.endings.count(ending) for ending in ("\n", "\r\n", "\r")}
        most = max(counts.values())
        if not most:
            return "\n"
        return min((ending for ending, count in counts.items() if count == most), key=self.endings.index)


class _PassIndex:
    """One matching pass over a file: each line's key, how often each key occurs, and
    where the anchor keys occur. A pattern is found by walking the occurrences of its
    rarest line (its anchor); indexing only anchors keeps the work in C (``Counter``,
    ``compress``) instead of a Python loop over every line of a big file."""

    def __init__(
        self, texts: list[str], key: Callable[[str], str] | None, patterns: Iterable[list[str]]
    ) -> None:
        self.key = key
        self.keys = texts if key is None else [key(text) for text in texts]
        self.counts = Counter(self.keys)
        anchors = {self._anchor(self._keyed(pattern))[1] for pattern in patterns if pattern}
        self.where: dict[str, list[int]] = {anchor: [] for anchor in anchors}
        for at in compress(range(len(self.keys)), map(self.where.__contains__, self.keys)):
            self.where[self.keys[at]].append(at)

    def _keyed(self, pattern: Sequence[str]) -> list[str]:
        return list(pattern) if self.key is None else [self.key(line) for line in pattern]

    def _anchor(self, wanted: list[str]) -> tuple[int, str]:
        """(offset in the pattern, key) of the pattern's rarest line."""
        counts = list(map(self.counts.__getitem__, wanted))  # a Counter gives 0 when missing
        offset = counts.index(min(counts))
        return offset, wanted[offset]

    def _positions(self, line_key: str) -> list[int]:
        """Where a key occurs; keys not known up front (diagnostics) cost one scan."""
        if line_key not in self.where:
            self.where[line_key] = list(compress(range(len(self.keys)), map(line_key.__eq__, self.keys)))
        return self.where[line_key]

    def matches(self, pattern: Sequence[str], start: int, limit: int) -> list[int]:
        """Up to ``limit`` positions >= ``start`` where ``pattern`` (raw lines) fits, ascending."""
        wanted = self._keyed(pattern)
        offset, anchor = self._anchor(wanted)
        if not self.counts[anchor]:
            return []
        anchors = self._positions(anchor)
        found: list[int] = []
        size, total = len(wanted), len(self.keys)
        for index in range(bisect_left(anchors, start + offset), len(anchors)):
            at = anchors[index] - offset
            if at + size > total:
                break
            if self.keys[at : at + size] == wanted:
                found.append(at)
                if len(found) == limit:
                    break
        return found

    def fits_at(self, pattern: Sequence[str], at: int) -> bool:
        wanted = self._keyed(pattern)
        return at >= 0 and self.keys[at : at + len(wanted)] == wanted


class LineMatcher:
    """Finds line sequences in one file, trying the passes in order. ``patterns`` are
    the sequences it will mostly be asked for (the hunks' old lines, each @@ line), so
    each pass indexes their anchors in one sweep."""

    def __init__(self, texts: list[str], patterns: list[list[str]]) -> None:
        self._texts = texts
        self._patterns = patterns
        self._passes: list[_PassIndex | None] = [None] * len(_PASSES)

    def _pass(self, number: int) -> _PassIndex:
        index = self._passes[number]
        if index is None:
            index = self._passes[number] = _PassIndex(self._texts, _PASSES[number], self._patterns)
        return index

    def search(self, pattern: Sequence[str], start: int, limit: int) -> tuple[int, list[int]]:
        """(pass number, positions) of the first pass with a match at or after ``start``;
        (-1, []) when no pass matches."""
        if not pattern:
            return -1, []
        for number in range(len(_PASSES)):
            if found := self._pass(number).matches(pattern, start, limit):
                return number, found
        return -1, []

    def search_pass(self, number: int, pattern: Sequence[str], start: int) -> int | None:
        found = self._pass(number).matches(pattern, start, 1)
        return found[0] if found else None

    def at_end(self, pattern: Sequence[str], start: int) -> int | None:
        """The position of ``pattern`` as the file's last lines, if some pass fits it there."""
        at = len(self._texts) - len(pattern)
        if at < start:
            return None
        return next((at for number in range(len(_PASSES)) if self._pass(number).fits_at(pattern, at)), None)


@dataclass(frozen=True)
class Edit:
    """A located hunk: its lines apply to file lines ``start`` to ``end`` (0-based, exclusive)."""

    start: int
    end: int
    lines: tuple[HunkLine, ...]


def locate_hunks(file: FileText, hunks: Sequence[Hunk], title: str) -> list[Edit]:
    """Place every hunk, in order, each after the previous one; raise on the first misfit."""
    headers = [[hunk.header] for hunk in hunks if hunk.header is not None]
    matcher = LineMatcher(file.texts, [*headers, *(hunk.old_lines for hunk in hunks)])
    edits: list[Edit] = []
    start = 0
    for hunk in hunks:
        try:
            edit = _locate(matcher, len(file.texts), hunk, start)
        except _Misfit as misfit:
            raise PatchError(f"{title}, hunk {hunk.number}: {misfit}") from None
        edits.append(edit)
        if hunk.old_lines or hunk.header is not None:
            start = edit.end
    return edits


class _Misfit(Exception):
    """Why a hunk does not fit; ``locate_hunks`` adds the file and hunk to the message."""


def _locate(matcher: LineMatcher, total: int, hunk: Hunk, start: int) -> Edit:
    header_pass, headers = -1, []
    if hunk.header is not None:
        header_pass, headers = matcher.search([hunk.header], start, 2)
        if not headers:
            raise _Misfit(
                f"@@ line not found: {quote(hunk.header)}; use a line that exists after the previous hunk"
            )
    if not hunk.old_lines:
        # Codex appends a pure addition at the end; under an @@ line it goes right after it.
        if hunk.header is None or hunk.end_of_file:
            return Edit(total, total, hunk.lines)
        if len(headers) > 1:
            raise _ambiguous(headers, f"@@ line {quote(hunk.header)}", "use a more specific @@ line")
        return Edit(headers[0] + 1, headers[0] + 1, hunk.lines)
    # The @@ line itself may be the first context line, so search from it, not after it.
    search_from = headers[0] if headers else start
    placed = hunk
    at = _find(matcher, placed, search_from)
    if at is None and hunk.lines[-1].op == " " and not hunk.lines[-1].text.strip():
        # Codex's retry: a trailing blank context line is often just a separator.
        placed = replace(hunk, lines=_without_trailing_blank_context(hunk.lines))
        at = _find(matcher, placed, search_from) if placed.old_lines else None
    if at is None:
        raise _Misfit(_explain_missing(matcher, hunk.old_lines, search_from))
    if len(headers) > 1:
        _refuse_second_header(matcher, header_pass, placed, headers[0], at)
    return Edit(at, at + len(placed.old_lines), placed.lines)


def _find(matcher: LineMatcher, hunk: Hunk, start: int) -> int | None:
    if hunk.end_of_file and (at := matcher.at_end(hunk.old_lines, start)) is not None:
        return at
    _, found = matcher.search(hunk.old_lines, start, 1 if hunk.header is not None else 2)
    if len(found) > 1:
        raise _ambiguous(found, "the hunk")
    return found[0] if found else None


def _refuse_second_header(matcher: LineMatcher, header_pass: int, hunk: Hunk, first: int, at: int) -> None:
    """The @@ line names the place only if no later copy of it is followed by the hunk too."""
    header = hunk.header or ""
    second = matcher.search_pass(header_pass, [header], max(first + 1, at + 1))
    if second is not None and matcher.search(hunk.old_lines, second, 1)[1]:
        raise _ambiguous(
            [first, second],
            f"@@ line {quote(header)}",
            "the hunk fits after both; add more context or a more specific @@ line",
        )


def _ambiguous(positions: list[int], what: str, fix: str = "add more context or an @@ line") -> _Misfit:
    return _Misfit(f"ambiguous: {what} matches at lines {positions[0] + 1} and {positions[1] + 1}; {fix}")


def _without_trailing_blank_context(lines: tuple[HunkLine, ...]) -> tuple[HunkLine, ...]:
    end = len(lines)
    while end and lines[end - 1].op == " " and not lines[end - 1].text.strip():
        end -= 1
    return lines[:end]


def _explain_missing(matcher: LineMatcher, old: list[str], start: int) -> str:
    """Turn "not found" into something the model can act on (runs only on failure)."""
    for line in old:
        if line.strip() and matcher.search([line], 0, 1)[0] < 0:
            return f"context not found: {quote(line)}; re-read the file and copy the lines exactly"
    _, earlier = matcher.search(old, 0, 1)
    if earlier and earlier[0] < start:
        return (
            f"context found only at line {earlier[0] + 1}, before line {start + 1} where this hunk may start "
            "(after the previous hunk or its @@ line); order hunks as they appear in the file"
        )
    return (
        f"context not found: the lines from {quote(old[0])} on do not appear together in the file; "
        "re-read the file and copy them exactly"
    )


def apply_edits(file: FileText, edits: Sequence[Edit]) -> FileText:
    """The file with every edit applied; ``edits`` come from ``locate_hunks``."""
    ending = file.usual_ending()
    old_texts, old_endings = file.texts, file.endings
    texts: list[str] = []
    endings: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda edit: edit.start):
        texts += old_texts[cursor : edit.start]
        endings += old_endings[cursor : edit.start]
        cursor = edit.start
        for op, text in edit.lines:
            if op == "+":
                texts.append(text)
                endings.append(ending)
                continue
            if op == " ":
                texts.append(old_texts[cursor])
                endings.append(old_endings[cursor])
            cursor += 1
    texts += old_texts[cursor:]
    endings += old_endings[cursor:]
    if "" in endings[:-1]:
        # The old unterminated last line now has lines after it.
        endings[endings.index("")] = ending
    return FileText(file.bom, texts, endings)
