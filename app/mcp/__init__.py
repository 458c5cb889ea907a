"""MCP servers from ``mcpServers`` in config: a connection per server (stdio or streamable
HTTP, through the official ``mcp`` SDK), started in the background, whose tools reach the
agents as ``<server>_<tool>``. See docs/mcp.md."""

from app.mcp.connection import McpConnection
from app.mcp.events import McpState, McpStatusChanged
from app.mcp.manager import McpManager
from app.mcp.tool import McpTool, tool_name

__all__ = ["McpConnection", "McpManager", "McpState", "McpStatusChanged", "McpTool", "tool_name"]
