"""Apply the change an edit asks for to the text a fuzzy replacer found.

When oldString is not byte-exact, pasting newString over the matched text writes the
model's slips into the file: a block remembered one level too shallow lands at the
wrong level, and a misremembered line that oldString and newString share (an `else:`
branch the file does not have) is inserted. Instead, the change is taken as the line
diff from oldString to newString and replayed on the lines actually found:

- each of oldString's lines is paired with the file line it stands for (equal once
  whitespace and Unicode punctuation are normalised, else the most similar line in
  the gap between equal ones, if it is close and unique there);
- lines oldString and newString share are context: the file keeps its own version of
  them, and context the file does not have is left out, not added;
- the lines the diff removes or replaces must each have a file line paired with
  them; otherwise the change has no target in the file and is refused, quoting the
  closest lines, rather than applied somewhere;
- added lines move by the indentation offset between the model's lines and the
  file's (per line, from the nearest paired line), in the file's tabs or spaces,
  unless newString was written for the file as it is (`indentation.Reindent`);
- a line replaced line for line keeps what the file has around the change (curly
  quotes, trailing spaces, a comment's wording the model misremembered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from app.tools.text.indentation import SAMPLED_LINES, Reindent, indent_of
from app.tools.text.punctuation import plain_line
from app.tools.text.replacers import MIN_MIDDLE_SIMILARITY, Lines

QUOTED_LINES = 3
"""At most this many lines the file lacks are quoted in a refusal."""


class ChangeNotInFile(Exception):  # noqa: N818 - reads as the condition it reports
    """The lines the edit changes are not in the text that matched; the message quotes
    them with the closest lines of the file."""


@dataclass
class Adapted:
    """The replacement for the matched lines and what was done to fit it to them."""

    text: str
    notes: list[str] = field(default_factory=list)


def adapt_span(old: str, new: str, text: str, start: int, end: int) -> Adapted:
    """The text to put in place of `text[start:end]` (whole lines of the file `text`),
    applying the change from `old` to `new`; raises ChangeNotInFile."""
    matched = text[start:end]
    old_lines, new_lines, found = old.split("\n"), new.split("\n"), matched.split("\n")
    pairs = _pair(old_lines, found)
    result: list[str | None] = list(found)  # None: a file line the change removes
    inserted: dict[int, list[str]] = {}  # before which file line (len(found): at the end)
    style = Reindent(old_lines, new_lines, found, pairs, lambda: text.split("\n", SAMPLED_LINES))
    anchors = sorted(i for i, at in pairs.items() if old_lines[i].strip() and found[at].strip())
    missing: list[str] = []  # lines the change removes that the file does not have
    unnamed: list[int] = []  # file lines inside a replaced block that oldString does not have
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        missing += [old_lines[i] for i in range(i1, i2) if i not in pairs and old_lines[i].strip()]
        held = [pairs[i] for i in range(i1, i2) if i in pairs]
        for at in held:
            result[at] = None
        added = [style.shift(new_lines[j], _anchor(j - j1, i1, i2, anchors)) for j in range(j1, j2)]
        if held and len(held) == i2 - i1 == j2 - j1:  # line for line: each takes its old line's place
            for at, (i, line) in zip(held, enumerate(added, start=i1), strict=True):
                result[at] = _merge_line(old_lines[i], line, found[at])
            continue
        # Lines replaced as a block: file lines among them that oldString did not name
        # (the model did not know of them) go with them if blank, and stop the edit if not.
        for at in range(held[0], held[-1] + 1) if held else ():
            if result[at] is not None:
                unnamed += [at] if found[at].strip() else []
                result[at] = None
        inserted.setdefault(held[0] if held else _insertion_point(i1, pairs, len(found)), []).extend(added)
    if missing or unnamed:
        first_line = text.count("\n", 0, start)
        raise ChangeNotInFile(
            _refusal(missing, [(first_line + at, found[at]) for at in unnamed], text, first_line, len(found))
        )
    lines: list[str] = []
    for at, kept in enumerate(result):
        lines += inserted.get(at, [])
        if kept is not None:
            lines.append(kept)
    lines += inserted.get(len(found), [])
    return Adapted("\n".join(lines), [*style.notes(), *_context_notes(old_lines, new_lines, found, pairs)])


def _pair(old_lines: list[str], found: list[str]) -> dict[int, int]:
    """oldString's line index -> the index of the matched line it stands for."""
    if len(old_lines) == len(found) and all(
        a.strip() == b.strip() for a, b in zip(old_lines, found, strict=True)
    ):
        return dict(zip(range(len(old_lines)), range(len(found)), strict=True))
    old_keys, found_keys = list(map(plain_line, old_lines)), list(map(plain_line, found))
    pairs: dict[int, int] = {}
    matcher = SequenceMatcher(None, old_keys, found_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.update(zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "replace":
            pairs.update(_pair_similar(old_keys, found_keys, range(i1, i2), range(j1, j2)))
    return pairs


def _pair_similar(old_keys: list[str], found_keys: list[str], olds: range, founds: range) -> dict[int, int]:
    """In a gap between equal lines, each old line paired with its most similar matched
    line after the previous pair, if at least MIN_MIDDLE_SIMILARITY close and no other
    line there is as close (a tie names no line)."""
    pairs: dict[int, int] = {}
    start = founds.start
    for i in olds:
        if not old_keys[i]:
            continue
        scores = sorted(
            (
                (Levenshtein.normalized_similarity(old_keys[i], found_keys[j]), j)
                for j in range(start, founds.stop)
            ),
            reverse=True,
        )
        if not scores or scores[0][0] < MIN_MIDDLE_SIMILARITY:
            continue
        if len(scores) > 1 and scores[1][0] == scores[0][0]:
            continue
        pairs[i] = scores[0][1]
        start = scores[0][1] + 1
    return pairs


def _anchor(offset: int, i1: int, i2: int, anchors: list[int]) -> int | None:
    """The old line whose indentation pair moves the new line `offset` lines into a
    change of old lines i1..i2: the old line in the same position (the last one when
    the new side is longer; the line before an insertion), else the nearest of
    `anchors` (the paired, non-blank old lines), the earlier one on a tie."""
    own = i1 + min(offset, i2 - i1 - 1) if i2 > i1 else i1 - 1
    return min(anchors, key=lambda i: (abs(i - own), i > own), default=None)


def _insertion_point(i1: int, pairs: dict[int, int], end: int) -> int:
    """Where lines added before old line i1 go among the matched lines: after the file
    line paired with the closest old line before it, else before the next paired one."""
    before = [pairs[i] for i in pairs if i < i1]
    if before:
        return max(before) + 1
    after = [pairs[i] for i in pairs if i >= i1]
    return min(after) if after else end


def _merge_line(old: str, new: str, file: str) -> str:
    """`new` (written over `old`, already re-indented) as the same change made to the
    file's version of the line: each piece newString changes in oldString is changed
    where the file has that piece, so what the model misremembered around it (curly
    quotes, trailing spaces, a comment's wording) stays as the file has it. When a
    change falls on text the file does not have, `new` as written."""
    old_text, file_text, new_text = old.lstrip(" \t"), file.lstrip(" \t"), new.lstrip(" \t")
    if old_text == file_text:
        return new
    same = [
        (i1, i2, j1 - i1)
        for tag, i1, i2, j1, _ in SequenceMatcher(None, old_text, file_text, autojunk=False).get_opcodes()
        if tag == "equal"
    ]
    pieces, done = [], 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_text, new_text, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        shift = next((shift for start, end, shift in same if start <= i1 and i2 <= end), None)
        if shift is None:
            return new
        pieces += [file_text[done : i1 + shift], new_text[j1:j2]]
        done = i2 + shift
    return indent_of(new) + "".join(pieces) + file_text[done:]


def _context_notes(
    old_lines: list[str], new_lines: list[str], found: list[str], pairs: dict[int, int]
) -> list[str]:
    """Notes on context (lines oldString and newString share) that differs from the file."""
    new_set = set(new_lines)
    shared = [i for i, line in enumerate(old_lines) if line in new_set and line.strip()]
    kept = [i for i in shared if i in pairs and old_lines[i].strip() != found[pairs[i]].strip()]
    absent = [i for i in shared if i not in pairs]
    notes = []
    if kept:
        notes.append(
            f"kept the file's version of {_count(len(kept), 'line')} that oldString quotes differently"
        )
    if absent:
        notes.append(
            f"left out {_count(len(absent), 'line')} of oldString that the file does not have "
            f"(first: {_quote(old_lines[absent[0]])}), so newString's copy of them was not added"
        )
    return notes


def _refusal(
    missing: list[str], unnamed: list[tuple[int, str]], text: str, first_line: int, height: int
) -> str:
    """Why the change cannot be applied: the lines it changes (`missing`) that the
    matched lines (`height` of them from `first_line`, 0-based) lack, each with the
    file's closest line, and the file's lines (numbered, 0-based) inside a replaced
    block that oldString lacks."""
    where = f"lines {first_line + 1}-{first_line + height}" if height > 1 else f"line {first_line + 1}"
    problems = []
    if missing:
        file_lines = text.split("\n")
        quoted = "; ".join(
            f"{_quote(line)} (closest in the file: {closest_line(line, file_lines)})"
            for line in missing[:QUOTED_LINES]
        )
        more = f" and {len(missing) - QUOTED_LINES} more" if len(missing) > QUOTED_LINES else ""
        problems.append(f"the lines newString changes are not there: {quoted}{more}")
    if unnamed:
        quoted = "; ".join(f"line {number + 1} {_quote(line)}" for number, line in unnamed[:QUOTED_LINES])
        more = f" and {len(unnamed) - QUOTED_LINES} more" if len(unnamed) > QUOTED_LINES else ""
        problems.append(f"the lines newString replaces enclose lines oldString does not have: {quoted}{more}")
    return (
        f"Could not apply the edit: oldString matched {where} only loosely, and {'; and '.join(problems)}. "
        "Nothing was changed; read the file again and copy the lines to change exactly."
    )


def closest_lines(file: Lines, old: str) -> str:
    """A sentence quoting the file's line closest to the first line of `old` that the
    file lacks, or saying that each is there but not together. Cheap on purpose (one
    substring search per line, one similarity sweep): a refusal should not cost more
    than the search that failed."""
    absent = [line for line in old.split("\n") if line.strip() and line.strip() not in file.content]
    if not absent:
        return "Each of its lines is in the file, but not together as oldString has them."
    others = (
        f" ({_count(len(absent) - 1, 'other line')} of it not in the file either)" if len(absent) > 1 else ""
    )
    closest = closest_line(absent[0], file.lines)
    return f"Its line {_quote(absent[0])} is not in the file{others}; the closest line there: {closest}."


def closest_line(line: str, file_lines: list[str]) -> str:
    """The line of the file most like `line` (indentation counted), with its number, or
    a note that none is alike."""
    best = process.extractOne(line, file_lines, scorer=fuzz.ratio)
    if best is None or best[1] == 0:
        return "no line is alike"
    return f"line {best[2] + 1} {_quote(best[0])}"


def _quote(line: str, limit: int = 80) -> str:
    text = line.strip()
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"
