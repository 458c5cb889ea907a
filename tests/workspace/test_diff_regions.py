"""unified_diff_regions: the diff of a text whose changed line ranges are known."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.diff import Region, diff_stats, unified_diff, unified_diff_regions
from tests.workspace.test_diff import _apply, _counts

WORDS = ["a", "b", "c", "", "a\r"]


@dataclass
class Edited:
    """Two texts and regions that hold every difference between them."""

    old: str
    new: str
    regions: list[Region]


def _text(lines: list[str], final_newline: bool) -> str:
    return "".join(line + "\n" for line in lines) if final_newline else "\n".join(lines)


@st.composite
def edited_texts(
    draw: st.DrawFn,
    gap_lines: st.SearchStrategy[list[str]],
    old_content: st.SearchStrategy[list[str]],
    single_alignment: bool = False,
) -> Edited:
    """Unchanged stretches (``gap_lines``) around regions of ``old_content`` lines, each
    rewritten into some of its own lines, in order, and added lines: from ``WORDS`` or
    found nowhere else. Either text may lack its final newline. ``single_alignment``:
    added lines are always new ones and both texts end alike."""
    fresh = single_alignment or draw(st.booleans())
    new_lines = (f"new {n}" for n in range(10**6))
    old: list[str] = []
    new: list[str] = []
    regions: list[Region] = []
    for _ in range(draw(st.integers(1, 4))):
        gap = draw(gap_lines)
        old += gap
        new += gap
        before = draw(old_content)
        after = []
        for line in before + [""]:  # a chance to add a line after the last one too
            if draw(st.booleans()):
                after.append(next(new_lines) if fresh else draw(st.sampled_from(WORDS)))
            if line and draw(st.booleans()):
                after.append(line)
        regions.append((len(old), len(old) + len(before), len(new), len(new) + len(after)))
        old += before
        new += after
    tail = draw(gap_lines)
    old += tail
    new += tail
    # A text whose last line is empty ends with a newline, or that line is not there.
    old_final = draw(st.booleans()) or not old or old[-1] == ""
    new_final = (old_final if single_alignment else draw(st.booleans())) or not new or new[-1] == ""
    if not (old_final and new_final):
        _cover_last_lines(regions, len(old), len(new))
    return Edited(_text(old, old_final), _text(new, new_final), regions)


def _cover_last_lines(regions: list[Region], old_total: int, new_total: int) -> None:
    """Stretch the last regions (joined when they touch) over both texts' last lines and
    the line before them: a line without its newline differs from the same line with one."""
    i1, _, j1, _ = regions.pop()
    while regions and regions[-1][1] == i1:
        i1, _, j1, _ = regions.pop()
    if i1 > (regions[-1][1] if regions else 0):
        i1, j1 = i1 - 1, j1 - 1
    regions.append((i1, old_total, j1, new_total))


def _unique(prefix: str, size: int) -> st.SearchStrategy[list[str]]:
    """``size`` lines found nowhere else (each draw gets fresh ones)."""
    return st.integers(0, 10**9).map(lambda seed: [f"{prefix} {seed} {n}" for n in range(size)])


unique_lines = st.integers(0, 4).flatmap(lambda size: _unique("old", size))
# Small alphabets: repeats and ties everywhere, regions may touch.
any_edits = edited_texts(
    st.lists(st.sampled_from(WORDS), max_size=8), st.lists(st.sampled_from(WORDS), max_size=4)
)
# Unchanged stretches longer than 2 * context and than all regions together, made of
# lines nothing else has: no diff can do better by matching lines across them.
far_apart_edits = edited_texts(_unique("gap", 20), st.lists(st.sampled_from(WORDS), max_size=4))
# ... and regions whose lines are unique too, each new one kept from the old or fresh:
# every change has a single best alignment.
single_alignment_edits = edited_texts(_unique("gap", 20), unique_lines, single_alignment=True)


@settings(max_examples=300, deadline=None)
@given(any_edits, st.integers(0, 4))
def test_regions_diff_applied_to_the_old_text_gives_the_new(edit: Edited, context: int) -> None:
    diff = unified_diff_regions(edit.old, edit.new, "f", edit.regions, context=context)
    assert _apply(edit.old, diff) == edit.new


@settings(max_examples=300, deadline=None)
@given(far_apart_edits)
def test_counts_equal_diff_stats_when_regions_are_far_apart(edit: Edited) -> None:
    diff = unified_diff_regions(edit.old, edit.new, "f", edit.regions)
    assert _counts(diff) == diff_stats(edit.old, edit.new)


@settings(max_examples=300, deadline=None)
@given(single_alignment_edits, st.integers(0, 3))
def test_equals_the_full_diff_when_regions_are_apart_and_alignments_unique(
    edit: Edited, context: int
) -> None:
    assert unified_diff_regions(edit.old, edit.new, "f", edit.regions, context) == unified_diff(
        edit.old, edit.new, "f", context
    )


# --- edge cases ------------------------------------------------------------------------------

LINES = [f"line {n}" for n in range(20)]
OLD = "".join(line + "\n" for line in LINES)


def _replaced(at: int, *lines: str, final_newline: bool = True) -> str:
    text = "".join(line + "\n" for line in [*LINES[:at], *lines, *LINES[at + 1 :]])
    return text if final_newline else text[:-1]


@pytest.mark.parametrize("at", [0, 19])
def test_edit_at_the_first_or_last_line(at: int) -> None:
    new = _replaced(at, "changed")
    assert unified_diff_regions(OLD, new, "f", [(at, at + 1, at, at + 1)]) == unified_diff(OLD, new, "f")


def test_final_newline_gained_or_lost_inside_the_last_region() -> None:
    lost = OLD[:-1]
    assert unified_diff_regions(OLD, lost, "f", [(19, 20, 19, 20)]) == unified_diff(OLD, lost, "f")
    assert unified_diff_regions(lost, OLD, "f", [(18, 20, 18, 20)]) == unified_diff(lost, OLD, "f")
    appended = lost + "\nmore\n"
    assert unified_diff_regions(lost, appended, "f", [(19, 20, 19, 21)]) == unified_diff(lost, appended, "f")


def test_touching_regions_give_the_diff_of_one_region() -> None:
    new = _replaced(5, "five", "and a half")
    new = new.replace("line 6\n", "six\n")
    joined = unified_diff_regions(OLD, new, "f", [(5, 7, 5, 8)])
    assert unified_diff_regions(OLD, new, "f", [(5, 6, 5, 7), (6, 7, 7, 8)]) == joined
    assert joined == unified_diff(OLD, new, "f")


def test_regions_that_turn_out_unchanged_add_nothing() -> None:
    new = _replaced(10, "ten")
    regions = [(0, 3, 0, 3), (10, 11, 10, 11), (15, 20, 15, 20)]
    assert unified_diff_regions(OLD, new, "f", regions) == unified_diff(OLD, new, "f")
    assert unified_diff_regions(OLD, OLD, "f", [(2, 4, 2, 4)]) == ""


def test_pure_insertion_and_removal_regions() -> None:
    inserted = OLD.replace("line 4\n", "line 4\nnew\n")
    assert unified_diff_regions(OLD, inserted, "f", [(5, 5, 5, 6)]) == unified_diff(OLD, inserted, "f")
    removed = OLD.replace("line 4\n", "")
    assert unified_diff_regions(OLD, removed, "f", [(4, 5, 4, 4)]) == unified_diff(OLD, removed, "f")


@pytest.mark.parametrize(
    "regions",
    [
        [(5, 7, 5, 7), (6, 8, 6, 8)],  # overlapping
        [(8, 9, 8, 9), (2, 3, 2, 3)],  # out of order
        [(2, 3, 2, 3), (8, 9, 9, 10)],  # the stretch between them differs in length
        [(19, 21, 19, 21)],  # past the end
        [(2, 3, 2, 4)],  # leaves fewer new lines than old after it
    ],
)
def test_inconsistent_regions_are_refused(regions: list[Region]) -> None:
    new = _replaced(2, "two")
    with pytest.raises(ValueError, match="bad diff region"):
        unified_diff_regions(OLD, new, "f", regions)
