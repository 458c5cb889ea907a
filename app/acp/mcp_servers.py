"""The MCP servers an editor sends with ``session/new`` and ``session/load``.

They join the workspace runtime's ``McpManager`` beside the servers of ``.opencode.json``,
so their tools reach the model as ``<server>_<tool>`` like the configured ones. A name
the project configures keeps the project's definition; a server sent again by a later
session is connected once; they stay connected while the runtime lives (until the agent
exits). Stdio and streamable HTTP are spoken, so those are the transports advertised.
See docs/acp.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpCapabilities,
    McpServerStdio,
    SseMcpServer,
)

from app.config import McpServerConfig
from app.runtime import Runtime

log = logging.getLogger(__name__)
MCP_CAPABILITIES = McpCapabilities(http=True)
"""No ``sse``: the MCP client (app/mcp/connection.py) speaks stdio and streamable HTTP only."""
EditorServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""The variants the SDK parses ``mcpServers`` into (``acp`` is a draft transport)."""


def connect_editor_servers(runtime: Runtime, servers: Iterable[EditorServer]) -> None:
    """Hand the editor's servers to the runtime and start connecting them (with the
    configured ones, when this is the workspace's first session) in the background."""
    configs = editor_server_configs(servers)
    runtime.mcp.add(configs)
    for name in configs.keys() & runtime.config.mcp_servers.keys():
        log.info("editor MCP server %s: skipped, the opencode configuration defines that name", name)
    runtime.mcp.start()


def editor_server_configs(servers: Iterable[EditorServer]) -> dict[str, McpServerConfig]:
    """Name -> config of each server we can connect (the first of a repeated name counts).
    A transport we do not advertise (SSE, the draft ACP one) should not come; if it does,
    it is skipped with a line in the log instead of failing the whole session."""
    configs: dict[str, McpServerConfig] = {}
    for server in servers:
        config = _config(server)
        if config is None:
            log.warning(
                "editor MCP server %s: its %s transport is not supported; give it a command (stdio) or "
                "a streamable HTTP url", server.name, server.type,
            )  # fmt: skip
        else:
            configs.setdefault(server.name, config)
    return configs


def _config(server: EditorServer) -> McpServerConfig | None:
    match server:
        case McpServerStdio():
            return McpServerConfig(command=server.command, args=server.args, env=_as_dict(server.env))
        case HttpMcpServer():
            return McpServerConfig(type="http", url=server.url, headers=_as_dict(server.headers))
    return None


def _as_dict(pairs: Iterable[EnvVariable | HttpHeader]) -> dict[str, str]:
    """ACP's [{name, value}] list as the config's mapping (a repeated name: the last counts)."""
    return {pair.name: pair.value for pair in pairs}
