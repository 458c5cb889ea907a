"""Apply one edit (oldString -> newString) to a file's text through the replacer cascade.

The rule above all: never replace at a wrong location. A replacer's candidates are
only used when, taken together, they point at exactly one place in the file; several
places mean "ambiguous" and the cascade moves on to the next replacer, and if nothing
else matches the edit fails asking for more context. (OpenCode takes the first candidate
that occurs once, which picks an arbitrary line when two lines differ only in
indentation; grouping a replacer's candidates by location closes that hole.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from app.errors import ToolError
from app.tools.text.replacers import REPLACERS

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
    "identical": "No changes to apply: oldString and newString are identical.",
    "empty": "oldString cannot be empty: to create a new file, use the write tool",
}

BOM = "\ufeff"


class EditMatchError(ToolError):
    """The edit cannot be applied; `kind` says why, the message tells the model what to do."""

    def __init__(self, kind: ErrorKind) -> None:
        super().__init__(_MESSAGES[kind])
        self.kind: ErrorKind = kind


@dataclass(frozen=True)
class ReplaceOutcome:
    """The edited text and the replacer that found the match ("simple" = exact)."""

    content: str
    strategy: str


def replace(content: str, old: str, new: str, replace_all: bool = False) -> ReplaceOutcome:
    """Replace `old` in LF-only `content`; raises EditMatchError. With `replace_all`, every
    occurrence of the first candidate found is replaced."""
    if old == new:
        raise EditMatchError("identical")
    if not old:
        raise EditMatchError("empty")
    ambiguous = False
    for replacer in REPLACERS:
        found = _occurrences_by_candidate(content, replacer(content, old))
        if not found:
            continue
        if replace_all:
            return ReplaceOutcome(content.replace(next(iter(found)), new), replacer.__name__)
        chosen = _sole_location(found)
        if chosen is None:
            ambiguous = True
            continue
        start = found[chosen][0]
        return ReplaceOutcome(content[:start] + new + content[start + len(chosen) :], replacer.__name__)
    raise EditMatchError("multiple" if ambiguous else "not_found")


def _occurrences_by_candidate(content: str, candidates: Iterable[str]) -> dict[str, list[int]]:
    """Each distinct candidate that occurs in `content`, in yield order, with the start of
    every occurrence (overlapping ones too: "aa" occurs twice in "aaa")."""
    found: dict[str, list[int]] = {}
    for candidate in candidates:
        if candidate in found or not candidate:
            continue
        starts = []
        index = content.find(candidate)
        while index != -1:
            starts.append(index)
            index = content.find(candidate, index + 1)
        if starts:
            found[candidate] = starts
    return found


def _sole_location(found: dict[str, list[int]]) -> str | None:
    """The candidate to use when all occurrences sit at one place, else None.

    One place = one outermost span: a span nested inside another (the trimmed text inside
    its whole line) is the same place; disjoint or partly overlapping spans are not. The
    first candidate, in yield order, that occurs exactly once is the one used."""
    spans = {(start, start + len(text)) for text, starts in found.items() for start in starts}
    outermost = 0
    reach = -1
    for _, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if end > reach:
            outermost += 1
            reach = end
    if outermost != 1:
        return None
    return next((text for text, starts in found.items() if len(starts) == 1), None)


def apply_edit(content: str, old: str, new: str, replace_all: bool = False) -> ReplaceOutcome:
    """`replace` for a file's text as read: a leading BOM is set aside and restored, and
    the edit runs on LF text and comes back in the file's majority line ending (so a
    model writing LF into a CRLF file, or CRLF into an LF file, edits it cleanly).
    A file with mixed endings comes back entirely in its majority ending."""
    bom = BOM if content.startswith(BOM) else ""
    body = content[len(bom) :]
    crlf = body.count("\r\n")
    use_crlf = crlf > body.count("\n") - crlf
    outcome = replace(_to_lf(body), _to_lf(old), _to_lf(new), replace_all)
    text = outcome.content.replace("\n", "\r\n") if use_crlf else outcome.content
    return ReplaceOutcome(bom + text, outcome.strategy)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")
