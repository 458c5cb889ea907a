"""Locating hunks in a file and rewriting its lines: pure, and safer than Codex.

A file is kept as lines with their own endings (``\\r\\n``, ``\\r`` or ``\\n``) and its
BOM, so every line the patch does not touch is written back byte for byte. Lines the
patch writes take the file's most common ending, and a file without a final newline
still has none afterwards, whatever the patch does at its end. A file whose every line
ends with ``\\n`` (most files) keeps no per-line endings at all.

Old lines (context and removed) are found with Codex's passes in Codex's order: exact,
ignoring trailing whitespace, ignoring surrounding whitespace, then with Unicode
punctuation and spaces normalised (and, beyond Codex, composed characters: NFC). Unlike Codex a hunk that fits two places is refused, not
guessed. Search is indexed (line key -> line numbers, built lazily per pass) so a
2,000-hunk patch over a 100,000-line file stays linear-ish.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, compress, count
from operator import add, itemgetter

from app.core.diff import Region
from app.tools.text.indentation import Reindent
from app.tools.text.patch_parse import Hunk, PatchError, quote
from app.tools.text.punctuation import plain_punctuation

_EOL = re.compile(r"(\r\n|\r|\n)")
_BOM = "\ufeff"


def _normalised(line: str) -> str:
    # NFC too: the same accented letter, composed in one text and decomposed in the other.
    return plain_punctuation(unicodedata.normalize("NFC", line.strip()))


# Codex's matching passes, loosest last; ``None`` is the exact pass (no key function).
_PASSES: tuple[Callable[[str], str] | None, ...] = (None, str.rstrip, str.strip, _normalised)


@dataclass(frozen=True, slots=True)
class FileText:
    """A decoded text file. ``texts`` are its lines without endings (what hunks are
    matched against); ``lines`` are what is written back: each text with its own ending
    (none for a last line without one), or, when ``plain`` (every line ends with "\\n"),
    the texts themselves, joined with "\\n". ``ending`` is the most common ending (the
    first seen wins a tie; "\\n" if none), for the lines a patch adds.
    ``numbered_like_diffs`` says whether ``app.core.diff`` (which splits on "\\n" only and
    keeps a BOM in the first line) numbers the lines as we do: no BOM, no lone "\\r"."""

    bom: bool
    texts: list[str]
    lines: list[str]
    ending: str
    plain: bool
    numbered_like_diffs: bool

    @classmethod
    def decode(cls, data: bytes) -> FileText:
        # surrogateescape: bytes that are not UTF-8 survive the round trip untouched.
        text = data.decode("utf-8", "surrogateescape")
        bom = text.startswith(_BOM)
        if bom:
            text = text[1:]
        if "\r" not in text:  # the common case: no regex, no per-line endings
            texts = text.split("\n")
            if not texts[-1]:
                texts.pop()
                return cls(bom, texts, texts, "\n", plain=True, numbered_like_diffs=not bom)
            endings = ["\n"] * (len(texts) - 1) + [""]
        else:
            parts = _EOL.split(text)
            texts, endings = parts[0::2], parts[1::2]
            if texts[-1]:
                endings.append("")
            else:
                texts.pop()
        lines = list(map(add, texts, endings))
        return cls(
            bom,
            texts,
            lines,
            _usual(endings),
            plain=False,
            numbered_like_diffs=not bom and "\r" not in endings,
        )

    def render(self, lines: list[str]) -> bytes:
        """``lines`` (in the form of ``self.lines``) as this file's bytes."""
        text = "\n".join(lines) + "\n" if self.plain and lines else "".join(lines)
        return ((_BOM if self.bom else "") + text).encode("utf-8", "surrogateescape")


def _usual(endings: list[str]) -> str:
    """The most common line ending; the first seen wins a tie; "\\n" if there is none."""
    counts = {ending: endings.count(ending) for ending in ("\n", "\r\n", "\r")}
    most = max(counts.values())
    if not most:
        return "\n"
    return min((ending for ending, count in counts.items() if count == most), key=endings.index)


class _PassIndex:
    """One matching pass over a file: each line's key, and how often and where each
    pattern line occurs. A pattern is found from its rarest line (its anchor): an anchor
    that occurs once in the whole file names the only place the pattern can be.

    Only lines equal to some pattern line matter, so one C-level sweep (a set lookup per
    line) picks them out with their positions, and the rest works on those hits: a big
    file costs no Python step per line."""

    def __init__(self, texts: list[str], key: Callable[[str], str] | None, patterns: list[list[str]]) -> None:
        self.key = key
        self.keys = texts if key is None else list(map(key, texts))
        self.known = set(chain.from_iterable(map(self._keyed, patterns)))
        self.hits = list(compress(count(), map(self.known.__contains__, self.keys)))
        self.hit_keys = list(map(self.keys.__getitem__, self.hits))
        self.counts = Counter(self.hit_keys)  # 0 for a known line the file lacks
        self.last = dict(zip(self.hit_keys, self.hits, strict=True))  # the only position of a line seen once
        self.where: dict[str, list[int]] | None = None  # positions of repeated lines, on first need

    def _keyed(self, pattern: list[str]) -> list[str]:
        return pattern if self.key is None else list(map(self.key, pattern))

    def _anchor(self, wanted: list[str]) -> tuple[int, str]:
        """(offset in the pattern, key) of the pattern's rarest line (the first of them)."""
        if not self.known.issuperset(wanted):  # counts must be true before choosing
            for line_key in set(wanted) - self.known:
                self._learn(line_key)
        anchor = min(wanted, key=self.counts.__getitem__)
        return wanted.index(anchor), anchor

    def _learn(self, line_key: str) -> None:
        """Count and place a line that was not among the patterns given up front (one scan)."""
        positions = list(compress(count(), map(line_key.__eq__, self.keys)))
        self.known.add(line_key)
        self.counts[line_key] = len(positions)
        if positions:
            self.last[line_key] = positions[-1]
            self._repeated()[line_key] = positions

    def _repeated(self) -> dict[str, list[int]]:
        """Where every line that occurs more than once does, collected in one sweep over the
        hits the first time a repeated anchor is met."""
        if self.where is None:
            repeated = {line_key for line_key, seen in self.counts.items() if seen > 1}
            self.where = {line_key: [] for line_key in repeated}
            for at in compress(self.hits, map(repeated.__contains__, self.hit_keys)):
                self.where[self.keys[at]].append(at)
        return self.where

    def matches(self, pattern: list[str], start: int, limit: int) -> list[int]:
        """Up to ``limit`` positions >= ``start`` where ``pattern`` (raw lines) fits, ascending."""
        wanted = self._keyed(pattern)
        offset, anchor = self._anchor(wanted)
        occurrences, size = self.counts[anchor], len(wanted)
        if occurrences == 1:  # the only place the pattern can be
            at = self.last[anchor] - offset
            return [at] if at >= start and self.keys[at : at + size] == wanted else []
        found: list[int] = []
        anchors = self._repeated()[anchor] if occurrences else []
        for index in range(bisect_left(anchors, start + offset), len(anchors)):
            at = anchors[index] - offset
            if at + size > len(self.keys):
                break
            if self.keys[at : at + size] == wanted:
                found.append(at)
                if len(found) == limit:
                    break
        return found

    def fits_at(self, pattern: list[str], at: int) -> bool:
        wanted = self._keyed(pattern)
        return at >= 0 and self.keys[at : at + len(wanted)] == wanted


class LineMatcher:
    """Finds line sequences in one file, trying the passes in order. ``patterns`` are
    the sequences it will mostly be asked for (the hunks' old lines, each @@ line), so
    each pass indexes their lines in one sweep."""

    def __init__(self, texts: list[str], patterns: list[list[str]]) -> None:
        self._texts = texts
        self._patterns = patterns
        self._passes: list[_PassIndex | None] = [None] * len(_PASSES)

    def _pass(self, number: int) -> _PassIndex:
        index = self._passes[number]
        if index is None:
            index = self._passes[number] = _PassIndex(self._texts, _PASSES[number], self._patterns)
        return index

    def search(self, pattern: list[str], start: int, limit: int) -> tuple[int, list[int]]:
        """(pass number, positions) of the first pass with a match at or after ``start``;
        (-1, []) when no pass matches."""
        if not pattern:
            return -1, []
        for number in range(len(_PASSES)):
            if found := self._pass(number).matches(pattern, start, limit):
                return number, found
        return -1, []

    def search_pass(self, number: int, pattern: list[str], start: int) -> int | None:
        found = self._pass(number).matches(pattern, start, 1)
        return found[0] if found else None

    def at_end(self, pattern: list[str], start: int) -> int | None:
        """The position of ``pattern`` as the file's last lines, if some pass fits it there."""
        at = len(self._texts) - len(pattern)
        if at < start:
            return None
        return next((at for number in range(len(_PASSES)) if self._pass(number).fits_at(pattern, at)), None)


Edit = tuple[int, int, Hunk]
"""A located hunk: (start, end, hunk): ``hunk`` (as placed: maybe less a trailing blank
line) applies to file lines ``start`` to ``end`` (0-based, exclusive)."""


def locate_hunks(file: FileText, hunks: Sequence[Hunk], title: str) -> list[Edit]:
    """Place every hunk, in order, each after the previous one; raise on the first misfit."""
    headers = [[hunk.header] for hunk in hunks if hunk.header is not None]
    matcher = LineMatcher(file.texts, [*headers, *(hunk.old_lines for hunk in hunks)])
    edits: list[Edit] = []
    start = 0
    scoped = False
    for hunk in hunks:
        try:
            edit = _locate(matcher, len(file.texts), hunk, start, scoped)
        except _Misfit as misfit:
            raise PatchError(f"{title}, hunk {hunk.number}: {misfit}") from None
        if hunk.body:
            edits.append(edit)
        if hunk.old_lines or hunk.header is not None:
            start = edit[1]
        # After an empty "@@ <line>" (positioning only), the next @@ line is the first one
        # after it: the outer line is what tells repeated inner ones apart.
        scoped = not hunk.body
    return edits


class _Misfit(Exception):
    """Why a hunk does not fit; ``locate_hunks`` adds the file and hunk to the message."""


def _locate(matcher: LineMatcher, total: int, hunk: Hunk, start: int, scoped: bool) -> Edit:
    header_pass = -1
    headers: list[int] = []
    if hunk.header is not None:
        header_pass, headers = matcher.search([hunk.header], start, 1 if scoped else 2)
        if not headers:
            raise _Misfit(
                f"@@ line not found: {quote(hunk.header)}; use a line that exists after the previous hunk"
            )
    if not hunk.old_lines:
        # Codex appends a pure addition at the end; under an @@ line it goes right after it
        # (and an empty hunk, an @@ line that only positions the next one, points there).
        if hunk.header is None or hunk.end_of_file:
            return total, total, hunk
        if len(headers) > 1:
            raise _ambiguous(headers, f"@@ line {quote(hunk.header)}", "use a more specific @@ line")
        return headers[0] + 1, headers[0] + 1, hunk
    # The @@ line itself may be the first context line, so search from it, not after it.
    search_from = headers[0] if headers else start
    placed = hunk
    at = _find(matcher, placed, search_from)
    if at is None and not hunk.old_lines[-1].strip():
        # Codex's retry: a blank last old line is often just the file's final newline.
        placed = replace(hunk, body=_without_final_blank_lines(hunk.body))
        at = _find(matcher, placed, search_from) if placed.old_lines else None
    if at is None:
        raise _Misfit(_explain_missing(matcher, hunk.old_lines, search_from))
    if len(headers) > 1:
        _refuse_second_header(matcher, header_pass, placed, headers[0], at)
    return at, at + len(placed.old_lines), placed


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


def _without_final_blank_lines(body: tuple[str, ...]) -> tuple[str, ...]:
    """The body less its blank last old line, and less its last new line when that is
    blank too, as long as the old lines end blank (Codex drops one pair; several blank
    context lines at the end are dropped here). A context line that leaves only one side
    stays on the other, as a "+" or "-" line, so the rest of the hunk means the same."""
    lines = list(body)
    while (old_at := _last_on(lines, "-")) is not None and not lines[old_at][1:].strip():
        leaving = {old_at: "-"}
        new_at = _last_on(lines, "+")
        if new_at is not None and not lines[new_at][1:].strip():
            leaving[new_at] = leaving.get(new_at, "") + "+"
        for at in sorted(leaving, reverse=True):  # from the end: an emptied line shifts none before it
            lines[at : at + 1] = _leave(lines[at], leaving[at])
    return tuple(lines)


def _last_on(lines: list[str], side: str) -> int | None:
    """Index of the last body line on ``side`` ("-": an old line, "+": a new line); a
    context line (" " or blank) is on both."""
    other = "+" if side == "-" else "-"
    return next((at for at in range(len(lines) - 1, -1, -1) if lines[at][:1] != other), None)


def _leave(line: str, sides: str) -> list[str]:
    """``line`` taken off ``sides``: itself re-prefixed for the side it stays on, or nothing."""
    op = line[:1]
    kept = "".join(side for side in (op if op in ("-", "+") else "-+") if side not in sides)
    return [kept + line[1:]] if kept else []


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


def apply_edits(file: FileText, edits: Sequence[Edit]) -> tuple[bytes, list[Region], list[str]]:
    """The file's bytes with every edit applied (``edits`` come from ``locate_hunks``),
    the old and new line ranges that hold every change (for
    ``app.core.diff.unified_diff_regions``), and notes on hunks whose added lines were
    re-indented: a hunk found by a pass that ignores indentation, written a level off
    or with spaces for the file's tabs, gets its added lines moved to the file's level
    (as the edit tool does, see ``indentation.Reindent``)."""
    old_texts, old_lines = file.texts, file.lines
    added_ending = "" if file.plain else file.ending
    lines: list[str] = []
    regions: list[Region] = []
    notes: list[str] = []
    cursor = 0
    for start, end, hunk in sorted(edits, key=itemgetter(0)):
        lines += old_lines[cursor:start]
        new_start, cursor = len(lines), start
        if file.plain and old_texts[start:end] == hunk.old_lines:
            # Matched exactly: the hunk's context lines are the file's own.
            lines += hunk.new_lines
            cursor = end
        else:  # context lines keep the file's text and ending, added lines get the usual one
            size = end - start
            same_place = {at: at for at in range(size)}  # the k-th old line is the k-th matched one
            reindent = Reindent(
                hunk.old_lines, hunk.new_lines, old_texts[start:end], same_place, lambda: old_texts
            )
            for line in hunk.body:
                op = line[:1]
                if op == "+":  # moved like the old line before it (the first one, at the start)
                    anchor = max(cursor - start - 1, 0) if size else None
                    lines.append(reindent.shift(line[1:], anchor) + added_ending)
                    continue
                if op != "-":
                    lines.append(old_lines[cursor])
                cursor += 1
            notes += [f"hunk {hunk.number}: {note}" for note in reindent.notes()]
        regions.append((start, end, new_start, len(lines)))
    lines += old_lines[cursor:]
    if not file.plain and old_lines and old_lines[-1] == old_texts[-1] and lines[-1:] != old_lines[-1:]:
        _keep_open_end(file, lines, regions)
    return file.render(lines), regions, notes


def _keep_open_end(file: FileText, lines: list[str], regions: list[Region]) -> None:
    """The file had no final newline and its last line changed: it still has none. The old
    last line, if kept but no longer last, gets the usual ending (only it lacks one, so it
    is found by value); the new last line loses its ending, unless it is empty (without
    an ending it would not be a line at all). Both changes join the regions."""
    if file.lines[-1] in lines:
        at = lines.index(file.lines[-1])
        lines[at] += file.ending
        _cover(regions, len(file.lines) - 1, at)
    if lines and (text := lines[-1].rstrip("\r\n")):  # an empty last line keeps its ending: it is a line
        lines[-1] = text
        _cover(regions, None, len(lines) - 1)


def _cover(regions: list[Region], old: int | None, new: int) -> None:
    """Make sure a region holds new line ``new`` (old line ``old``; None: work it out from
    the regions before it, the line being an unchanged one outside them)."""
    if any(new_start <= new < new_end for _, _, new_start, new_end in regions):
        return
    if old is None:
        old = new + sum((i2 - i1) - (j2 - j1) for i1, i2, j1, j2 in regions if j2 <= new)
    insort(regions, (old, old + 1, new, new + 1))
