"""One running language server: spawn it, initialize, keep each touched file open
(didOpen once, then full-text didChange), and collect publishDiagnostics per file.

Messages are built and read with lsprotocol's types; this module is imported only
when the first server starts, because lsprotocol takes most of a second to import."""

from __future__ import annotations

import asyncio
import os
from asyncio.subprocess import PIPE, SubprocessStreamProtocol
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from app.core.child_environment import for_children
from app.core.shelter import sheltered
from app.lsp.diagnostic import ERROR, Diagnostic
from app.lsp.jsonrpc import METHOD_NOT_FOUND, ConnectionClosed, JsonRpcConnection, JsonRpcError
from app.lsp.servers import LspStartError, ServerSpec, find_executable

START_TIMEOUT = 20.0
"""Seconds a server gets to answer initialize before it counts as failed."""
STDERR_LINES = 5
"""The last lines of the server's stderr kept to explain a crash."""

converter = get_converter()


@dataclass
class Published:
    """The latest diagnostics of one file: ``seq`` orders arrivals, ``version`` is the
    document version they describe when the server says so."""

    seq: int
    version: int | None
    diagnostics: list[Diagnostic]


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def uri_to_path(uri: str) -> Path:
    """url2pathname does the percent-decoding; decoding twice would turn a file named
    ``a%20b.py`` into ``a b.py`` and its diagnostics would never be found."""
    return Path(url2pathname(urlparse(uri).path))


def to_diagnostic(item: lsp.Diagnostic) -> Diagnostic:
    start = item.range.start
    return Diagnostic(
        line=start.line + 1,
        column=start.character + 1,
        severity=int(item.severity) if item.severity is not None else ERROR,
        message=item.message,
        source=item.source or "",
    )


async def _close_started(started: tuple[asyncio.SubprocessTransport, SubprocessStreamProtocol]) -> None:
    """A server started while its start was cancelled: closing its transport kills it."""
    started[0].close()


class LspClient:
    """``on_exit(message)`` is called once if the server stops by itself."""

    def __init__(self, spec: ServerSpec, root: Path, on_exit: Callable[[str], None]) -> None:
        self.spec = spec
        self.root = root
        self._on_exit = on_exit
        self._transport: asyncio.SubprocessTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._connection: JsonRpcConnection | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._versions: dict[Path, int] = {}
        self._published: dict[Path, Published] = {}
        self._seq = 0
        self._arrival = asyncio.Event()
        self._stopping = False
        self._initialized = False
        """Until then a failure is start()'s to report, not on_exit's."""

    @property
    def running(self) -> bool:
        return self._connection is not None and not self._connection.closed

    async def start(self) -> None:
        command = self.spec.command
        # A bare name is looked up on PATH, then in the interpreter's bin/; a path is run as given.
        program = command[0] if os.sep in command[0] else find_executable(command[0]) or command[0]
        self._loop = loop = asyncio.get_running_loop()
        try:
            # The transport itself (not asyncio.subprocess.Process) so that kill() can close
            # it, pipes included, while the loop still runs.
            transport, streams = await sheltered(
                loop.subprocess_exec(
                    lambda: SubprocessStreamProtocol(limit=2**16, loop=loop),
                    program,
                    *command[1:],
                    stdin=PIPE,
                    stdout=PIPE,
                    stderr=PIPE,
                    cwd=self.root,
                    env=for_children(),
                ),
                _close_started,
            )
            self._transport = transport
        except OSError as err:
            raise LspStartError(
                f"cannot run {command[0]} ({err.strerror or err}): install it, or set lsp.{self.spec.language}"
                ".command in the config (or disabled: true)"
            ) from None
        assert streams.stdin and streams.stdout and streams.stderr
        self._connection = JsonRpcConnection(
            streams.stdout,
            streams.stdin,
            on_notification=self._notification,
            on_request=self._request,
            on_close=self._closed,
        )
        self._tasks = [loop.create_task(self._serve()), loop.create_task(self._collect_stderr(streams.stderr))]
        try:
            async with asyncio.timeout(START_TIMEOUT):
                await self._connection.request("initialize", converter.unstructure(self._initialize_params()))
            await self._connection.notify("initialized", {})
            self._initialized = True
        except (ConnectionClosed, JsonRpcError, TimeoutError) as err:
            self.kill()
            raise LspStartError(await self._failure(err)) from None

    def _initialize_params(self) -> lsp.InitializeParams:
        return lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=path_to_uri(self.root),
            root_path=str(self.root),
            workspace_folders=[lsp.WorkspaceFolder(uri=path_to_uri(self.root), name=self.root.name)],
            capabilities=lsp.ClientCapabilities(
                text_document=lsp.TextDocumentClientCapabilities(
                    synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=False),
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
                ),
                workspace=lsp.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
            ),
        )

    async def touch(self, path: Path, text: str) -> tuple[int, int]:
        """Send the file's current text: (the document version sent, the arrival
        counter before it) for ``wait_for``."""
        assert self._connection is not None
        seq = self._seq
        uri = path_to_uri(path)
        version = self._versions.get(path, 0) + 1
        self._versions[path] = version
        if version == 1:
            item = lsp.TextDocumentItem(
                uri=uri, language_id=self.spec.language_id(path.suffix), version=version, text=text
            )
            params: Any = lsp.DidOpenTextDocumentParams(text_document=item)
            method = "textDocument/didOpen"
        else:
            params = lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
            method = "textDocument/didChange"
        await self._connection.notify(method, converter.unstructure(params))
        return version, seq

    async def wait_for(self, path: Path, version: int, after_seq: int) -> list[Diagnostic]:
        """The file's diagnostics once the server has published them for ``version``
        (or, from servers that do not say which version, after the touch)."""
        while True:
            entry = self._published.get(path)
            if entry and entry.seq > after_seq and (entry.version is None or entry.version >= version):
                return entry.diagnostics
            if not self.running:
                raise ConnectionClosed("the language server stopped")
            arrival = self._arrival
            await arrival.wait()

    def diagnostics(self) -> dict[Path, list[Diagnostic]]:
        return {path: entry.diagnostics for path, entry in self._published.items()}

    def kill(self) -> None:
        """Stop the process now: the server holds nothing worth a graceful shutdown.
        Synchronous, and safe after the event loop has closed."""
        self._stopping = True
        if self._transport is None or self._transport.is_closing():
            return
        if self._loop is not None and self._loop.is_closed():
            process = self._transport.get_extra_info("subprocess")
            if process.poll() is None:
                process.kill()
        else:
            self._transport.close()  # kills the process if it still runs

    async def stop(self, timeout: float = 2.0) -> None:
        """``kill``, then wait (at most ``timeout`` seconds) until the loop has seen the
        process end: an exit reported after the loop closed is logged as an error."""
        self.kill()
        if self._transport is None or self._loop is None or self._loop.is_closed():
            return
        deadline = self._loop.time() + timeout
        while self._transport.get_returncode() is None and self._loop.time() < deadline:
            await asyncio.sleep(0.01)

    async def _serve(self) -> None:
        """The server's lifetime: read until it ends. Cancelled when the event loop shuts
        down (asyncio.run cancels what is left), which still kills it cleanly."""
        assert self._connection is not None
        try:
            await self._connection.run()
        finally:
            self.kill()

    def _notification(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics":
            return
        published = converter.structure(params, lsp.PublishDiagnosticsParams)
        self._seq += 1
        self._published[uri_to_path(published.uri)] = Published(
            self._seq, published.version, [to_diagnostic(item) for item in published.diagnostics]
        )
        self._wake()

    def _request(self, method: str, params: Any) -> Any:
        """The server's own requests, answered with the neutral value each expects."""
        if method == "workspace/configuration":
            return [None for _ in (params or {}).get("items", [])]
        if method == "workspace/workspaceFolders":
            return [{"uri": path_to_uri(self.root), "name": self.root.name}]
        if method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
            "window/showDocument",
            "workspace/diagnostic/refresh",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
        ):
            return None
        raise JsonRpcError(METHOD_NOT_FOUND, f"{method} is not supported by this client")

    async def _closed(self, reason: str) -> None:
        self._wake()
        if self._initialized and not self._stopping:
            self._on_exit(await self._failure(ConnectionClosed(reason)))

    async def _failure(self, err: Exception) -> str:
        """Why the server is unusable, with its exit code and last stderr line."""
        what = "did not answer initialize in time" if isinstance(err, TimeoutError) else str(err)
        for _ in range(20):  # the exit code and the last stderr lines come just after EOF
            await asyncio.sleep(0.01)
            code = self._transport.get_returncode() if self._transport else None
            if code is not None:
                what = f"{what} (exit code {code})"
                break
        if self._stderr:
            what = f"{what}: {self._stderr[-1]}"
        return f"{' '.join(self.spec.command)}: {what}"

    async def _collect_stderr(self, stream: asyncio.StreamReader) -> None:
        """Drained to the end: a server blocked on a full stderr pipe would stop answering."""
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line longer than the buffer: asyncio dropped it, read on
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._stderr.append(text)

    def _wake(self) -> None:
        self._arrival.set()
        self._arrival = asyncio.Event()
