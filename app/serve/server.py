"""`opencode serve`: the ACP agent of `opencode acp`, served to many clients at once on a
Unix socket only its owner can reach, with litellm imported once and every workspace's
runtime (store, language servers, MCP servers) kept warm between clients.

Each connection speaks ACP (newline-delimited JSON-RPC) exactly as `opencode acp` does
on stdio, with its own ``OpencodeAgent``; the workspaces are shared. A connection from
another uid (SO_PEERCRED) is closed before anything is read. With ``--listen HOST:PORT``
(loopback only) a TCP connection must first send the token the server wrote 0600 beside
its socket, as one line; anything else closes it. One server per socket: a second one
finds the lock file held, says so and exits 0. See docs/serve.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hmac
import ipaddress
import json
import logging
import os
import secrets
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.agent.router import build_agent_router
from acp.connection import Connection

from app.acp.agent import OpencodeAgent
from app.acp.channel import ClientChannel
from app.acp.server import STREAM_LIMIT, log_to
from app.acp.workspaces import Workspaces
from app.config import load_config
from app.core.errors import OpencodeError
from app.llm.models import secret_variable
from app.runtime import Runtime
from app.serve.address import (
    LOCK_NAME,
    LOG_NAME,
    SOCKET_NAME,
    TOKEN_NAME,
    ServeError,
    check_socket_path,
    make_private_folder,
    peer_uid,
    serve_folder,
)
from app.serve.environment import differing, digests

log = logging.getLogger(__name__)
TOKEN_WAIT = 10.0
"""Seconds a TCP client has to send its token line before it is closed."""


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` with a loopback HOST (127.0.0.1, ::1 in brackets or not); PORT 0 picks one."""
    host, _, port = value.rpartition(":")
    host = host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
        number = int(port)
    except ValueError:
        raise ServeError(f"--listen {value}: give HOST:PORT with a loopback address, e.g. 127.0.0.1:4096") from None
    if not address.is_loopback:
        raise ServeError(f"--listen {value}: only loopback addresses (127.0.0.1, ::1) are served: tunnel over SSH for remote use")
    if not 0 <= number <= 65535:
        raise ServeError(f"--listen {value}: the port must be 0 to 65535")
    return host, number


class ServeAgent(OpencodeAgent):
    """The ACP agent of one connection, plus the server's own requests:
    ``_opencode/status`` (what ``--status`` prints) and ``_opencode/stop``."""

    def __init__(self, server: Server) -> None:
        super().__init__(workspaces=server.workspaces)
        self._server = server

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "opencode/status":
            return self._server.status()
        if method == "opencode/stop":
            asyncio.get_running_loop().call_soon(self._server.stop)  # after this answer is queued
            return {"pid": os.getpid()}
        return await super().ext_method(method, params)

    def admit_headless(self, params: dict[str, Any], runtime: Runtime) -> None:
        """A client whose environment differs from the server's in what the server reads
        (a provider key or base URL, an ``OPENCODE_*`` or ``LITELLM_*`` setting, the home,
        the PATH, or a variable the workspace's config names as ``{env:VAR}``) is refused
        before its turn: it runs in its own process, with its own environment."""
        sent = params.get("environment")
        if not isinstance(sent, dict):
            return  # a client that sends none (an editor speaking ACP) takes the server's, as `opencode acp` does
        providers = runtime.config.providers
        named = [secret_variable(entry.api_key) for entry in providers.values() if entry.api_key]
        names = differing(sent, self._server.environment, [name for name in named if name])
        if names:
            raise RequestError.invalid_params(
                {"message": f"the server's environment differs in {', '.join(names)}", "environmentDiffers": names}
            )

    async def cancel_all(self) -> None:
        """The client has gone: the turns it was running end as cancelled (what they
        finished is saved, a change being written completes or is rolled back whole)."""
        for session_id in list(self._sessions):
            await self.cancel(session_id)


class Server:
    def __init__(
        self, folder: Path, idle_timeout: float, listen: tuple[str, int] | None, environment: dict[str, str]
    ) -> None:
        self.folder = folder
        self.environment = environment
        """Digests of the environment the server started with (app/serve/environment.py)."""
        self.socket = folder / SOCKET_NAME
        self.idle_timeout = idle_timeout
        self.listen = listen
        self.workspaces = Workspaces()
        self.tcp_address: tuple[str, int] | None = None
        self._token: str | None = None
        self._started = time.time()
        self._connections: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._idle_handle: asyncio.TimerHandle | None = None

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(), "socket": str(self.socket), "uptime": round(time.time() - self._started, 1),
            "connections": len(self._connections), "workspaces": len(self.workspaces),
            "idleTimeout": self.idle_timeout,
            "tcp": None if self.tcp_address is None else f"{self.tcp_address[0]}:{self.tcp_address[1]}",
        }  # fmt: skip

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        unix = await asyncio.start_unix_server(self._accept_unix, sock=_bound_socket(self.socket), limit=STREAM_LIMIT)
        servers = [unix]
        if self.listen is not None:
            self._token = secrets.token_urlsafe(32)
            _write_private(self.folder / TOKEN_NAME, self._token + "\n")
            tcp = await asyncio.start_server(self._accept_tcp, *self.listen, limit=STREAM_LIMIT)
            self.tcp_address = tcp.sockets[0].getsockname()[:2]
            servers.append(tcp)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stop)
        self._arm_idle()
        print(self._ready_line(), file=sys.stderr, flush=True)
        try:
            await self._stopping.wait()
        finally:
            for server in servers:
                server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self.workspaces.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.folder / TOKEN_NAME)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket)

    def _ready_line(self) -> str:
        line = f"opencode: serving on {self.socket} (pid {os.getpid()})"
        if self.tcp_address is not None:
            host, port = self.tcp_address
            line += f" and on {host}:{port} (token in {self.folder / TOKEN_NAME})"
        return line

    def _arm_idle(self) -> None:
        """Exit after ``idle_timeout`` seconds with no connection open (a client in the
        middle of a turn is connected, so a turn is never cut short by it)."""
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        if not self._connections:
            self._idle_handle = asyncio.get_running_loop().call_later(self.idle_timeout, self._idle)

    def _idle(self) -> None:
        log.info("no client for %s s: stopping", self.idle_timeout)
        self.stop()

    async def _accept_unix(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid != os.getuid():
            log.warning("refused a connection from uid %s", uid)
            writer.close()
            return
        await self._serve(reader, writer)

    async def _accept_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host = writer.get_extra_info("peername")[0]
        try:
            line = await asyncio.wait_for(reader.readline(), TOKEN_WAIT)
        except (TimeoutError, ValueError, ConnectionError):
            line = b""
        assert self._token is not None
        if not ipaddress.ip_address(host).is_loopback or not hmac.compare_digest(line.strip(), self._token.encode()):
            log.warning("refused a TCP connection from %s: no valid token", host)
            writer.close()
            return
        await self._serve(reader, writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._arm_idle()
        agent = ServeAgent(self)
        # The SDK's Agent protocol lists every method, unstable ones included; its router
        # looks each handler up by name, and answers "method not found" for those we lack.
        connection = Connection(build_agent_router(agent), writer, reader, listening=False)  # type: ignore[arg-type]
        agent.channel = ClientChannel(connection)
        try:
            await connection.main_loop()
        except (ConnectionError, asyncio.IncompleteReadError):
            log.info("a client went away")  # its turns, if any, are cancelled below
        finally:
            await agent.cancel_all()
            await connection.close()
            self._connections.discard(task)
            self._arm_idle()


def run_serve(*, listen: str | None = None, idle_minutes: float | None = None) -> int:
    """Serve until stopped (``--stop``, SIGTERM, ctrl+c) or idle; returns the exit code."""
    try:
        folder = make_private_folder(serve_folder())
        check_socket_path(folder / SOCKET_NAME)
        address = parse_listen(listen) if listen is not None else None
        minutes = idle_minutes if idle_minutes is not None else load_config(folder).serve.idle_timeout
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=sys.stderr)
        return 2
    lock = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.pread(lock, 32, 0).decode(errors="replace").strip() or "?"
        print(f"opencode: a server is already running on {folder / SOCKET_NAME} (pid {pid}): "
              "'opencode serve --stop' stops it", file=sys.stderr)  # fmt: skip
        return 0
    os.ftruncate(lock, 0)
    os.pwrite(lock, f"{os.getpid()}\n".encode(), 0)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / SOCKET_NAME)  # stale: whoever made it no longer holds the lock
    _start_logging(folder)
    environment = digests(os.environ)  # before the litellm import adds its defaults to it
    from app.llm.provider import start_background_import

    start_background_import()  # once, for every client to come
    try:
        asyncio.run(Server(folder, minutes * 60, address, environment).run())
    finally:
        os.close(lock)
    return 0


def _bound_socket(path: Path) -> socket.socket:
    """A Unix socket bound at ``path`` with mode 0600 from its first moment: made under a
    umask that leaves others nothing (only while binding: the agent's files keep the
    user's umask), then set explicitly."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(os.fspath(path))
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    return sock


def _write_private(path: Path, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text)


def _start_logging(folder: Path) -> None:
    os.close(os.open(folder / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    log_to(folder / LOG_NAME)


def control(request: str) -> int:
    """``opencode serve --status`` / ``--stop``: ask the running server; 1 when none runs."""
    from app.serve.client import request_once

    try:
        answer = request_once(request)
    except ServeError as error:
        print(f"opencode: error: {error}", file=sys.stderr)
        return 2
    if answer is None:
        print(f"opencode: no server is running on {serve_folder() / SOCKET_NAME}")
        return 1
    if request == "opencode/status":
        print(json.dumps(answer, indent=2))
    else:
        print(f"opencode: stopped the server (pid {answer.get('pid', '?')})")
    return 0
