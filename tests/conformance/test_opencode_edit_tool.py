"""OpenCode's tool-level edit cases (tests/conformance/data/opencode-edit/cases.json, the
`tool/...` ones) through the real edit tool on disk: the file is written as bytes
(BOM and CRLF included), viewed with the view tool, edited, and its bytes compared.
A failing case must fail with the expected kind of error and leave the file alone.
A missing copy of the data fails the run rather than skipping it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.errors import ToolError
from app.tools.edit import EditTool
from app.tools.view import ViewTool
from tests.conformance.scenarios import load_edit_cases

CASES = [case for case in load_edit_cases() if case["name"].startswith("tool/")]


def test_every_tool_case_is_here() -> None:
    assert len(CASES) == 22


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
async def test_case(case: dict[str, Any], ctx, workspace: Path) -> None:
    path = workspace / "case.txt"
    original = case["content"].encode("utf-8")
    path.write_bytes(original)
    await ViewTool().call({"filePath": "case.txt"}, ctx)
    args = {
        "filePath": "case.txt",
        "oldString": case["old"],
        "newString": case["new"],
        "replaceAll": case["replace_all"],
    }

    if case["expected"] is None:
        with pytest.raises(ToolError) as caught:
            await EditTool().call(args, ctx)
        # OpenCode's distinguishing words ("identical", "oldString cannot be empty", ...)
        # are in our messages too: the same meaning, said with the same key words.
        assert case["error"].lower() in str(caught.value).lower()
        assert path.read_bytes() == original
    else:
        await EditTool().call(args, ctx)
        assert path.read_bytes() == case["expected"].encode("utf-8")
