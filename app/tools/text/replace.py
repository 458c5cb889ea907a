"""Apply one edit (oldString -> newString) to a file's text through the replacer cascade.

The rule above all: never replace at a wrong location. A replacer's spans are only used
when, taken together, they point at exactly one place in the file; several places mean
"ambiguous" and the cascade moves on to the next replacer, and if nothing else matches
the edit fails asking for more context. (OpenCode takes the first candidate that occurs
once, which picks an arbitrary line when two lines differ only in indentation; grouping
a replacer's spans by location closes that hole.) One ambiguity is final: oldString
occurring verbatim at several places. A looser reading (the one place where it is a
whole line, say) must not pick one of them for the model.

Two ways to use a match. `replace(..., adapt=False)` pastes newString over it, as
OpenCode does (the conformance suites check the cascade this way). The tools use
`adapt=True`: a match that differs from oldString gets the change the model asked
for, replayed on the lines actually there (`adapt.py`: re-indented, the file's own
context kept, a change with no target refused), and a cascade that finds nothing
gets two second chances (oldString without the view tool's line numbers; lines
compared with typographic punctuation made plain) before it is refused with the
closest lines of the file quoted.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.core.errors import ToolError
from app.tools.text.adapt import ChangeNotInFile, adapt_span, closest_lines
from app.tools.text.replacers import (
    REPLACERS,
    Lines,
    Span,
    disproportionate,
    oversized_block,
    punctuation_normalized,
    simple,
)

ErrorKind = Literal["not_found", "multiple", "identical", "empty"]

_MESSAGES: dict[ErrorKind, str] = {
    "not_found": (
        "Could not find oldString in the file. It must match exactly, including whitespace and "
        "indentation: read the file again and copy the lines you want to change."
    ),
    "multiple": (
        "Found multiple matches for oldString. Provide more surrounding lines in oldString to identify "
        "the correct match, or set replaceAll to change every instance."
    ),
    "identical": (
        "No changes to apply: oldString and newString are identical, and they must be different: "
        "put the changed text in newString."
    ),
    "empty": "oldString cannot be empty: to create a new file, use the write tool",
}

BOM = "\ufeff"

_VIEW_LINE_NUMBER = re.compile(r" *\d+\t")
"""The prefix the view tool puts before each line: a model sometimes copies it."""
_VIEW_PREFIX = re.compile(r"(?=[ \d]{6})( *(\d+))(?:\t|\Z)")
"""The view tool's prefix exactly: the line number right-aligned in six columns, then a
tab (gone when the model trimmed the line's trailing whitespace)."""


class EditMatchError(ToolError):
    """The edit cannot be applied; `kind` says why, the message tells the model what to do
    (`message` replaces the kind's usual one when more is known)."""

    def __init__(self, kind: ErrorKind, message: str | None = None, places: Sequence[int] = ()) -> None:
        super().__init__(message or _MESSAGES[kind])
        self.kind: ErrorKind = kind
        self.places = tuple(places)
        """For "multiple": where (offsets in the "\\n" text) the places start."""


@dataclass(frozen=True)
class ReplaceOutcome:
    """The edited text, the replacer that found the match ("simple" = exact), and
    what adapting the change to the matched text did (for the model to learn from)."""

    content: str
    strategy: str
    notes: tuple[str, ...] = ()


def replace(
    content: str, old: str, new: str, replace_all: bool = False, *, adapt: bool = False
) -> ReplaceOutcome:
    """Replace `old` in `content`; raises EditMatchError. With `replace_all`, every place
    the first matching replacer finds is replaced. With `adapt`, the change is fitted
    to each matched text that differs from `old` (see the module doc).

    Matching runs on "\\n" text ("\\r\\n" in any of the three counts as "\\n"); every line
    break outside the replaced text stays as it was, and the line breaks of `new` take
    the ending of the line the replaced text starts on (the majority ending on a last
    line without one), so a CRLF file stays CRLF and a mixed one stays mixed. Line breaks
    at the ends of `old` that the matched text lacks (the file ends without one, or
    trimmed_boundary dropped blank lines) are dropped from `new` too."""
    if old == new:
        raise EditMatchError("identical")
    if not old:
        raise EditMatchError("empty")
    text, old, new = _to_lf(content), _to_lf(old), _to_lf(new)
    notes: list[str] = []
    if adapt:
        spans, strategy, old, new, notes = _locate_again(Lines(text), old, new, replace_all)
    else:
        spans, strategy = _locate(Lines(text), old, replace_all)
    crlf = _crlf_breaks(content)
    majority = "\r\n" if len(crlf) > text.count("\n") - len(crlf) else "\n"
    pieces, done = [], 0
    for start, end in spans:
        if adapt and strategy not in _PASTED:
            start, fitted = _adapted(text, start, end, old, new, notes)
        else:
            fitted = _fit(old, new, text[start:end])
        if crlf:
            fitted = fitted.replace("\n", _line_ending(text, crlf, start, majority))
        raw_start, raw_end = start + bisect_left(crlf, start), end + bisect_left(crlf, end)
        pieces += [content[done:raw_start], fitted]
        done = raw_end
    pieces.append(content[done:])
    return ReplaceOutcome("".join(pieces), strategy, tuple(dict.fromkeys(notes)))


_PASTED = frozenset({"simple", "multi_occurrence", "escape_normalized"})
"""Strategies whose match is pasted over as is: the exact ones (an exact oldString is
one str.replace, whatever the indentation around it), and escape_normalized, whose
oldString spells the file's line breaks and quotes as escapes (its lines do not pair
with the file's)."""


def _adapted(text: str, start: int, end: int, old: str, new: str, notes: list[str]) -> tuple[int, str]:
    """(start, replacement) for the span: the change from `old` to `new` replayed on
    the matched lines, the span widened to its line's start over indentation (which
    the replacement then sets). A match after other text on its line is pasted over."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip(" \t"):
        return start, _fit(old, new, text[start:end])
    old, new = _fit(old, old, text[start:end]), _fit(old, new, text[start:end])
    try:
        adapted = adapt_span(old, new, text, line_start, end)
    except ChangeNotInFile as err:
        raise EditMatchError("not_found", str(err)) from None
    notes += adapted.notes
    return line_start, adapted.text


def _crlf_breaks(content: str) -> list[int]:
    """Where each "\\r\\n" of `content` sits in its "\\n" text, ascending: the offsets
    that map a span of that text back onto `content`."""
    return [index - count for count, index in enumerate(m.start() for m in re.finditer("\r\n", content))]


def _line_ending(text: str, crlf: list[int], start: int, majority: str) -> str:
    """The ending of the line holding offset `start` of `text`; `majority` if it has none."""
    index = text.find("\n", start)
    if index == -1:
        return majority
    position = bisect_left(crlf, index)
    return "\r\n" if position < len(crlf) and crlf[position] == index else "\n"


def _locate(lines: Lines, old: str, replace_all: bool) -> tuple[list[Span], str]:
    """The spans to replace in the text and the replacer that found them."""
    ambiguous: list[int] = []  # where the places of the first ambiguous replacer start
    for replacer in REPLACERS:
        spans = [span for span in dict.fromkeys(replacer(lines, old)) if span[1] > span[0]]
        if not spans:
            continue
        _refuse_disproportionate(lines.content, old, spans, replacer.__name__)
        if replace_all:
            return _non_overlapping(spans), replacer.__name__
        if len(_starts(spans)) == 1:
            return [spans[0]], replacer.__name__
        if replacer is simple:  # oldString itself occurs several times: final (see the module doc)
            raise EditMatchError("multiple", places=_starts(spans))
        ambiguous = ambiguous or _starts(spans)
    if ambiguous:
        raise EditMatchError("multiple", places=ambiguous)
    raise _not_found(lines, old)


def _starts(spans: Sequence[Span]) -> list[int]:
    """Where each place the spans point at starts: a span nested inside another (the
    trimmed text inside its whole line) is the same place; disjoint or partly
    overlapping spans are not."""
    starts, reach = [], -1
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if end > reach:
            starts.append(start)
            reach = end
    return starts


def _locate_again(
    lines: Lines, old: str, new: str, replace_all: bool
) -> tuple[list[Span], str, str, str, list[str]]:
    """`_locate`, with the second chances of the adapting mode when the cascade finds
    nothing: (spans, strategy, oldString and newString as matched, notes). Its errors
    quote the file: the lines of each place for "multiple", the closest lines for
    "not_found"."""
    try:
        return (*_locate(lines, old, replace_all), old, new, [])
    except EditMatchError as missed:
        if missed.kind != "not_found":
            raise _quoting(lines, old, missed) from None
        try:
            second = _second_chance(lines, old, new, replace_all)
        except EditMatchError as err:
            raise _quoting(lines, old, err) from None
        if second is None:
            raise _quoting(lines, old, missed) from None
        return second


def _second_chance(
    lines: Lines, old: str, new: str, replace_all: bool
) -> tuple[list[Span], str, str, str, list[str]] | None:
    """The match of oldString without the view tool's line numbers, or of its lines
    with typographic punctuation made plain; None when neither is there."""
    unnumbered = _without_view_numbers(old)
    if unnumbered is not None:
        try:
            spans, strategy = _locate(lines, unnumbered, replace_all)
        except EditMatchError as err:
            if err.kind == "not_found":
                return None
            raise
        note = "oldString's lines started with the view tool's line numbers, which were left out"
        return spans, strategy, unnumbered, _without_view_numbers(new, every_line=False) or new, [note]
    spans = _one_place(punctuation_normalized(lines, old), replace_all)
    return (spans, punctuation_normalized.__name__, old, new, []) if spans else None


def _one_place(found: Iterable[Span], replace_all: bool) -> list[Span]:
    """What `_locate` makes of one finder's spans (none: an empty list)."""
    spans = [span for span in dict.fromkeys(found) if span[1] > span[0]]
    if replace_all or not spans:
        return _non_overlapping(spans)
    if len(_starts(spans)) > 1:
        raise EditMatchError("multiple", places=_starts(spans))
    return [spans[0]]


def _without_view_numbers(text: str, every_line: bool = True) -> str | None:
    """`text` without the view tool's line-number prefixes, or None when it has none.
    `every_line`: each line must carry one, numbered consecutively (oldString, copied
    from a view; a last empty line after its final newline aside); else the lines that
    carry one lose it (newString, whose added lines have none)."""
    lines = text.split("\n")
    prefixes = [_VIEW_PREFIX.match(line) for line in lines]
    numbered = [found for found in prefixes if found]
    if not numbered:
        return None
    if every_line:
        counted = prefixes[:-1] if len(lines) > 1 and lines[-1] == "" else prefixes
        first = int(numbered[0][2])
        if len(numbered) != len(counted) or [int(found[2]) for found in numbered] != list(
            range(first, first + len(numbered))
        ):
            return None
    return "\n".join(
        line[found.end() :] if found else line for line, found in zip(lines, prefixes, strict=True)
    )


def _quoting(lines: Lines, old: str, err: EditMatchError) -> EditMatchError:
    """`err` with the file quoted: where a "multiple" matches, or the lines closest to
    oldString's for "not_found"."""
    if err.kind == "multiple" and err.places:
        numbers = [lines.content.count("\n", 0, place) + 1 for place in err.places]
        shown = ", ".join(map(str, numbers[:5])) + (" ..." if len(numbers) > 5 else "")
        return EditMatchError("multiple", f"{err} It matches at lines {shown}.", err.places)
    if err.kind == "not_found":
        return EditMatchError("not_found", f"{err} {closest_lines(lines, _without_view_numbers(old) or old)}")
    return err


def _refuse_disproportionate(text: str, old: str, spans: Sequence[Span], strategy: str) -> None:
    """Stop the cascade (as OpenCode does) when a replacer matched text far larger than
    oldString: a looser replacer would only find the same lines."""
    for start, end in spans:
        if disproportionate(text[start:end], old):
            raise EditMatchError(
                "not_found",
                f"Could not find oldString exactly: the {strategy} strategy matched text much larger than "
                f"oldString ({len(text[start:end].strip())} characters against {len(old.strip())}, whitespace "
                "included), so it was not replaced. Read the file again and copy the exact text, indentation "
                "included.",
            )


def _non_overlapping(spans: Sequence[Span]) -> list[Span]:
    """Left to right, the longest span at each start, skipping any that overlaps one
    already taken: for exact matches, the places `str.replace` changes."""
    taken: list[Span] = []
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if not taken or start >= taken[-1][1]:
            taken.append((start, end))
    return taken


_EDGES = (
    (re.compile(r"\A(?:[^\S\n]*\n)+"), r"\A(?:[^\S\n]*\n){{1,{}}}"),
    (re.compile(r"(?:\n[^\S\n]*)+\Z"), r"(?:\n[^\S\n]*){{1,{}}}\Z"),
)
"""For each end of a text: the line breaks in its whitespace (blank lines included), and
the pattern that takes at most n of them off."""


def _fit(old: str, new: str, matched: str) -> str:
    """`new`, less the line breaks at its ends that `old` has and the matched text lacks."""
    for breaks, at_most in _EDGES:
        extra = _count_breaks(breaks, old) - _count_breaks(breaks, matched)
        if extra > 0:
            new = re.sub(at_most.format(extra), "", new, count=1)
    return new


def _count_breaks(breaks: re.Pattern[str], text: str) -> int:
    found = breaks.search(text)
    return found.group().count("\n") if found else 0


def _not_found(text: Lines, old: str) -> EditMatchError:
    """The not_found error, saying why when a likely reason is visible."""
    lines = [line for line in old.split("\n") if line.strip()]
    if lines and all(_VIEW_LINE_NUMBER.match(line) for line in lines):
        return EditMatchError(
            "not_found",
            "Could not find oldString in the file: its lines start with the line numbers the view "
            "tool shows (a number and a tab), which are not part of the file. Send the lines "
            "without them.",
        )
    oversized = oversized_block(text, old)
    if oversized:
        block, wanted = oversized
        return EditMatchError(
            "not_found",
            "Could not find oldString in the file: the block that starts and ends with its first and "
            f"last lines is much larger than oldString ({block} characters against {wanted}), so it "
            "was not replaced. Read the file again and copy the whole block exactly.",
        )
    return EditMatchError("not_found")


def apply_edit(
    content: str, old: str, new: str, replace_all: bool = False, *, adapt: bool = False
) -> ReplaceOutcome:
    """`replace` for a file's text as read: a leading BOM is set aside and restored (one
    copied into oldString is ignored; one newString puts at the start is not doubled)."""
    bom = BOM if content.startswith(BOM) else ""
    if bom:
        old = old.removeprefix(BOM)
    outcome = replace(content[len(bom) :], old, new, replace_all, adapt=adapt)
    body = outcome.content
    if body.startswith(BOM):
        bom, body = BOM, body[1:]
    return ReplaceOutcome(bom + body, outcome.strategy, outcome.notes)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")
