"""Every built-in tool, and which agent may use which."""

from __future__ import annotations

from app.tools.base import Tool
from app.tools.edit import EditTool
from app.tools.multiedit import MultiEditTool
from app.tools.write import WriteTool


def all_tools() -> list[Tool]:
    """One instance of every built-in tool, in the order models see them."""
    return [WriteTool(), EditTool(), MultiEditTool()]
