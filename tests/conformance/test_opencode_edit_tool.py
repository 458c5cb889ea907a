"""OpenCode's tool-level edit cases (shared/conformance/opencode-edit/cases.json, the
`tool/...` ones) through the real edit tool on disk: the file is written as bytes
(BOM and CRLF included), viewed with the view tool, edited, and its bytes compared.
A failing case must fail with the expected kind of error and leave the file alone.
The data lives beside the repository (`<repo>/../shared`); a missing copy fails the
run rather than skipping it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.errors import ToolError
from app.tools.edit import EditTool
from app.tools.view import ViewTool

CASES_FILE = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "opencode-edit" / "cases.json"


def load_tool_cases() -> list[dict[str, Any]]:
    if not CASES_FILE.is_file():
        raise FileNotFoundError(
            f"conformance data missing: {CASES_FILE}; check out the shared/ folder beside the repository"
        )
    cases = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [case for case in cases if case["name"].startswith("tool/")]


CASES = load_tool_cases()


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
