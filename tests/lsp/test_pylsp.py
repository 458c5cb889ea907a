"""The tools that write, with a real python-lsp-server (pyflakes) behind them: errors an
edit introduces come back in that edit's result (spec 001 step 10)."""

from __future__ import annotations

import json

import pytest

from app.lsp import LspStatusChanged
from app.tools.diagnostics import DiagnosticsTool
from app.tools.edit import EditTool
from app.tools.multiedit import MultiEditTool
from app.tools.patch import PatchTool
from app.tools.write import WriteTool

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_an_edit_that_breaks_the_syntax_gets_the_error_in_its_result(pylsp_runtime, pylsp_ctx, seen):
    path = seen("broken.py", "def greet(name):\n    return name\n")
    result = await EditTool().call(
        {"filePath": "broken.py", "oldString": "def greet(name):", "newString": "def greet(name:"}, pylsp_ctx
    )
    assert result.output.startswith("Edit applied successfully.\n\nLSP errors in broken.py:\n  line 1:")
    [error] = result.metadata["diagnostics"]
    assert error["severity"] == "error" and error["line"] == 1 and error["source"] == "pyflakes"
    assert path.read_text() == "def greet(name:\n    return name\n"  # the edit itself went through


async def test_a_clean_edit_gets_no_errors_once_the_server_has_answered(pylsp_runtime, pylsp_ctx, seen):
    path = seen("clean.py", "x = 1\n")
    result = await EditTool().call({"filePath": "clean.py", "oldString": "x = 1", "newString": "x = 2"}, pylsp_ctx)
    assert result.output == "Edit applied successfully."
    assert "diagnostics" not in result.metadata
    assert pylsp_runtime.lsp.diagnostics()[path] == []  # the server did report, and found nothing


async def test_errors_follow_the_latest_version_of_the_file(pylsp_runtime, pylsp_ctx, seen):
    seen("fixed.py", "print(missing)\n")
    broken = await WriteTool().call({"filePath": "fixed.py", "content": "print(absent)\n"}, pylsp_ctx)
    assert "LSP errors in fixed.py:\n  line 1:7: undefined name 'absent'" in broken.output
    fixed = await WriteTool().call({"filePath": "fixed.py", "content": "absent = 1\nprint(absent)\n"}, pylsp_ctx)
    assert "LSP errors" not in fixed.output


async def test_multiedit_and_a_new_file_report_their_errors(pylsp_ctx, seen):
    seen("multi.py", "a = 1\nb = 2\n")
    result = await MultiEditTool().call(
        {
            "filePath": "multi.py",
            "edits": [{"oldString": "a = 1", "newString": "a = b2"}, {"oldString": "b = 2", "newString": "b = c3"}],
        },
        pylsp_ctx,
    )
    assert "line 1:5: undefined name 'b2'" in result.output and "line 2:5: undefined name 'c3'" in result.output
    created = await WriteTool().call({"filePath": "new.py", "content": "return 1\n"}, pylsp_ctx)
    assert created.output.startswith("Created new.py (1 line).\n\nLSP errors in new.py:\n  line 1:")


async def test_patch_keeps_its_json_and_adds_the_errors_of_each_file(pylsp_ctx, seen):
    seen("p1.py", "one = 1\n")
    seen("p2.py", "two = 2\n")
    patch = (
        "*** Begin Patch\n*** Update File: p1.py\n@@\n-one = 1\n+one = (\n"
        "*** Update File: p2.py\n@@\n-two = 2\n+two = 3\n*** End Patch"
    )
    answer = json.loads((await PatchTool().call({"patch": patch}, pylsp_ctx)).output)
    assert answer["ok"] is True
    assert list(answer["lsp_errors"]) == ["p1.py"]  # p2.py is clean, so not listed
    assert answer["lsp_errors"]["p1.py"][0].startswith("line ")


@pytest.mark.parametrize("rel", ["odd dir/ü a+b@c.py", "looks%20quoted.py"])
async def test_file_names_that_need_quoting_in_a_uri_get_their_errors(pylsp_ctx, rel):
    result = await WriteTool().call({"filePath": rel, "content": "def f(:\n    pass\n"}, pylsp_ctx)
    assert f"LSP errors in {rel}:\n  line 1:" in result.output


async def test_the_diagnostics_tool_lists_errors_and_warnings(pylsp_runtime, pylsp_ctx, seen):
    seen("other.py", "print(elsewhere)\n")
    seen("tool.py", "import os\nprint(nowhere)\n")
    await DiagnosticsTool().call({"path": "other.py"}, pylsp_ctx)
    one = await DiagnosticsTool().call({"path": "tool.py"}, pylsp_ctx)
    assert one.output.splitlines() == [
        "tool.py:",
        "  warning: line 1:1: 'os' imported but unused",
        "  error: line 2:7: undefined name 'nowhere'",
    ]
    assert one.metadata == {"path": "tool.py", "count": 2}
    every = await DiagnosticsTool().call({}, pylsp_ctx)
    assert "tool.py:\n  warning: line 1:1: 'os' imported but unused" in every.output
    assert "other.py:\n  error: line 1:7: undefined name 'elsewhere'" in every.output


async def test_a_file_no_server_handles_is_said_so(pylsp_ctx, seen):
    seen("notes.txt", "hello\n")
    result = await DiagnosticsTool().call({"path": "notes.txt"}, pylsp_ctx)
    assert result.output == "No language server handles notes.txt: configure one under `lsp` in the config"
    edit = await EditTool().call({"filePath": "notes.txt", "oldString": "hello", "newString": "bye"}, pylsp_ctx)
    assert edit.output == "Edit applied successfully."


async def test_the_server_state_is_known_and_published_on_stop(pylsp_runtime):
    """Last in the module: it stops the shared server."""
    assert pylsp_runtime.lsp.states() == {"python": ("ready", "")}
    async with pylsp_runtime.bus.subscribe(LspStatusChanged) as events:
        pylsp_runtime.lsp.close()
        assert await events.get() == LspStatusChanged("python", "stopped", "")
