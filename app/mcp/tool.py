"""An MCP server's tool as one of ours: named ``<server>_<tool>``, described and shaped by
the server (its JSON schema is handed to the model unchanged), asked about through the
permission engine under that name, and run on the server.

Arguments are checked only for being a JSON object (``Tool.parse`` with a model that
keeps every key); the server validates the rest and its refusal reaches the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict

from app.core.errors import ToolError
from app.permission import PermissionPreview
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from mcp.types import Tool as ServerTool

    from app.mcp.connection import McpConnection

MAX_NAME_LENGTH = 64
"""Providers accept tool names of at most 64 characters from [A-Za-z0-9_-]."""
MAX_OUTPUT_CHARS = 50_000
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """``<server>_<tool>`` with characters providers refuse replaced by ``_``; this is also
    the tool's permission key. A name too long for providers becomes ``distinct_name``."""
    name = _NOT_IN_NAME.sub("_", f"{server}_{tool}")
    return name if len(name) <= MAX_NAME_LENGTH else distinct_name(server, tool)


def distinct_name(server: str, tool: str) -> str:
    """The name cut to leave room for a hash of the server and tool names: two tools whose
    names are cut, or read the same once cleaned (``x.y``/``x_y``), both stay callable, and
    under the same name every run, so permission rules keep matching."""
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    name = _NOT_IN_NAME.sub("_", f"{server}_{tool}")
    return f"{name[: MAX_NAME_LENGTH - len(digest) - 1]}_{digest}"


class McpArguments(ToolParams):
    """Any JSON object: the server's schema decides what is valid, not ours."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    params = McpArguments
    read_only = False  # we cannot know what a server's tool changes: it runs alone, and asks

    def __init__(self, connection: McpConnection, server_tool: ServerTool) -> None:
        self.connection = connection
        self.server = connection.name
        self.remote_name = server_tool.name
        self.name = tool_name(self.server, server_tool.name)
        self.description = (
            server_tool.description or f"The tool {server_tool.name} of the MCP server {self.server}."
        )
        self.schema: dict[str, Any] = server_tool.input_schema

    def spec(self) -> dict[str, Any]:
        """The server's own schema, unchanged: our parameter model knows nothing of it."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.schema},
        }

    async def run(self, params: McpArguments, ctx: ToolContext) -> ToolResult:
        arguments = dict(params.model_extra or {})
        self.connection.require_connected()
        title = f"{self.server}: {self.remote_name}"
        await ctx.permissions.check(
            ctx.session_id,
            self.name,
            json.dumps(arguments, separators=(",", ":"), ensure_ascii=False),
            ctx.agent,
            title,
            PermissionPreview("text", json.dumps(arguments, indent=2, ensure_ascii=False)),
        )
        result = await self.connection.call_tool(self.remote_name, arguments)
        output = render_result(result)
        if result.is_error:
            raise ToolError(f"{self.name}: the server reported an error: {' '.join(output.split())[:500]}")
        return ToolResult(output, {"server": self.server, "tool": self.remote_name}, title=title)


def render_result(result: CallToolResult) -> str:
    """The text blocks joined; other blocks summarised in one line each (a model cannot
    use raw base64); the structured result when there is no content at all."""
    pieces = [_render_block(block) for block in result.content]
    if not pieces and result.structured_content is not None:
        pieces.append(json.dumps(result.structured_content, ensure_ascii=False))
    output = "\n".join(pieces) or "(the tool returned nothing)"
    if len(output) > MAX_OUTPUT_CHARS:
        cut = len(output) - MAX_OUTPUT_CHARS
        output = f"{output[:MAX_OUTPUT_CHARS]}\n[output cut: {cut} more characters not shown]"
    return output


def _render_block(block: Any) -> str:
    kind = block.type
    if kind == "text":
        text: str = block.text
        return text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data)} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}]"
    if kind == "resource":
        resource = block.resource
        resource_text: str | None = getattr(resource, "text", None)
        if resource_text is not None:
            return resource_text
        return f"[resource: {resource.uri} ({resource.mime_type or 'binary'}), not shown]"
    return f"[{kind} content, not shown]"


def _decoded_size(data: str) -> int:
    """Bytes in base64 ``data``, without decoding it."""
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
