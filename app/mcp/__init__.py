"""MCP servers from ``mcpServers`` in config: a connection per server (stdio or streamable
HTTP, through the official ``mcp`` SDK), started in the background, whose tools reach the
agents as ``<server>_<tool>``. See docs/mcp.md."""

from app.core.lazy import lazy_attributes
from app.mcp.events import McpState, McpStatusChanged

__all__ = ["McpConnection", "McpManager", "McpState", "McpStatusChanged", "McpTool", "tool_name"]

# The rest pulls in the config models and the tool base (pydantic); the TUI imports this
# package for its events before the first frame, so they load on first use instead.
_LAZY = {
    "McpConnection": "app.mcp.connection",
    "McpManager": "app.mcp.manager",
    "McpTool": "app.mcp.tool",
    "tool_name": "app.mcp.tool",
}


__getattr__ = lazy_attributes(__name__, _LAZY)
