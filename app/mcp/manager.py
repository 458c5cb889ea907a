"""Every configured MCP server, as one runtime service.

Built with the runtime (cheap: nothing starts), ``start()`` connects every enabled server
in the background the first time it is called from the event loop; a front-end calls it
when it starts, and the agent loop calls ``wait_ready()`` before a turn so a one-shot
headless run still sees the tools. ``add()`` takes more servers at run time (those an
editor sends over ACP); the next ``start()`` connects them. A server that fails is only
a status (``McpStatusChanged``); the other servers and the built-in tools carry on.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from pathlib import Path

from app.bus import Bus
from app.config import McpServerConfig
from app.mcp.connection import McpConnection
from app.mcp.events import McpStatusChanged
from app.mcp.tool import McpTool, distinct_name

log = logging.getLogger(__name__)
DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 600.0
_NOT_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class McpManager:
    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        bus: Bus,
        *,
        cwd: Path,
        log_dir: Path,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        """``cwd`` is where stdio servers run (the workspace); ``log_dir`` keeps each
        server's stderr (``<name>.log``), whose last line explains a failure."""
        self._names = set(servers)
        """Every name taken, disabled servers' too: ``add`` never redefines one."""
        self._servers = {name: config for name, config in servers.items() if not config.disabled}
        self._bus = bus
        self._cwd = cwd
        self._log_dir = log_dir
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._connections: dict[str, McpConnection] = {}
        self._tools: dict[str, McpTool] | None = None

    def start(self) -> None:
        """Connect in the background every enabled server not connected yet: all of them
        the first time, then only those ``add`` brought. Call from inside the event loop."""
        waiting = [name for name in self._servers if name not in self._connections]
        if waiting:
            self._log_dir.mkdir(parents=True, exist_ok=True)
        for name in waiting:
            connection = McpConnection(
                name,
                self._servers[name],
                cwd=self._cwd,
                log_path=self._log_dir / log_file_name(name),
                connect_timeout=self._connect_timeout,
                call_timeout=self._call_timeout,
                on_change=self._changed,
            )
            self._connections[name] = connection
            connection.start()

    def add(self, servers: Mapping[str, McpServerConfig]) -> None:
        """Take servers given at run time (an editor's), to be connected by the next
        ``start()`` beside the configured ones. A name already here, configured (even
        disabled) or added before, keeps its first definition: the project's config is the
        narrower choice, and a server sent again by each new session is connected once."""
        for name, config in servers.items():
            if name in self._names:
                continue
            self._names.add(name)
            if not config.disabled:
                self._servers[name] = config

    async def wait_ready(self) -> None:
        """Start if needed, then wait until every server is connected or has failed. The
        servers still connecting are logged: they are why a turn has not started yet."""
        self.start()
        connecting = [name for name, connection in self._connections.items() if connection.state == "connecting"]
        if connecting:
            log.info("waiting for MCP servers to connect: %s", ", ".join(connecting))
        for connection in list(self._connections.values()):  # add() may bring more meanwhile
            await connection.wait_settled()

    def tools(self) -> dict[str, McpTool]:
        """The tools of the servers connected now, by name (when two tools read the same,
        the first in config order keeps the plain name, the other gets ``distinct_name``)."""
        if self._tools is None:
            tools: dict[str, McpTool] = {}
            for connection in self._connections.values():
                for server_tool in connection.tools if connection.state == "connected" else ():
                    tool = McpTool(connection, server_tool)
                    if tool.name in tools:
                        tool.name = distinct_name(connection.name, server_tool.name)
                    tools.setdefault(tool.name, tool)
            self._tools = tools
        return self._tools

    def statuses(self) -> list[McpStatusChanged]:
        """Every started server's current state, for a front-end that subscribed late."""
        return [_status(connection) for connection in self._connections.values()]

    async def aclose(self) -> None:
        """Disconnect every server and wait for their processes to end."""
        for connection in self._connections.values():
            await connection.aclose()

    def close(self) -> None:
        """Disconnect without waiting (from synchronous shutdown code)."""
        for connection in self._connections.values():
            connection.close()

    def _changed(self, connection: McpConnection) -> None:
        self._tools = None
        self._bus.publish(_status(connection))
        if connection.state != "connecting":  # a front-end without a status bar (ACP) has only its log
            reason = f": {connection.message}" if connection.message else ""
            log.info("MCP server %s %s%s", connection.name, connection.state, reason)


def log_file_name(server: str) -> str:
    """A file name for any server name: ``acme/calc`` must not point into a folder (or out
    of the log folder). A changed name gets a hash of the original, so two names that read
    the same once cleaned do not share a log."""
    safe = _NOT_IN_FILE_NAME.sub("_", server)
    if safe == server:
        return f"{server}.log"
    return f"{safe}-{hashlib.sha256(server.encode()).hexdigest()[:8]}.log"


def _status(connection: McpConnection) -> McpStatusChanged:
    return McpStatusChanged(connection.name, connection.state, connection.message, len(connection.tools))
