"""Line diffs: unified diff text and (additions, deletions) stats from one matching core.

Lines are split the way git splits them: on "\\n" only (a lone "\\r" is content), and a
last line without a newline differs from the same text with one (git counts that as a
change too). `diff_stats` and `unified_diff` use the same matcher (`_match`), so the stats
always equal the number of "+" and "-" lines of the unified diff.

The matcher is exact (a minimal diff, like git's default Myers diff) for ordinary edits
and stays fast on big files:
1. the common prefix and suffix are matched first, so a pure addition or removal costs
   one pass over the lines;
2. lines that occur on one side only can never match, so they are set aside before
   Myers runs (the longest common subsequence is unchanged); scattered one-line edits
   usually leave nothing for Myers to do;
3. Myers' O(ND) search is capped at `_MAX_EDIT_COST` edits. Past it (a rewrite or a
   reordering of thousands of lines) the region is split on lines unique to both sides
   (patience anchors) and each piece is matched again; the result is still a correct
   diff, only possibly not the shortest one.

A caller that knows where the changes are (a patch knows which lines each hunk replaced)
passes them to `unified_diff_regions`, which matches only inside those regions.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import ne
from typing import cast

Block = tuple[int, int, int]
"""(old_start, new_start, length): a run of equal lines."""

Region = tuple[int, int, int, int]
"""(old_start, old_end, new_start, new_end), 0-based, ends excluded: old lines
[old_start:old_end] became new lines [new_start:new_end]."""

_MAX_EDIT_COST = 500
"""Myers gives up past this many edits in one region (its cost grows with the square)."""

_NO_NEWLINE_MARKER = "\\ No newline at end of file"


@dataclass(frozen=True, slots=True)
class _Unterminated:
    """A last line without its newline: never equal to the same text with one, as in git."""

    text: str


Line = str | _Unterminated


def _split_lines(text: str) -> list[Line]:
    """Lines without their "\\n"; a final line that had none is wrapped in _Unterminated."""
    parts = text.split("\n")
    last = parts.pop()
    lines: list[Line] = list(parts)
    if last:
        lines.append(_Unterminated(last))
    return lines


def diff_stats(old: str, new: str) -> tuple[int, int]:
    """(additions, deletions) in lines, as `git diff --numstat` counts them."""
    if old == new:
        return 0, 0
    a, b = _split_lines(old), _split_lines(new)
    matched = sum(size for _, _, size in _matching_blocks(a, b))
    return len(b) - matched, len(a) - matched


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """Unified diff text with `--- a/<path>` / `+++ b/<path>` headers; "" when equal."""
    if old == new:
        return ""
    a, b = _split_lines(old), _split_lines(new)
    hunks = _hunks(_changes(a, b, (0, len(a), 0, len(b))), context)
    shown_a, shown_b = _printable(a), _printable(b)
    return _render(path, [_render_hunk(hunk, shown_a, shown_b, context) for hunk in hunks])


def unified_diff_regions(old: str, new: str, path: str, regions: Iterable[Region], context: int = 3) -> str:
    """`unified_diff` for a caller that knows where the changes are (a patch knows which
    lines each hunk replaced): lines are matched only inside `regions`, so a few edits
    in a big file cost little more than splitting it into lines.

    Every line outside the regions must be unchanged, its newline included (a last line
    that gains or loses one is a changed line). Regions come in order and do not
    overlap, and the stretches between them are as long on both sides (ValueError
    otherwise). Where regions are more than 2 * context lines apart and each change has
    one best alignment, the text equals `unified_diff`'s; otherwise a change may be
    placed differently, never wrongly."""
    if old == new:
        return ""
    a, b = _split_lines(old), _split_lines(new)
    changes: list[Change] = []
    for region in _joined(regions, len(a), len(b)):
        changes += _changes(a, b, region)
    shown_a, shown_b = _printable(a), _printable(b)
    return _render(path, [_render_hunk(hunk, shown_a, shown_b, context) for hunk in _hunks(changes, context)])


def _joined(regions: Iterable[Region], old_total: int, new_total: int) -> list[Region]:
    """The regions checked, with touching ones joined (their changes may then merge)."""
    joined: list[Region] = []
    old_end = new_end = 0
    for i1, i2, j1, j2 in regions:
        if not (old_end <= i1 <= i2 <= old_total and new_end <= j1 <= j2 <= new_total) or (
            i1 - old_end != j1 - new_end
        ):
            raise ValueError(
                f"bad diff region {(i1, i2, j1, j2)} after line {old_end}/{new_end} of {old_total}/{new_total}: "
                "regions must come in order, not overlap, and be as far apart in the old text as in the new"
            )
        if joined and i1 == old_end:
            joined[-1] = (joined[-1][0], i2, joined[-1][2], j2)
        else:
            joined.append((i1, i2, j1, j2))
        old_end, new_end = i2, j2
    if old_total - old_end != new_total - new_end:
        raise ValueError(
            f"bad diff regions: {old_total - old_end} old but {new_total - new_end} new lines after the last"
        )
    return joined


# --- hunks ---------------------------------------------------------------------------

Change = tuple[int, int, int, int]
"""(old_start, old_end, new_start, new_end): lines old[i1:i2] replaced by new[j1:j2]."""


def _changes(a: list[Line], b: list[Line], region: Region) -> list[Change]:
    """The gaps between matching blocks inside `region`: every place there where old and
    new differ."""
    i, i_end, j, j_end = region
    runs: list[Block] = []
    _match(a, i, i_end, b, j, j_end, runs)
    changes = []
    for bi, bj, size in [*runs, (i_end, j_end, 0)]:
        if i < bi or j < bj:
            changes.append((i, bi, j, bj))
        i, j = bi + size, bj + size
    return changes


def _render(path: str, hunks: list[str]) -> str:
    return f"--- a/{path}\n+++ b/{path}\n" + "".join(hunks) if hunks else ""


def _hunks(changes: list[Change], context: int) -> list[list[Change]]:
    """Group changes whose equal gap is short enough to share their context lines."""
    hunks: list[list[Change]] = []
    for change in changes:
        if hunks and change[0] - hunks[-1][-1][1] <= 2 * context:
            hunks[-1].append(change)
        else:
            hunks.append([change])
    return hunks


def _render_hunk(hunk: list[Change], a: list[str], b: list[str], context: int) -> str:
    """One hunk's text; `a` and `b` are the printable lines (see `_printable`). Each run of
    lines is prefixed in C (`map`), not line by line."""
    first, last = hunk[0], hunk[-1]
    old_start = max(0, first[0] - context)
    new_start = first[2] - (first[0] - old_start)
    old_end = min(len(a), last[1] + context)
    new_end = last[3] + (old_end - last[1])
    body: list[str] = []
    pos = old_start
    for i1, i2, j1, j2 in hunk:
        body += map(" ".__add__, a[pos:i1])
        body += map("-".__add__, a[i1:i2])
        body += map("+".__add__, b[j1:j2])
        pos = i2
    body += map(" ".__add__, a[pos:old_end])
    return f"@@ -{_range(old_start, old_end)} +{_range(new_start, new_end)} @@\n" + "\n".join(body) + "\n"


def _printable(lines: list[Line]) -> list[str]:
    """The lines as diff text shows them: a last line without a newline is followed by
    git's marker (only a text's last line can be one). Only that last line is looked at:
    the others are strings already, and the list is used as it is."""
    if lines and isinstance(last := lines[-1], _Unterminated):
        return [*cast("list[str]", lines[:-1]), f"{last.text}\n{_NO_NEWLINE_MARKER}"]
    return cast("list[str]", lines)


def _range(start: int, end: int) -> str:
    """GNU range: "start,length", 1-based; length 1 is implied; an empty range names the
    line before it."""
    length = end - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


# --- matching core -------------------------------------------------------------------


def _matching_blocks(a: Sequence[Line], b: Sequence[Line]) -> list[Block]:
    """Runs of equal lines, in order, adjacent runs merged."""
    runs: list[Block] = []
    _match(a, 0, len(a), b, 0, len(b), runs)
    merged: list[Block] = []
    for i, j, size in runs:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + size)
        else:
            merged.append((i, j, size))
    return merged


def _match(
    a: Sequence[Line], alo: int, ahi: int, b: Sequence[Line], blo: int, bhi: int, out: list[Block]
) -> None:
    """Append the matching blocks of a[alo:ahi] and b[blo:bhi] to `out`, in order."""
    a_part, b_part = a[alo:ahi], b[blo:bhi]
    shorter = min(len(a_part), len(b_part))
    prefix = next(compress(count(), map(ne, a_part, b_part)), shorter)
    suffix = next(compress(count(), map(ne, reversed(a_part), reversed(b_part))), shorter)
    suffix = min(suffix, shorter - prefix)  # a line is in the prefix or the suffix, not both
    if prefix:
        out.append((alo, blo, prefix))
    alo, blo, ahi, bhi = alo + prefix, blo + prefix, ahi - suffix, bhi - suffix
    if alo < ahi and blo < bhi:
        _match_middle(a, alo, ahi, b, blo, bhi, out)
    if suffix:
        out.append((ahi, bhi, suffix))


def _match_middle(
    a: Sequence[Line], alo: int, ahi: int, b: Sequence[Line], blo: int, bhi: int, out: list[Block]
) -> None:
    """Myers over the lines that occur on both sides; the others cannot match anyway."""
    a_part, b_part = a[alo:ahi], b[blo:bhi]
    a_shared = list(map(set(b_part).__contains__, a_part))
    if not any(a_shared):
        return  # nothing in common: all of it changed
    b_shared = list(map(set(a_part).__contains__, b_part))
    a_kept = list(compress(range(alo, ahi), a_shared))
    b_kept = list(compress(range(blo, bhi), b_shared))
    snakes = _myers(list(compress(a_part, a_shared)), list(compress(b_part, b_shared)), _MAX_EDIT_COST)
    if snakes is None:
        _match_on_anchors(a, alo, ahi, b, blo, bhi, out)
        return
    for x, y, size in snakes:
        while size:  # a run of kept lines may straddle set-aside ones: split it there
            run = min(_consecutive_run(a_kept, x, size), _consecutive_run(b_kept, y, size))
            out.append((a_kept[x], b_kept[y], run))
            x, y, size = x + run, y + run, size - run


def _equal_run(a: Sequence[Line], alo: int, ahi: int, b: Sequence[Line], blo: int, bhi: int) -> int:
    """How many lines are equal from a[alo] and b[blo] on. Compares slices of doubling
    size, so long runs cost C speed, not one Python step per line."""
    limit = min(ahi - alo, bhi - blo)
    run, step = 0, 8
    while run < limit:
        end = min(run + step, limit)
        a_chunk, b_chunk = a[alo + run : alo + end], b[blo + run : blo + end]
        if a_chunk != b_chunk:
            return run + next(compress(count(), map(ne, a_chunk, b_chunk)))
        run, step = end, step * 2
    return run


def _consecutive_run(indexes: list[int], start: int, size: int) -> int:
    """How many of indexes[start:start + size] are consecutive integers (binary search:
    the gaps are few, the runs long)."""
    first = indexes[start]
    return bisect_left(range(size), True, key=lambda step: indexes[start + step] - first != step)


def _myers(a: Sequence[Line], b: Sequence[Line], max_cost: int) -> list[Block] | None:
    """The equal runs ("snakes") of a shortest edit script (Myers 1986), or None when it
    needs more than `max_cost` edits."""
    n, m = len(a), len(b)
    limit = min(n + m, max_cost)
    offset = limit + 1
    v = [0] * (2 * limit + 3)
    trace: list[list[int]] = []
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            if x < n and y < m and a[x] == b[y]:
                run = _equal_run(a, x, n, b, y, m)
                x, y = x + run, y + run
            v[offset + k] = x
            if x >= n and y >= m:
                return _myers_backtrack(trace, n, m, d)
        trace.append(v[offset - d : offset + d + 1])
    return None


def _myers_backtrack(trace: list[list[int]], x: int, y: int, cost: int) -> list[Block]:
    """Walk the saved frontiers back from the end (x, y), collecting the snakes."""
    snakes: list[Block] = []
    for d in range(cost, 0, -1):
        frontier = trace[d - 1]  # diagonal k is at frontier[k + d - 1]
        k = x - y
        if k == -d or (k != d and frontier[k + d - 2] < frontier[k + d]):
            prev_k = k + 1  # came down: an insertion
            snake_x = frontier[prev_k + d - 1]
        else:
            prev_k = k - 1  # came right: a deletion
            snake_x = frontier[prev_k + d - 1] + 1
        if x > snake_x:
            snakes.append((snake_x, snake_x - k, x - snake_x))
        x = frontier[prev_k + d - 1]
        y = x - prev_k
    if x:
        snakes.append((0, 0, x))
    snakes.reverse()
    return snakes


def _match_on_anchors(
    a: Sequence[Line], alo: int, ahi: int, b: Sequence[Line], blo: int, bhi: int, out: list[Block]
) -> None:
    """Patience split for regions too costly for Myers: keep the lines that occur exactly
    once on each side, in the longest order-preserving run, and match between them."""
    count_a, count_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    b_position = {b[j]: j for j in range(blo, bhi) if count_b[b[j]] == 1 and count_a[b[j]] == 1}
    candidates = [(i, b_position[a[i]]) for i in range(alo, ahi) if a[i] in b_position]
    anchors = _longest_increasing_by_second(candidates)
    i, j = alo, blo
    for ai, bj in anchors:
        _match(a, i, ai, b, j, bj, out)
        out.append((ai, bj, 1))
        i, j = ai + 1, bj + 1
    if anchors:
        _match(a, i, ahi, b, j, bhi, out)
    # Without anchors the whole region is left unmatched: delete old, insert new.


def _longest_increasing_by_second(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest subsequence of `pairs` (sorted by first) whose second items increase."""
    tails: list[int] = []  # tails[n]: smallest second item ending an increasing run of n+1
    tail_index: list[int] = []
    previous: list[int] = []
    for index, (_, second) in enumerate(pairs):
        length = bisect_left(tails, second)
        if length == len(tails):
            tails.append(second)
            tail_index.append(index)
        else:
            tails[length] = second
            tail_index[length] = index
        previous.append(tail_index[length - 1] if length else -1)
    result = []
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        result.append(pairs[index])
        index = previous[index]
    result.reverse()
    return result
