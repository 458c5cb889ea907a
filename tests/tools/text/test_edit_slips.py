"""The slips models make in edit calls (edit_slips.json), through the real edit tool on
disk: indentation off by a level either way, tabs for spaces, a misremembered context
line or middle, trailing whitespace, plain quotes for curly ones, the view tool's line
numbers. Each case either leaves the file byte for byte as intended, or is refused
with the closest lines of the file quoted and the file left alone.

A case's texts are lists of lines (joined with "\\n"), so tabs and trailing spaces
show. `expected`: the intended file; `refused`: the start of the error, `quotes`:
pieces of the file the error must quote; `note`: a piece the result must say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.errors import ToolError
from app.tools.edit import EditTool
from app.tools.text.replace import apply_edit
from app.tools.view import ViewTool

CASES = json.loads((Path(__file__).parent / "edit_slips.json").read_text(encoding="utf-8"))
SLIPS = {
    "indentation",
    "tabs-vs-spaces",
    "context",
    "misremembered-middle",
    "trailing-whitespace",
    "smart-quotes",
    "view-prefixes",
    "ambiguous",
    "absent",
}


def text(case: dict[str, Any], key: str) -> str:
    return "\n".join(case[key])


def test_every_slip_has_cases_and_every_case_one_outcome() -> None:
    assert {case["slip"] for case in CASES} == SLIPS
    assert all(("expected" in case) != ("refused" in case) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
async def test_slip(case: dict[str, Any], ctx, workspace: Path) -> None:
    path = workspace / "slip.txt"
    original = text(case, "file").encode("utf-8")
    path.write_bytes(original)
    await ViewTool().call({"filePath": "slip.txt"}, ctx)
    args = {
        "filePath": "slip.txt",
        "oldString": text(case, "old"),
        "newString": text(case, "new"),
        "replaceAll": case.get("replaceAll", False),
    }

    if "refused" in case:
        with pytest.raises(ToolError) as caught:
            await EditTool().call(args, ctx)
        message = str(caught.value)
        assert message.startswith(case["refused"])
        for quoted in case["quotes"]:
            assert quoted in message
        assert path.read_bytes() == original
        return
    result = await EditTool().call(args, ctx)
    assert path.read_bytes() == text(case, "expected").encode("utf-8")
    if "note" in case:
        assert case["note"] in result.output


# --- property: a block sent at the wrong level changes only the intended line ------------

LEVELS = st.lists(st.integers(0, 3), min_size=2, max_size=12)


@settings(max_examples=200, deadline=None)
@given(levels=LEVELS, tabs=st.booleans(), data=st.data())
def test_a_block_sent_a_level_off_changes_the_intended_line_at_the_file_level(levels, tabs, data) -> None:
    # The file indents with 4 spaces or tabs; the model sends 4 spaces a level, shifted.
    unit = "\t" if tabs else "    "
    file_lines = [unit * level + f"statement_{index}()" for index, level in enumerate(levels)]
    start = data.draw(st.integers(0, len(levels) - 2))
    end = data.draw(st.integers(start + 2, len(levels)))
    shallowest = min(levels[start:end])
    offset = data.draw(st.sampled_from([-4 * level for level in range(1, shallowest + 1)] + [4, 8]))
    if offset < 0 and tabs and shallowest:  # spaces can be a level off the file's tabs too
        offset = data.draw(st.sampled_from([offset, 0]))
    sent = [" " * (4 * level + offset) + f"statement_{index}()" for index, level in enumerate(levels)][
        start:end
    ]
    changed = data.draw(st.integers(start, end - 1))
    wanted = [line.replace(f"statement_{changed}()", "changed()") for line in sent]
    outcome = apply_edit("\n".join(file_lines) + "\n", "\n".join(sent), "\n".join(wanted), adapt=True)
    intended = [line.replace(f"statement_{changed}()", "changed()") for line in file_lines]
    assert outcome.content == "\n".join(intended) + "\n"
