"""The language servers of one workspace: started lazily, one per language, on the
first touch of a matching file; a server that cannot start or dies is marked failed,
reported on the bus, and left alone (no restart loop), so tools never break on it."""

from __future__ import annotations

import asyncio
import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from app.bus import Bus
from app.config import Config
from app.lsp.diagnostic import Diagnostic
from app.lsp.events import FAILED, READY, STARTING, STOPPED, LspStatusChanged
from app.lsp.jsonrpc import ConnectionClosed
from app.lsp.servers import LspStartError, ServerSpec, server_specs

if TYPE_CHECKING:
    from app.lsp.client import LspClient

log = logging.getLogger(__name__)


class _Server:
    """A server's lifetime: the start task (its result is the client, or None when it
    failed), the client once spawned (so close() can kill it mid-start), its state."""

    def __init__(self, task: asyncio.Task[LspClient | None]) -> None:
        self.task = task
        self.client: LspClient | None = None
        self.state = STARTING
        self.message = ""


class LspManager:
    def __init__(self, config: Config, root: Path, bus: Bus) -> None:
        self._config = config
        self._root = root
        self._bus = bus
        self._by_suffix: dict[str, ServerSpec] | None = None
        self._servers: dict[str, _Server] = {}

    def spec_for(self, path: Path) -> ServerSpec | None:
        """The server for a file, by extension (PATH is searched on the first call)."""
        if self._by_suffix is None:
            self._by_suffix = {}
            for spec in server_specs(self._config.lsp):
                for suffix in spec.extensions:
                    self._by_suffix.setdefault(suffix, spec)
        return self._by_suffix.get(path.suffix.lower())

    def states(self) -> dict[str, tuple[str, str]]:
        """Language -> (state, message) of every server started so far."""
        return {language: (server.state, server.message) for language, server in self._servers.items()}

    async def touch(self, path: Path, timeout: float) -> list[Diagnostic] | None:
        """Tell the file's server its current content and wait (at most ``timeout``
        seconds, starting included) for its diagnostics. None when no server serves
        the file, it failed, or it did not answer in time: the caller goes on."""
        spec = self.spec_for(path)
        if spec is None:
            return None
        try:
            async with asyncio.timeout(timeout):
                client = await asyncio.shield(self._server(spec).task)
                if client is None or not client.running:
                    return None
                text = await asyncio.to_thread(path.read_text, encoding="utf-8", errors="replace")
                version, seq = await client.touch(path, text)
                return await client.wait_for(path, version, seq)
        except (TimeoutError, ConnectionClosed, OSError):
            return None

    def diagnostics(self) -> dict[Path, list[Diagnostic]]:
        """The latest diagnostics of every file the running servers reported on."""
        found: dict[Path, list[Diagnostic]] = {}
        for server in self._servers.values():
            if server.client is not None and server.client.running:
                found.update(server.client.diagnostics())
        return found

    async def stop(self) -> None:
        """Kill every server and wait for each to end while the event loop still runs
        (one-shot commands call it before their loop closes)."""
        for server in self._servers.values():
            if server.client is not None:
                await server.client.stop()
        self.close()

    def close(self) -> None:
        """Kill every server (synchronous, so Runtime.close() can call it anywhere)."""
        for language, server in self._servers.items():
            if server.client is not None:
                server.client.kill()
            if not server.task.done() and not server.task.get_loop().is_closed():
                server.task.cancel()
            if server.state in (STARTING, READY):
                self._set_state(server, language, STOPPED)

    def _server(self, spec: ServerSpec) -> _Server:
        server = self._servers.get(spec.language)
        if server is None:
            task = asyncio.get_running_loop().create_task(self._start(spec), name=spec.language)
            server = self._servers[spec.language] = _Server(task)
            self._set_state(server, spec.language, STARTING)
        return server

    async def _start(self, spec: ServerSpec) -> LspClient | None:
        server = self._servers[spec.language]
        try:
            client_module = await asyncio.to_thread(importlib.import_module, "app.lsp.client")
            client: LspClient = client_module.LspClient(spec, self._root, lambda why: self._fail(server, spec, why))
            server.client = client
            await client.start()
        except LspStartError as err:
            self._fail(server, spec, str(err))
            return None
        except Exception as err:  # whatever else goes wrong, the tools go on without this server
            log.exception("language server for %s could not start", spec.language)
            self._fail(server, spec, f"{type(err).__name__}: {err}")
            return None
        self._set_state(server, spec.language, READY)
        return client

    def _fail(self, server: _Server, spec: ServerSpec, message: str) -> None:
        log.warning("language server for %s failed: %s", spec.language, message)
        self._set_state(server, spec.language, FAILED, message)

    def _set_state(self, server: _Server, language: str, state: str, message: str = "") -> None:
        server.state, server.message = state, message
        self._bus.publish(LspStatusChanged(language, state, message))
