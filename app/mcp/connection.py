"""One configured MCP server, over stdio or streamable HTTP, through the official SDK.

A background task owns the SDK session for its whole life: the SDK is built on anyio,
whose task groups must be entered and left by the same task, so connecting, waiting and
closing all happen in ``_serve``; tool calls from other tasks go through the session it
holds. The SDK takes about two seconds to import, so it is imported in a thread, the first
time a server connects: start-up never waits for it, and nothing imports it when no
server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.config import McpServerConfig
from app.core.errors import ToolError
from app.mcp.events import McpState

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult
    from mcp.types import Tool as ServerTool

CONNECTION_CLOSED = -32000
"""The SDK's error code for a request that lost its connection (mcp_types.CONNECTION_CLOSED)."""

HTTP_TIMEOUT = 30.0
"""Seconds an HTTP server has to accept a connection, a request or a write."""
HTTP_READ_TIMEOUT = 300.0
"""Seconds between two reads: a server may hold a response stream open that long."""


class McpConnection:
    """``start()`` connects in the background; ``state`` and ``message`` say how it went;
    ``tools`` is what the server listed; ``call_tool`` runs one of them. ``on_change`` is
    called with the connection after every state change."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        cwd: Path,
        log_path: Path,
        connect_timeout: float,
        call_timeout: float,
        on_change: Callable[[McpConnection], None],
    ) -> None:
        self.name = name
        self.config = config
        self.state: McpState = "connecting"
        self.message = ""
        self.tools: list[ServerTool] = []
        self._cwd = cwd
        self._log_path = log_path
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._closing = False
        """Set when we disconnect, so the end of the server's output is not a failure."""

    def start(self) -> None:
        """Connect in a background task (call from inside the event loop, once)."""
        if self._task is None:
            self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.name}")

    async def wait_settled(self) -> None:
        """Until the connection is up or has failed (bounded by the connect timeout)."""
        await self._settled.wait()

    def require_connected(self) -> ClientSession:
        """The live session, or a ToolError saying the server is not there and why."""
        if self._session is None or self.state != "connected":
            raise ToolError(
                f"MCP server {self.name!r} is not connected ({self.message or self.state}): "
                "use another tool, or ask the user to fix the server"
            )
        return self._session

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Run ``tool`` on the server. A server that is gone, or does not answer within
        the call timeout, raises a ToolError the model can read."""
        session = self.require_connected()
        from mcp import MCPError

        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=self._call_timeout)
        except MCPError as err:
            if err.code == CONNECTION_CLOSED:
                self._lost()
                raise ToolError(
                    f"MCP server {self.name!r} stopped during the call to {tool}: "
                    "use another tool, or ask the user to restart the server"
                ) from None
            raise ToolError(
                f"MCP server {self.name!r} could not run {tool}: {_one_line(err.message)}"
            ) from None

    async def aclose(self) -> None:
        """Disconnect and wait until the server process is gone."""
        self._closing = True
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def close(self) -> None:
        """Ask the background task to disconnect, without waiting (no event loop needed
        to call it; the task finishes on its loop, or when that loop shuts down)."""
        self._closing = True
        if self._task is not None and not self._task.done():
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._task.get_loop().call_soon_threadsafe(self._task.cancel)

    # -- the background task ---------------------------------------------------------------

    async def _serve(self) -> None:
        self._set_state("connecting")
        try:
            with self._log_path.open("w", encoding="utf-8") as errlog:
                sdk = await asyncio.to_thread(_Sdk)
                async with contextlib.AsyncExitStack() as stack:
                    read, write = await self._open_transport(sdk, stack, errlog)
                    read = _EndWatch(read, self._lost)
                    session = await stack.enter_async_context(sdk.ClientSession(read, write))
                    with sdk.anyio.fail_after(self._connect_timeout):
                        await session.initialize()
                        self.tools = await _list_tools(session)
                    self._session = session
                    self._set_state("connected")
                    await self._stop.wait()
        except Exception as err:  # any failure of a server is only that server's
            self._set_state("failed", f"{self._describe(err)}{self._log_hint()}")
        finally:
            self._session = None
            if self.state != "failed":
                self._set_state("closed")

    async def _open_transport(self, sdk: _Sdk, stack: contextlib.AsyncExitStack, errlog: TextIO) -> Any:
        """The SDK's (read, write) streams for the config: a process on stdio with its
        stderr in the log file, or streamable HTTP with the configured headers."""
        if self.config.type == "http":
            if not self.config.url:
                raise ValueError(f"an http server needs its address: set mcpServers.{self.name}.url")
            client = await stack.enter_async_context(
                sdk.httpx2.AsyncClient(
                    headers=self.config.headers or None,
                    timeout=sdk.httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT),
                )
            )
            return await stack.enter_async_context(
                sdk.streamable_http_client(self.config.url, http_client=client)
            )
        params = sdk.StdioServerParameters(
            command=self.config.command, args=self.config.args, env=self.config.env or None, cwd=self._cwd
        )
        return await stack.enter_async_context(sdk.stdio_client(params, errlog=errlog))

    def _lost(self) -> None:
        """The server's output ended while connected (it exited, mid-call or idle): failed
        at once, so the status bar shows it and its tools leave the next turn's list."""
        if self.state == "connected" and not self._closing:
            self._set_state("failed", f"the server stopped{self._log_hint()}")
            self._stop.set()

    def _set_state(self, state: McpState, message: str = "") -> None:
        self.state, self.message = state, message
        if state != "connecting":
            self._settled.set()
        if state in ("failed", "closed"):
            self.tools = []
        self._on_change(self)

    def _describe(self, err: BaseException) -> str:
        """One line for a failure that anyio may have wrapped in exception groups."""
        while isinstance(err, BaseExceptionGroup) and err.exceptions:
            err = err.exceptions[0]
        if isinstance(err, TimeoutError):
            return f"no answer within {self._connect_timeout:g} s"
        if isinstance(err, FileNotFoundError):
            return f"command not found ({err.filename or err}): check its command in mcpServers"
        if getattr(err, "code", None) == CONNECTION_CLOSED:
            return "the server closed the connection before it was ready"
        detail = _one_line(f"{type(err).__name__}: {err}")
        return f"{detail} (at {self.config.url})" if self.config.type == "http" else detail

    def _log_hint(self) -> str:
        """The last line the server wrote on stderr, which usually says what went wrong."""
        with contextlib.suppress(OSError):
            lines = [line.strip() for line in self._log_path.read_text(errors="replace").splitlines()]
            last = next((line for line in reversed(lines) if line), "")
            if last:
                return f"; it said: {_one_line(last, 160)}"
        return ""


class _EndWatch:
    """The transport's read stream, passed through to the SDK, calling ``on_end`` when it
    ends: the SDK's session has no hook for a server that goes away between calls."""

    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        """The per-message context some SDK transports attach; the SDK reads it if present."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        return await self._stream.receive()

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndWatch:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stream.__aexit__(*exc_info)


class _Sdk:
    """The parts of the ``mcp`` package this module uses, imported together (in a thread,
    on first use: see the module doc)."""

    def __init__(self) -> None:
        import anyio
        import httpx2  # the HTTP client the SDK's streamable HTTP transport takes
        import mcp
        from mcp.client.streamable_http import streamable_http_client

        self.anyio = anyio
        self.httpx2 = httpx2
        self.ClientSession = mcp.ClientSession
        self.StdioServerParameters = mcp.StdioServerParameters
        self.stdio_client = mcp.stdio_client
        self.streamable_http_client = streamable_http_client


async def _list_tools(session: ClientSession) -> list[ServerTool]:
    """Every tool, following the server's pagination."""
    from mcp.types import PaginatedRequestParams

    tools: list[ServerTool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
