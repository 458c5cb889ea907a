"""Every built-in tool, and which agent may use which."""

from __future__ import annotations

from app.tools.base import Tool


def all_tools() -> list[Tool]:
    """One instance of every built-in tool, in the order models see them."""
    return []
