"""A small JSON-RPC 2.0 endpoint over a language server's stdio, with LSP's
Content-Length framing. Written here rather than taken from a library because the
client needs only four things: requests with ids, notifications, answers to the
server's own requests, and a clear end when the process dies."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Any]
"""Answers a server->client request: returns the result, or raises JsonRpcError."""

METHOD_NOT_FOUND = -32601


class JsonRpcError(Exception):
    """An error answer (from the server, or ours to send back)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message


class ConnectionClosed(Exception):
    """The server's output ended (it exited or crashed) before the answer came."""


def encode_message(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next framed message, or None at the end of the stream."""
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("a message header without Content-Length")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None
    message: dict[str, Any] = json.loads(body)
    return message


class JsonRpcConnection:
    """One endpoint. ``run()`` reads until the stream ends; ``on_close`` is called once
    then, with the reason, so the owner can mark the server failed."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
        on_close: Callable[[str], Awaitable[None] | None],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_close = on_close
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.closed = False

    async def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, payload: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionClosed("the language server is not running")
        try:
            self._writer.write(encode_message(payload))
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as err:
            raise ConnectionClosed(f"the language server stopped reading ({err})") from None

    async def run(self) -> None:
        reason = "the language server exited"
        try:
            while (message := await read_message(self._reader)) is not None:
                await self._dispatch(message)
        except (ValueError, ConnectionError) as err:
            reason = f"the language server sent an unreadable message ({err})"
        finally:
            self._close(reason)
        result = self._on_close(reason)
        if result is not None:
            await result

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # an answer to one of our requests
            request_id = message.get("id")  # ours are ints: any other id answers nothing we sent
            future = self._pending.get(request_id) if isinstance(request_id, int) else None
            if future is None or future.done():
                return
            if "error" in message:
                error = message["error"] or {}
                future.set_exception(JsonRpcError(error.get("code", 0), error.get("message", "unknown error")))
            else:
                future.set_result(message.get("result"))
        elif "id" in message:
            await self._answer(message["id"], method, message.get("params"))
        else:
            try:
                self._on_notification(method, message.get("params"))
            except Exception:  # a bad notification must not stop the reader
                log.exception("LSP notification %s could not be handled", method)

    async def _answer(self, request_id: Any, method: str, params: Any) -> None:
        try:
            reply = {"result": self._on_request(method, params)}
        except JsonRpcError as err:
            reply = {"error": {"code": err.code, "message": err.message}}
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, **reply})
        except ConnectionClosed:
            pass

    def _close(self, reason: str) -> None:
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(reason))
