"""Every built-in tool, and which agent may use which."""

from __future__ import annotations

from app.tools.base import Tool
from app.tools.bash import BashTool
from app.tools.delete import DeleteTool
from app.tools.edit import EditTool
from app.tools.glob import GlobTool
from app.tools.grep import GrepTool
from app.tools.ls import LsTool
from app.tools.multiedit import MultiEditTool
from app.tools.patch import PatchTool
from app.tools.view import ViewTool
from app.tools.write import WriteTool


def all_tools() -> list[Tool]:
    """One instance of every built-in tool, in the order models see them."""
    return [
        ViewTool(),
        LsTool(),
        GlobTool(),
        GrepTool(),
        WriteTool(),
        EditTool(),
        MultiEditTool(),
        PatchTool(),
        DeleteTool(),
        BashTool(),
    ]
