"""What every fake provider server shares: a real HTTP server on 127.0.0.1 in a thread,
a script of replies served in order, and a log of what clients sent.

Each provider's fake (fake_openai.py, fake_anthropic.py, fake_gemini.py) turns the same
script items into its own wire format and checks requests the way its real API does.
The server runs in a thread so it keeps answering while the test's event loop awaits
litellm.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
"""A tool definition in the OpenAI format the provider takes, for requests that offer one."""


def answered(history: list[dict[str, Any]], call: Any, output: str) -> list[dict[str, Any]]:
    """``history`` (OpenAI format, as the provider takes it) followed by the assistant's
    ``call`` (a provider ToolCall) and the tool's ``output``."""
    return [
        *history,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        ]},
        {"role": "tool", "tool_call_id": call.id, "content": output},
    ]  # fmt: skip

# -- script items -------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """One chunk of answer text."""

    text: str


@dataclass(frozen=True)
class Reasoning:
    """One chunk of thinking. Providers that sign thinking (Anthropic) sign the whole
    block the consecutive Reasoning parts make."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A whole tool call, streamed as `fragments` slices of its JSON arguments where the
    format streams arguments (a provider that sends whole calls ignores `fragments`)."""

    name: str
    arguments: str
    id: str = ""
    index: int | None = None
    fragments: int = 3


@dataclass(frozen=True)
class ToolCallFragment:
    """One raw OpenAI tool-call delta, for scripting interleaved parallel calls by hand."""

    index: int
    arguments: str
    id: str | None = None
    name: str | None = None


Part = Text | Reasoning | ToolCall | ToolCallFragment


MEASURED = "measured"
"""A reply's usage counted by the fake from what it received (see ``measured_tokens``)."""


def measured_tokens(body: dict[str, Any]) -> int:
    """The size of a chat request as this fake counts it: its messages and tools as JSON,
    4 characters a token (a real provider counts with its tokenizer)."""
    return len(json.dumps([body.get("messages", []), body.get("tools", [])], ensure_ascii=False)) // 4


@dataclass(frozen=True)
class Reply:
    """A successful answer. `usage` is (input, output) tokens, MEASURED (the fake counts
    the request and the reply), or None to omit usage (or let the fake count); `finish_reason` None picks one from the parts.
    `chunk_delay` sleeps before each chunk; `hang_after` stops sending after that many
    chunks and keeps the connection open until the server is closed; `cut_after` closes
    the connection after that many chunks (the answer cut mid-stream)."""

    parts: tuple[Part, ...]
    usage: tuple[int, int] | str | None = (10, 5)
    finish_reason: str | None = None
    chunk_delay: float = 0.0
    hang_after: int | None = None
    calls_per_chunk: int = 1
    cut_after: int | None = None
    """How many tool calls (each then in one piece) one chunk carries, as a provider
    streaming many parallel calls may send them (OpenAI's format only)."""


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error: status, JSON body, optional extra headers (e.g. Retry-After)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Header names in lower case."""
    body: dict[str, Any]
    at: float
    """time.monotonic() when it arrived."""


def split_text(text: str, pieces: int) -> list[str]:
    """`text` cut into `pieces` nearly equal slices (at least one, possibly empty)."""
    pieces = max(1, pieces)
    size = -(-len(text) // pieces) or 1
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# -- the server ---------------------------------------------------------------------------


class FakeServer:
    """The common part of the fakes. A subclass sets `model`, `api_key` and `base_url`
    and implements `handle`, which answers one parsed POST through the handler's helpers."""

    model = "fake/fake-model"
    api_key = "test"

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._script: deque[Reply | ErrorReply] = deque()
        self._lock = threading.Lock()
        self.closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self):
        server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHandler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        # A short poll keeps close() (which waits for one poll) from slowing every test down.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release any reply hanging mid-stream."""
        self.closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        assert self._server is not None, "call start() first"
        return self._server.server_address[1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting and the log -------------------------------------------------------

    def reply(
        self,
        *parts: Part,
        usage: tuple[int, int] | str | None = (10, 5),
        finish_reason: str | None = None,
        chunk_delay: float = 0.0,
        hang_after: int | None = None,
        cut_after: int | None = None,
    ) -> None:
        self.push(Reply(parts, usage, finish_reason, chunk_delay, hang_after, cut_after=cut_after))

    def push(self, item: Reply | ErrorReply) -> None:
        with self._lock:
            self._script.append(item)

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in order."""
        with self._lock:
            return [request.body for request in self.received]

    def log(self, request: Received) -> None:
        with self._lock:
            self.received.append(request)

    def next_item(self) -> Reply | ErrorReply | None:
        """The next scripted item, or None when the script is used up."""
        with self._lock:
            return self._script.popleft() if self._script else None

    def handle(self, handler: FakeHandler, request: Received) -> None:
        raise NotImplementedError


class FakeHandler(BaseHTTPRequestHandler):
    """HTTP/1.0 handler: a streamed body ends when the connection closes, as SSE allows."""

    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        return

    @property
    def fake(self) -> FakeServer:
        return self.server.fake  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) or b"{}"
        request = Received(
            path=url.path,
            query={name: values[-1] for name, values in parse_qs(url.query).items()},
            headers={name.lower(): value for name, value in self.headers.items()},
            body=json.loads(raw),
            at=time.monotonic(),
        )
        self.fake.handle(self, request)

    def send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_error_reply(self, error: ErrorReply) -> None:
        self.send_json(error.status, error.body, error.headers)

    def send_events(self, reply: Reply, events: Iterable[bytes]) -> None:
        """A 200 text/event-stream answer of already-encoded SSE events, paced as the
        reply says (a delay before each, a hang after some, or a cut: the length of
        the whole answer is announced, and the connection closed after some)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if reply.cut_after is not None:
            events = list(events)
            self.send_header("Content-Length", str(sum(len(event) for event in events)))
        self.end_headers()
        for sent, event in enumerate(events):
            if reply.hang_after is not None and sent >= reply.hang_after:
                self.fake.closing.wait()
                return
            if reply.cut_after is not None and sent >= reply.cut_after:
                return
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            try:
                self.wfile.write(event)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (cancelled): nothing more to do


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    """One server-sent event carrying `data` as JSON."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()
