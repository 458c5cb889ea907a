"""Properties: nothing but PatchError escapes, and generated patches give the expected file."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from app.core.diff import unified_diff_regions
from app.tools.text.patch import PatchError, parse_patch, plan_patch
from tests.workspace.test_diff import _apply as apply_diff

# Few distinct lines, some differing only in whitespace: repeats and loose matches abound.
WORDS = ["a", "a ", " a", "b", "", "}", "x = 1", "say \u201chi\u201d", "\u2014"]
PATCH_LINES = [
    "*** Begin Patch",
    " *** End Patch ",
    "*** End Patch",
    "*** Add File: a",
    "*** Update File: a",
    "*** Update File: ../b",
    "*** Delete File: a",
    "*** Move to: b",
    "*** Move to: /b",
    "*** End of File",
    "*** Frobnicate",
    "@@",
    "@@ a",
    "@@ -1,2 +1,2 @@",
    "<<'EOF'",
    "EOF",
    "+a",
    "-a",
    " a",
    "-b",
    "+",
    "",
    "\t",
    "junk",
]

patch_settings = settings(max_examples=200)
"""This module's example count, on its own tests only (a loaded profile would set it for
every test collected after this module)."""


def attempt(text: str, files: dict[str, bytes]) -> None:
    """Parse and plan; a PatchError is a fine outcome, anything else fails the test."""
    try:
        plan_patch(parse_patch(text), files.get, allow_delete=True)
    except PatchError as error:
        assert "\n" not in str(error)


patch_lines = st.lists(st.sampled_from(PATCH_LINES) | st.text(max_size=8), max_size=14)
# Half the time inside a valid envelope and an Update section, so the body gets parsed.
patchish_text = st.builds("\n".join, patch_lines) | st.builds(
    lambda body: "\n".join(["*** Begin Patch", "*** Update File: a", *body, "*** End Patch"]), patch_lines
)
some_files = st.dictionaries(st.sampled_from(["a", "b"]), st.binary(max_size=40) | st.just(b"a\nb\na\n"))


@patch_settings
@given(st.text())
def test_any_text_raises_only_patch_error(text: str) -> None:
    attempt(text, {"a": b"a\n"})


@patch_settings
@given(patchish_text, some_files)
@example("*** Begin Patch\n*** Update File: a\n@@\n+x\n\n*** End Patch", {"a": b"a\n"})
def test_patch_like_text_raises_only_patch_error(text: str, files: dict[str, bytes]) -> None:
    attempt(text, files)


# --- generated edits -------------------------------------------------------------------


@dataclass
class Case:
    """A file, a patch made from random edits of it, and the bytes the patch must give."""

    content: bytes
    patch: str
    expected: bytes


def _unique_from(lines: list[str], block: list[str], start: int) -> bool:
    size = len(block)
    return sum(lines[at : at + size] == block for at in range(start, len(lines) - size + 1)) == 1


def _hunk_bounds(lines: list[str], start: int, end: int, floor: int) -> tuple[int, int] | None:
    """The smallest context around lines[start:end] that is not empty and occurs once
    from ``floor`` on (what the planner needs to place it without a guess)."""
    for grow in range(len(lines) + 1):
        for before in range(grow + 1):
            first, last = start - before, end + grow - before
            if first >= floor and last <= len(lines) and first < last:
                if _unique_from(lines, lines[first:last], floor):
                    return first, last
    return None


@st.composite
def edited_files(draw: st.DrawFn) -> Case:
    lines = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    final_newline = draw(st.booleans()) or lines[-1] == ""
    bom = "\ufeff" if draw(st.booleans()) else ""
    cuts = sorted(draw(st.lists(st.integers(0, len(lines)), min_size=2, max_size=10)))
    hunks: list[str] = []
    result: list[tuple[str, int | None]] = []  # (text, index in the old file or None if new)

    def kept(first: int, last: int) -> list[tuple[str, int | None]]:
        return [(lines[i], i) for i in range(first, last)]

    floor = 0
    for start, end in zip(cuts[0::2], cuts[1::2], strict=False):
        added = draw(st.lists(st.sampled_from([*WORDS, "NEW"]), max_size=3))
        bounds = _hunk_bounds(lines, start, end, floor)
        if bounds is None or (start == end and not added):
            continue
        first, last = bounds
        body = [f" {line}" for line in lines[first:start]]
        body += [f"-{line}" for line in lines[start:end]] + [f"+{line}" for line in added]
        body += [f" {line}" for line in lines[end:last]]
        if last == len(lines) and draw(st.booleans()):
            body.append("*** End of File")
        hunks.append("@@\n" + "\n".join(body))
        result += kept(floor, start) + [(line, None) for line in added] + kept(end, last)
        floor = last
    assume(hunks)
    result += kept(floor, len(lines))
    old = ending.join(lines) + (ending if final_newline else "")
    # A missing final newline stays missing, unless the new last line is empty.
    keeps_open = not final_newline and bool(result) and result[-1][0] != ""
    # A file without any line ending says nothing: new lines then end with "\n".
    new_ending = ending if len(lines) > 1 or final_newline else "\n"
    new = "".join(text + new_ending for text, _ in result)
    if keeps_open:
        new = new.removesuffix(new_ending)
    patch = "*** Begin Patch\n*** Update File: f\n" + "\n".join(hunks) + "\n*** End Patch\n"
    return Case((bom + old).encode(), patch, (bom + new).encode())


@patch_settings
@given(edited_files())
def test_generated_patch_gives_the_expected_file(case: Case) -> None:
    (op,) = plan_patch(parse_patch(case.patch), {"f": case.content}.get).ops
    assert op.new_bytes == case.expected


@patch_settings
@given(edited_files(), st.data())
def test_mutated_patches_raise_only_patch_error(case: Case, data: st.DataObject) -> None:
    lines = case.patch.split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(lines) - 1))
        mutation = data.draw(st.sampled_from(["drop", "repeat", "insert", "strip prefix", "swap"]))
        if mutation == "drop":
            del lines[at]
        elif mutation == "repeat":
            lines.insert(at, lines[at])
        elif mutation == "insert":
            lines.insert(at, data.draw(st.sampled_from(PATCH_LINES)))
        elif mutation == "strip prefix":
            lines[at] = lines[at][1:]
        else:
            lines[at], lines[-at - 1] = lines[-at - 1], lines[at]
        if not lines:
            break
    attempt("\n".join(lines), {"f": case.content})


@patch_settings
@given(edited_files())
def test_regions_hold_every_change(case: Case) -> None:
    """The plan's regions give a diff that turns the old text into the new one."""
    (op,) = plan_patch(parse_patch(case.patch), {"f": case.content}.get).ops
    old, new = case.content.decode(), case.expected.decode()
    if op.regions is None:
        assert old.startswith("\ufeff")  # only a BOM hides them in these cases
        return
    assert apply_diff(old, unified_diff_regions(old, new, "f", op.regions)) == new
