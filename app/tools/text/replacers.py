"""The nine candidate finders of the edit tool, in cascade order (after OpenCode).

A model's oldString is often not byte-exact: indentation drifts, whitespace collapses,
escapes get doubled. Each replacer yields the spans (start, end) of the file's text that
the oldString is believed to denote; `replace.py` decides whether they are safe to use
(they must sit at exactly one place). Spans, not substrings as in OpenCode: a substring
is then replaced wherever it occurs, so the whole line "    x = 1" would also hit the
start of "    x = 10". The finders go from strict to loose, and the loose ones refuse
rather than guess: a wrong edit costs more than a failed one, which the model can retry
after reading the file again.

Line-window finders treat a trailing newline of oldString as "and the line break after
it": the span then includes that break, so a newString ending in a newline does not
leave a doubled line break behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from rapidfuzz.distance import Levenshtein

from app.tools.text.punctuation import plain_line, plain_punctuation

Span = tuple[int, int]
"""Start and end offsets of a piece of the file's text."""


# BlockAnchor's guards (as OpenCode's, and stricter where OpenCode's say nothing).
MIN_MIDDLE_SIMILARITY = 0.65
"""Average similarity of the middle lines a fuzzy block needs (1.0 = identical)."""
MAX_LINE_COUNT_DRIFT = 0.25
"""A candidate block may have at most 25% more or fewer lines than oldString."""
MAX_SPAN_GROWTH = 1.5
"""A candidate's visible text (lines stripped) may be at most 1.5x oldString's. Stripped,
so re-indenting a block never trips it; extra or longer lines do."""
CLEAR_WINNER_MARGIN = 0.1
"""With several anchored blocks, the best must beat the runner-up by this much."""

# OpenCode's guard for every fuzzy finder: whitespace counted, so it catches what the
# visible-text guard above ignores (lines whose text is a sliver of what they hold).
MAX_LOOSE_EXTRA_CHARS = 500
MAX_LOOSE_GROWTH = 4
"""A loose match of a multi-line oldString may be at most 500 characters and 4 times
longer than it (both trimmed at the ends), whichever allows more."""


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


class Lines:
    """The file's text and its lines, with what the line finders need computed once,
    when first needed. The cascade hands one Lines to every replacer of a call, so
    the file is split and stripped once, not once per replacer."""

    def __init__(self, content: str) -> None:
        self.content = content

    @classmethod
    def of(cls, content: Content) -> Lines:
        return content if isinstance(content, Lines) else cls(content)

    @cached_property
    def lines(self) -> list[str]:
        return self.content.split("\n")

    def __len__(self) -> int:
        return len(self.lines)

    @cached_property
    def stripped(self) -> list[str]:
        return [line.strip() for line in self.lines]

    @cached_property
    def starts(self) -> list[int]:
        """The offset of each line's first character."""
        return [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]

    def window(self, start: int, count: int, newline: bool) -> Span:
        """The span of `count` lines from `start`, with the following line break when
        oldString ended with one and there is a break to take."""
        last = start + count - 1
        end = self.starts[last] + len(self.lines[last])
        return self.starts[start], end + 1 if newline and last + 1 < len(self.lines) else end

    def text(self, start: int, count: int) -> str:
        return "\n".join(self.lines[start : start + count])


Content = str | Lines
"""The file's text as a replacer takes it: the text, or the cascade's shared Lines."""
Replacer = Callable[[Content, str], Iterator[Span]]


def _text(content: Content) -> str:
    return content.content if isinstance(content, Lines) else content


def _occurrences(content: str, text: str) -> Iterator[Span]:
    """Every occurrence of `text`, overlapping ones too ("aa" occurs twice in "aaa")."""
    index = content.find(text)
    while index != -1:
        yield index, index + len(text)
        index = content.find(text, index + 1)


def _stripped_windows(stripped: list[str], wanted: list[str]) -> Iterator[int]:
    """Start lines of windows whose lines equal `wanted` once each side is stripped
    (or otherwise normalised: `stripped` and `wanted` are the normalised lines)."""
    count = len(wanted)
    for start in range(len(stripped) - count + 1):
        if stripped[start] == wanted[0] and stripped[start : start + count] == wanted:
            yield start


def _boundary_guarded(pattern: str, lead: bool, trail: bool) -> re.Pattern[str]:
    """`pattern`, required to start (end) at a whitespace boundary when oldString began
    (ended) with whitespace: "  x = 1" must not match inside "max = 1"."""
    return re.compile((r"(?<!\S)" if lead else "") + pattern + (r"(?!\S)" if trail else ""))


def simple(content: Content, find: str) -> Iterator[Span]:
    """oldString itself, wherever it occurs."""
    yield from _occurrences(_text(content), find)


def line_trimmed(content: Content, find: str) -> Iterator[Span]:
    """Line windows equal to oldString's lines once each line is stripped."""
    spec = _Find.parse(find)
    text = Lines.of(content)
    for start in _stripped_windows(text.stripped, spec.stripped):
        yield text.window(start, len(spec.lines), spec.newline)


def _middle_similarity(wanted: list[str], block: list[str]) -> float:
    """Mean Levenshtein similarity of the stripped middle lines, paired by position.
    Dividing by the longer side makes every unpaired line count as a total mismatch;
    two blank lines are identical (score 1), not skipped."""
    total = sum(Levenshtein.normalized_similarity(a, b) for a, b in zip(wanted, block, strict=False))
    return total / max(len(wanted), len(block))


@dataclass(frozen=True, order=True)
class _Block:
    """A block whose first and last lines are oldString's, within the line-count drift."""

    similarity: float
    start: int
    size: int
    visible: int
    """Characters of its lines, stripped."""


def _anchored_blocks(text: Lines, wanted: list[str], oversized: bool) -> Iterator[_Block]:
    """Blocks within MAX_SPAN_GROWTH of oldString's visible text, or (`oversized`) those
    beyond it; sized before scored, since scoring is the costly part."""
    max_visible = MAX_SPAN_GROWTH * sum(map(len, wanted))
    size = len(wanted)
    drift = int(size * MAX_LINE_COUNT_DRIFT)
    sizes = range(max(3, size - drift), size + drift + 1)
    stripped = text.stripped
    for start, line in enumerate(stripped):
        if line != wanted[0]:
            continue
        for block_size in sizes:
            end = start + block_size - 1
            if end >= len(text):
                break
            block = stripped[start : end + 1]
            if block[-1] != wanted[-1]:
                continue
            visible = sum(map(len, block))
            if (visible > max_visible) == oversized:
                similarity = _middle_similarity(wanted[1:-1], block[1:-1])
                yield _Block(similarity, start, block_size, visible)


def block_anchor(content: Content, find: str) -> Iterator[Span]:
    """Blocks whose first and last lines equal oldString's (stripped) and whose middle is
    close to it: at least MIN_MIDDLE_SIMILARITY, line count within MAX_LINE_COUNT_DRIFT,
    visible text at most MAX_SPAN_GROWTH times oldString's. Several such blocks yield
    only a clear winner; a near tie yields nothing."""
    spec = _Find.parse(find)
    wanted = spec.stripped
    if len(wanted) < 3:
        return
    text = Lines.of(content)
    scored = sorted(_anchored_blocks(text, wanted, oversized=False), reverse=True)
    if not scored or scored[0].similarity < MIN_MIDDLE_SIMILARITY:
        return
    if len(scored) > 1 and scored[0].similarity - scored[1].similarity < CLEAR_WINNER_MARGIN:
        return
    yield text.window(scored[0].start, scored[0].size, spec.newline)


def oversized_block(content: Content, find: str) -> tuple[int, int] | None:
    """(visible characters of the block, of oldString) when block_anchor (and so
    context_aware) refused a block that was close enough but much larger than oldString,
    else None. Only asked after
    every replacer failed, so the error can say why instead of just "not found"."""
    wanted = _Find.parse(find).stripped
    if len(wanted) < 3:
        return None
    oversized = [
        block.visible
        for block in _anchored_blocks(Lines.of(content), wanted, oversized=True)
        if block.similarity >= MIN_MIDDLE_SIMILARITY
    ]
    return (min(oversized), sum(map(len, wanted))) if oversized else None


def disproportionate(matched: str, find: str) -> bool:
    """Whether a fuzzy finder's match is so much larger than a multi-line oldString that
    replacing it would drop text the model never sent (MAX_LOOSE_EXTRA_CHARS and
    MAX_LOOSE_GROWTH). A one-line oldString is left to the finders' own line rules."""
    if "\n" not in find.strip():
        return False
    wanted = len(find.strip())
    return len(matched.strip()) > max(wanted + MAX_LOOSE_EXTRA_CHARS, wanted * MAX_LOOSE_GROWTH)


def _collapse(text: str) -> str:
    """Runs of whitespace as one space, ends trimmed."""
    return " ".join(text.split())


def whitespace_normalized(content: Content, find: str) -> Iterator[Span]:
    """Text equal to oldString once runs of whitespace collapse to one space. A one-line
    oldString matches a whole line or the part of a line its words match (\\s+ between
    them); a longer one matches line windows of the same height only."""
    target = _collapse(find)
    if not target:
        return
    spec = _Find.parse(find)
    text = Lines.of(content)
    if len(spec.lines) == 1:
        yield from _whitespace_in_lines(text, spec, target)
        return
    collapsed = [_collapse(line) for line in text.lines]
    count = len(spec.lines)
    for start in range(len(text) - count + 1):
        if not target.startswith(collapsed[start]):  # cheap filter: a window's first line opens it
            continue
        if " ".join(part for part in collapsed[start : start + count] if part) == target:
            yield text.window(start, count, spec.newline)


def _whitespace_in_lines(text: Lines, spec: _Find, target: str) -> Iterator[Span]:
    words = r"\s+".join(map(re.escape, spec.lines[0].split()))
    first = spec.lines[0]
    if spec.newline:  # the model's text ended the line: so must the match
        pattern = _boundary_guarded(words + r"\s*\Z", first[:1].isspace(), trail=False)
    else:
        pattern = _boundary_guarded(words, first[:1].isspace(), first[-1:].isspace())
    for index, line in enumerate(text.lines):
        collapsed = _collapse(line)
        if collapsed == target:
            yield text.window(index, 1, spec.newline)
        elif target in collapsed:
            line_start, line_end = text.window(index, 1, spec.newline)
            tail = line_end - line_start - len(line)  # the line break taken with the line, if any
            for match in pattern.finditer(line):
                yield line_start + match.start(), line_start + match.end() + tail


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    if not indents:
        return lines
    cut = min(indents)
    return [line[cut:] if line.strip() else line for line in lines]


def indentation_flexible(content: Content, find: str) -> Iterator[Span]:
    """Line windows equal to oldString once both lose their common indentation, so the
    relative indentation must agree (stricter than line_trimmed, which ignores it)."""
    spec = _Find.parse(find)
    wanted = _dedent(spec.lines)
    count = len(spec.lines)
    text = Lines.of(content)
    # Equal after dedenting implies equal after stripping: a cheap filter first.
    for start in _stripped_windows(text.stripped, spec.stripped):
        if _dedent(text.lines[start : start + count]) == wanted:
            yield text.window(start, count, spec.newline)


_ESCAPE = re.compile(r"\\([ntr'\"`\\\n$])")
_CONTROL = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda match: _CONTROL.get(match[1], match[1]), text)


def escape_normalized(content: Content, find: str) -> Iterator[Span]:
    """oldString with backslash escapes resolved (\\n, \\t, \\', \\$, \\\\ ...), and line
    windows of the file whose own escapes resolve to the same text."""
    unescaped = _unescape(find)
    yield from _occurrences(_text(content), unescaped)
    spec = _Find.parse(unescaped)
    target = "\n".join(spec.lines)
    count = len(spec.lines)
    text = Lines.of(content)
    escaped = ["\\" in line for line in text.lines]
    for start in range(len(text) - count + 1):
        # A window without a backslash unescapes to itself: the direct search covered it.
        if any(escaped[start : start + count]) and _unescape(text.text(start, count)) == target:
            yield text.window(start, count, spec.newline)


def trimmed_boundary(content: Content, find: str) -> Iterator[Span]:
    """oldString without its surrounding whitespace (found at a whitespace boundary on
    each trimmed side), and line windows whose text trims to it."""
    trimmed = find.strip()
    if not trimmed or trimmed == find:
        return
    pattern = _boundary_guarded(re.escape(trimmed), find[0].isspace(), find[-1].isspace())
    yield from (match.span() for match in pattern.finditer(_text(content)))
    count = find.count("\n") + 1
    text = Lines.of(content)
    for start in range(len(text) - count + 1):
        if text.text(start, count).strip() == trimmed:
            yield text.window(start, count, newline=False)


def context_aware(content: Content, find: str) -> Iterator[Span]:
    """Blocks of oldString's height whose first and last lines equal its own (stripped)
    and where at least half of the non-blank middle lines are equal too. The middle must
    also pass block_anchor's hardening (MIN_MIDDLE_SIMILARITY, MAX_SPAN_GROWTH): OpenCode's
    50% rule alone would let a block with an unrelated or huge line through."""
    spec = _Find.parse(find)
    wanted = spec.stripped
    count = len(wanted)
    if count < 3:
        return
    text = Lines.of(content)
    stripped = text.stripped
    max_visible = MAX_SPAN_GROWTH * sum(map(len, wanted))
    for start in range(len(text) - count + 1):
        end = start + count - 1
        if stripped[start] != wanted[0] or stripped[end] != wanted[-1]:
            continue
        middle = stripped[start + 1 : end]
        pairs = [(a, b) for a, b in zip(middle, wanted[1:-1], strict=True) if a or b]
        if (
            2 * sum(a == b for a, b in pairs) >= len(pairs)
            and _middle_similarity(wanted[1:-1], middle) >= MIN_MIDDLE_SIMILARITY
            and sum(map(len, stripped[start : end + 1])) <= max_visible
        ):
            yield text.window(start, count, spec.newline)


def _plain(text: str) -> bool:
    """Whether `text` has no typographic punctuation (ASCII text has none: checked first, fast)."""
    return text.isascii() or plain_punctuation(text) == text


def punctuation_normalized(content: Content, find: str) -> Iterator[Span]:
    """Line windows equal to oldString's lines once both have typographic punctuation
    made plain (curly quotes, dashes, odd spaces) and whitespace collapsed. Not in the
    cascade (OpenCode has no such step): the edit tool's second chance when it fails."""
    spec = _Find.parse(find)
    wanted = [plain_line(line) for line in spec.lines]
    if not any(wanted) or (_plain(find) and _plain(_text(content))):
        return  # nothing typographic on either side: the cascade already compared these lines
    text = Lines.of(content)
    for start in _stripped_windows([plain_line(line) for line in text.lines], wanted):
        yield text.window(start, len(wanted), spec.newline)


def multi_occurrence(content: Content, find: str) -> Iterator[Span]:
    """oldString once per exact, non-overlapping occurrence. After `simple` it adds no
    new place; it is kept as OpenCode's explicit last step for replaceAll."""
    text = _text(content)
    start = text.find(find)
    while start != -1:
        yield start, start + len(find)
        start = text.find(find, start + len(find))


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
