"""A real HTTP server on 127.0.0.1, in a thread, for the webfetch tests: each route is a
function that writes its own response; the server logs every request (path and Host)
and counts the body bytes each response managed to send before the client hung up."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[["Handler"], None]


@dataclass
class WebServer:
    routes: dict[str, Route]
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(path, Host header) of every request, in arrival order."""
    cookies: list[str | None] = field(default_factory=list)
    """The Cookie header of every request (None without one), in arrival order."""
    sent: dict[str, int] = field(default_factory=dict)
    """Path -> body bytes written before the client closed (streaming routes)."""
    finished: dict[str, threading.Event] = field(default_factory=dict)
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def done(self, path: str) -> threading.Event:
        return self.finished.setdefault(path, threading.Event())


class Handler(BaseHTTPRequestHandler):
    server_state: WebServer

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        path = self.path.split("?", 1)[0]
        self.server_state.requests.append((self.path, self.headers.get("Host", "")))
        self.server_state.cookies.append(self.headers.get("Cookie"))
        route = self.server_state.routes.get(path)
        try:
            if route is None:
                self.reply(404, "text/plain", b"no such page")
            else:
                route(self)
        finally:
            self.server_state.done(path).set()

    def reply(self, status: int, content_type: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.reply(status, "text/plain", b"", Location=location)

    def stream(self, content_type: str, chunks: Iterator[bytes], **headers: str) -> None:
        """Send ``chunks`` without a length (close-delimited), counting what got out."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.end_headers()
        path = self.path.split("?", 1)[0]
        self.server_state.sent[path] = 0
        try:
            for chunk in chunks:
                self.wfile.write(chunk)
                self.server_state.sent[path] += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        pass


@contextmanager
def web_server(routes: dict[str, Route], tls: ssl.SSLContext | None = None) -> Iterator[WebServer]:
    """Serve ``routes``; with ``tls`` (a server context holding its certificate), HTTPS."""
    state = WebServer(routes)
    handler = type("BoundHandler", (Handler,), {"server_state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
