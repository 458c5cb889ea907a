"""The nine candidate finders of the edit tool, in cascade order (after OpenCode).

A model's oldString is often not byte-exact: indentation drifts, whitespace collapses,
escapes get doubled. Each replacer is a generator of substrings of the file that the
oldString is believed to denote; `replace.py` decides whether a candidate is safe to use
(it must sit at exactly one place). The finders go from strict to loose, and the loose
ones refuse rather than guess: a wrong edit costs more than a failed one, which the
model can retry after reading the file again.

Line-window finders treat a trailing newline of oldString as "and the line break after
it": the candidate then includes that break, so a newString ending in a newline does not
leave a doubled line break behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

Replacer = Callable[[str, str], Iterator[str]]

# BlockAnchor's guards (OpenCode's 2026 hardening, made stricter where it was silent).
MIN_MIDDLE_SIMILARITY = 0.65
"""Average similarity of the middle lines a fuzzy block needs (1.0 = identical)."""
MAX_LINE_COUNT_DRIFT = 0.25
"""A candidate block may have at most 25% more or fewer lines than oldString."""
MAX_SPAN_GROWTH = 1.5
"""A candidate's visible text (lines stripped) may be at most 1.5x oldString's. Stripped,
so re-indenting a block never trips it; extra or longer lines do."""
CLEAR_WINNER_MARGIN = 0.1
"""With several anchored blocks, the best must beat the runner-up by this much."""


@dataclass(frozen=True)
class _Find:
    """oldString split into lines, minus the empty piece a trailing newline leaves."""

    lines: list[str]
    newline: bool

    @classmethod
    def parse(cls, find: str) -> _Find:
        newline = find.endswith("\n") and len(find) > 1
        return cls((find[:-1] if newline else find).split("\n"), newline)

    @property
    def stripped(self) -> list[str]:
        return [line.strip() for line in self.lines]


def _window(lines: list[str], start: int, count: int, newline: bool) -> str:
    """The exact text of `count` content lines from `start`, with the following line
    break when oldString ended with one and there is a break to take."""
    text = "\n".join(lines[start : start + count])
    return text + "\n" if newline and start + count < len(lines) else text


def _stripped_windows(stripped: list[str], wanted: list[str]) -> Iterator[int]:
    """Start lines of windows whose lines equal `wanted` once each side is stripped."""
    count = len(wanted)
    for start in range(len(stripped) - count + 1):
        if stripped[start] == wanted[0] and stripped[start : start + count] == wanted:
            yield start


def _boundary_guarded(pattern: str, lead: bool, trail: bool) -> re.Pattern[str]:
    """`pattern`, required to start (end) at a whitespace boundary when oldString began
    (ended) with whitespace: "  x = 1" must not match inside "max = 1"."""
    return re.compile((r"(?<!\S)" if lead else "") + pattern + (r"(?!\S)" if trail else ""))


def simple(content: str, find: str) -> Iterator[str]:
    """oldString itself."""
    yield find


def line_trimmed(content: str, find: str) -> Iterator[str]:
    """Line windows equal to oldString's lines once each line is stripped."""
    spec = _Find.parse(find)
    lines = content.split("\n")
    for start in _stripped_windows([line.strip() for line in lines], spec.stripped):
        yield _window(lines, start, len(spec.lines), spec.newline)


def _middle_similarity(wanted: list[str], block: list[str]) -> float:
    """Mean Levenshtein similarity of the stripped middle lines, paired by position.
    Dividing by the longer side makes every unpaired line count as a total mismatch;
    two blank lines are identical (score 1), not skipped."""
    total = sum(Levenshtein.normalized_similarity(a, b) for a, b in zip(wanted, block, strict=False))
    return total / max(len(wanted), len(block))


def block_anchor(content: str, find: str) -> Iterator[str]:
    """Blocks whose first and last lines equal oldString's (stripped) and whose middle is
    close to it: at least MIN_MIDDLE_SIMILARITY, line count within MAX_LINE_COUNT_DRIFT,
    visible text at most MAX_SPAN_GROWTH times oldString's. Several such blocks yield
    only a clear winner; a near tie yields nothing."""
    spec = _Find.parse(find)
    wanted = spec.stripped
    size = len(wanted)
    if size < 3:
        return
    lines = content.split("\n")
    stripped = [line.strip() for line in lines]
    drift = int(size * MAX_LINE_COUNT_DRIFT)
    sizes = range(max(3, size - drift), size + drift + 1)
    max_visible = MAX_SPAN_GROWTH * sum(map(len, wanted))
    scored: list[tuple[float, int, int]] = []
    for start, line in enumerate(stripped):
        if line != wanted[0]:
            continue
        for block_size in sizes:
            end = start + block_size - 1
            if end >= len(lines):
                break
            block = stripped[start : end + 1]
            if block[-1] != wanted[-1] or sum(map(len, block)) > max_visible:
                continue
            scored.append((_middle_similarity(wanted[1:-1], block[1:-1]), start, block_size))
    if not scored:
        return
    scored.sort(reverse=True)
    best, start, block_size = scored[0]
    if best < MIN_MIDDLE_SIMILARITY:
        return
    if len(scored) > 1 and best - scored[1][0] < CLEAR_WINNER_MARGIN:
        return
    yield _window(lines, start, block_size, spec.newline)


def _collapse(text: str) -> str:
    """Runs of whitespace as one space, ends trimmed."""
    return " ".join(text.split())


def whitespace_normalized(content: str, find: str) -> Iterator[str]:
    """Text equal to oldString once runs of whitespace collapse to one space. A one-line
    oldString matches a whole line or the part of a line its words match (\\s+ between
    them); a longer one matches line windows of the same height only."""
    target = _collapse(find)
    if not target:
        return
    spec = _Find.parse(find)
    lines = content.split("\n")
    if len(spec.lines) == 1:
        yield from _whitespace_in_lines(lines, spec, target)
        return
    collapsed = [_collapse(line) for line in lines]
    count = len(spec.lines)
    for start in range(len(lines) - count + 1):
        if not target.startswith(collapsed[start]):  # cheap filter: a window's first line opens it
            continue
        if " ".join(part for part in collapsed[start : start + count] if part) == target:
            yield _window(lines, start, count, spec.newline)


def _whitespace_in_lines(lines: list[str], spec: _Find, target: str) -> Iterator[str]:
    text = spec.lines[0]
    words = r"\s+".join(map(re.escape, text.split()))
    if spec.newline:  # the model's text ended the line: so must the match
        pattern = _boundary_guarded(words + r"\s*\Z", text[:1].isspace(), trail=False)
    else:
        pattern = _boundary_guarded(words, text[:1].isspace(), text[-1:].isspace())
    for index, line in enumerate(lines):
        tail = "\n" if spec.newline and index + 1 < len(lines) else ""
        collapsed = _collapse(line)
        if collapsed == target:
            yield line + tail
        elif target in collapsed:
            for match in pattern.finditer(line):
                yield match.group() + tail


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    if not indents:
        return lines
    cut = min(indents)
    return [line[cut:] if line.strip() else line for line in lines]


def indentation_flexible(content: str, find: str) -> Iterator[str]:
    """Line windows equal to oldString once both lose their common indentation, so the
    relative indentation must agree (stricter than line_trimmed, which ignores it)."""
    spec = _Find.parse(find)
    wanted = _dedent(spec.lines)
    count = len(spec.lines)
    lines = content.split("\n")
    # Equal after dedenting implies equal after stripping: a cheap filter first.
    for start in _stripped_windows([line.strip() for line in lines], spec.stripped):
        if _dedent(lines[start : start + count]) == wanted:
            yield _window(lines, start, count, spec.newline)


_ESCAPE = re.compile(r"\\([ntr'\"`\\\n$])")
_CONTROL = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda match: _CONTROL.get(match[1], match[1]), text)


def escape_normalized(content: str, find: str) -> Iterator[str]:
    """oldString with backslash escapes resolved (\\n, \\t, \\', \\$, \\\\ ...), and line
    windows of the file whose own escapes resolve to the same text."""
    unescaped = _unescape(find)
    if unescaped in content:
        yield unescaped
    spec = _Find.parse(unescaped)
    target = "\n".join(spec.lines)
    count = len(spec.lines)
    lines = content.split("\n")
    escaped = ["\\" in line for line in lines]
    for start in range(len(lines) - count + 1):
        # A window without a backslash unescapes to itself: the direct search covered it.
        if (
            any(escaped[start : start + count])
            and _unescape("\n".join(lines[start : start + count])) == target
        ):
            yield _window(lines, start, count, spec.newline)


def trimmed_boundary(content: str, find: str) -> Iterator[str]:
    """oldString without its surrounding whitespace (found at a whitespace boundary on
    each trimmed side), and line windows whose text trims to it."""
    trimmed = find.strip()
    if not trimmed or trimmed == find:
        return
    if _boundary_guarded(re.escape(trimmed), find[0].isspace(), find[-1].isspace()).search(content):
        yield trimmed
    count = find.count("\n") + 1
    lines = content.split("\n")
    for start in range(len(lines) - count + 1):
        block = "\n".join(lines[start : start + count])
        if block.strip() == trimmed:
            yield block


def context_aware(content: str, find: str) -> Iterator[str]:
    """Blocks of oldString's height whose first and last lines equal its own (stripped)
    and where at least half of the non-blank middle lines are equal too. The middle must
    also reach MIN_MIDDLE_SIMILARITY: OpenCode's 50% rule alone would let a block with an
    unrelated line through, the very match block_anchor's hardening refuses."""
    spec = _Find.parse(find)
    wanted = spec.stripped
    count = len(wanted)
    if count < 3:
        return
    lines = content.split("\n")
    stripped = [line.strip() for line in lines]
    for start in range(len(lines) - count + 1):
        end = start + count - 1
        if stripped[start] != wanted[0] or stripped[end] != wanted[-1]:
            continue
        middle = stripped[start + 1 : end]
        pairs = [(a, b) for a, b in zip(middle, wanted[1:-1], strict=True) if a or b]
        if (
            2 * sum(a == b for a, b in pairs) >= len(pairs)
            and _middle_similarity(wanted[1:-1], middle) >= MIN_MIDDLE_SIMILARITY
        ):
            yield _window(lines, start, count, spec.newline)


def multi_occurrence(content: str, find: str) -> Iterator[str]:
    """oldString once per exact occurrence. After `simple` it adds no new text; it is
    kept as OpenCode's explicit last step for replaceAll."""
    start = content.find(find)
    while start != -1:
        yield find
        start = content.find(find, start + len(find))


REPLACERS: tuple[Replacer, ...] = (
    simple,
    line_trimmed,
    block_anchor,
    whitespace_normalized,
    indentation_flexible,
    escape_normalized,
    trimmed_boundary,
    context_aware,
    multi_occurrence,
)
"""The cascade, strict to loose. Each function's name is the strategy it reports."""
