"""Apply one edit (oldString -> newString) to a file's text through the replacer cascade.

The rule above all: never replace at a wrong location. A replacer's spans are only used
when, taken together, they point at exactly one place in the file; several places mean
"ambiguous" and the cascade moves on to the next replacer, and if nothing else matches
the edit fails asking for more context. (OpenCode takes the first candidate that occurs
once, which picks an arbitrary line when two lines differ only in indentation; grouping
a replacer's spans by location closes that hole.) One ambiguity is final: oldString
occurring verbatim at several places. A looser reading (the one place where it is a
whole line, say) must not pick one of them for the model.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.errors import ToolError
from app.tools.text.replacers import REPLACERS, Span, disproportionate, oversized_block, simple

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


class EditMatchError(ToolError):
    """The edit cannot be applied; `kind` says why, the message tells the model what to do
    (`message` replaces the kind's usual one when more is known)."""

    def __init__(self, kind: ErrorKind, message: str | None = None) -> None:
        super().__init__(message or _MESSAGES[kind])
        self.kind: ErrorKind = kind


@dataclass(frozen=True)
class ReplaceOutcome:
    """The edited text and the replacer that found the match ("simple" = exact)."""

    content: str
    strategy: str


def replace(content: str, old: str, new: str, replace_all: bool = False) -> ReplaceOutcome:
    """Replace `old` in `content`; raises EditMatchError. With `replace_all`, every place
    the first matching replacer finds is replaced.

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
    spans, strategy = _locate(text, old, replace_all)
    crlf = _crlf_breaks(content)
    majority = "\r\n" if len(crlf) > text.count("\n") - len(crlf) else "\n"
    pieces, done = [], 0
    for start, end in spans:
        fitted = _fit(old, new, text[start:end])
        if crlf:
            fitted = fitted.replace("\n", _line_ending(text, crlf, start, majority))
        raw_start, raw_end = start + bisect_left(crlf, start), end + bisect_left(crlf, end)
        pieces += [content[done:raw_start], fitted]
        done = raw_end
    pieces.append(content[done:])
    return ReplaceOutcome("".join(pieces), strategy)


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


def _locate(text: str, old: str, replace_all: bool) -> tuple[list[Span], str]:
    """The spans to replace in `text` and the replacer that found them."""
    ambiguous = False
    for replacer in REPLACERS:
        spans = [span for span in dict.fromkeys(replacer(text, old)) if span[1] > span[0]]
        if not spans:
            continue
        _refuse_disproportionate(text, old, spans, replacer.__name__)
        if replace_all:
            return _non_overlapping(spans), replacer.__name__
        if _places(spans) == 1:
            return [spans[0]], replacer.__name__
        if replacer is simple:  # oldString itself occurs several times: final (see the module doc)
            raise EditMatchError("multiple")
        ambiguous = True
    if ambiguous:
        raise EditMatchError("multiple")
    raise _not_found(text, old)


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


def _places(spans: Sequence[Span]) -> int:
    """How many places the spans point at: a span nested inside another (the trimmed text
    inside its whole line) is the same place; disjoint or partly overlapping spans are not."""
    places = 0
    reach = -1
    for _, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if end > reach:
            places += 1
            reach = end
    return places


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


def _not_found(text: str, old: str) -> EditMatchError:
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


def apply_edit(content: str, old: str, new: str, replace_all: bool = False) -> ReplaceOutcome:
    """`replace` for a file's text as read: a leading BOM is set aside and restored (one
    copied into oldString is ignored; one newString puts at the start is not doubled)."""
    bom = BOM if content.startswith(BOM) else ""
    if bom:
        old = old.removeprefix(BOM)
    outcome = replace(content[len(bom) :], old, new, replace_all)
    body = outcome.content
    if body.startswith(BOM):
        bom, body = BOM, body[1:]
    return ReplaceOutcome(bom + body, outcome.strategy)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")
