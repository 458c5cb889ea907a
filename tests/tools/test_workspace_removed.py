"""The workspace folder removed while opencode runs: every tool says so in one line, and
none makes the folder again (the workspace lock's file would have, and a write then
landed in a new folder, recorded in the database that went with the old one)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.core.errors import ToolError
from app.tools.bash import BashTool
from app.tools.delete import DeleteTool
from app.tools.edit import EditTool
from app.tools.ls import LsTool
from app.tools.patch import PatchTool
from app.tools.view import ViewTool
from app.tools.write import WriteTool

CALLS = [
    (WriteTool(), {"filePath": "new.txt", "content": "x\n"}),
    (DeleteTool(), {"path": "a.txt"}),
    (EditTool(), {"filePath": "a.txt", "oldString": "a", "newString": "b"}),
    (PatchTool(), {"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n"}),
    (BashTool(), {"command": "touch made.txt", "description": "make a file"}),
    (ViewTool(), {"filePath": "a.txt"}),
    (LsTool(), {}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[tool.name for tool, _ in CALLS])
async def test_a_removed_workspace_is_said_and_never_made_again(ctx, workspace: Path, tool, arguments) -> None:
    (workspace / "a.txt").write_text("a\n")
    shutil.rmtree(workspace)
    with pytest.raises(ToolError) as refused:
        await tool.call(arguments, ctx)
    message = json.loads(str(refused.value))["error"] if tool.name == "patch" else str(refused.value)
    assert message.startswith(f"The workspace {workspace} was removed or replaced while opencode ran")
    assert not workspace.exists()
