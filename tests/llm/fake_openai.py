"""A real OpenAI-compatible HTTP server on 127.0.0.1 that plays scripted replies.

Tests drive the real litellm client against it, so the wire format (SSE chunks,
tool-call fragments, usage chunk, error bodies and headers) is exercised end to end
without a network or an API key. It runs in a thread so it keeps answering while
the test's own event loop awaits litellm.

    server = FakeOpenAI().start()
    server.reply(Text("Hel"), Text("lo"), usage=(12, 2))
    server.fail(429, retry_after="1")
    ... model=server.model, base_url=server.base_url, api_key=server.api_key
    server.requests[0]["messages"]
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class Text:
    """One chunk of answer text (a `content` delta)."""

    text: str


@dataclass(frozen=True)
class Reasoning:
    """One chunk of thinking, sent as a `reasoning_content` delta like DeepSeek and vLLM do."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A whole tool call, sent as `fragments` chunks: the first carries index, id and name,
    every chunk carries a slice of the JSON arguments."""

    name: str
    arguments: str
    id: str = ""
    index: int | None = None
    fragments: int = 3


@dataclass(frozen=True)
class ToolCallFragment:
    """One raw tool-call delta, for scripting interleaved parallel calls by hand."""

    index: int
    arguments: str
    id: str | None = None
    name: str | None = None


Part = Text | Reasoning | ToolCall | ToolCallFragment


@dataclass(frozen=True)
class Reply:
    """A successful answer. `usage` is (prompt_tokens, completion_tokens) or None to omit
    the usage chunk; `finish_reason` None picks "tool_calls" or "stop" from the parts.
    `chunk_delay` sleeps before each chunk; `hang_after` stops sending after that many
    chunks and keeps the connection open until the server is closed."""

    parts: tuple[Part, ...]
    usage: tuple[int, int] | None = (10, 5)
    finish_reason: str | None = None
    chunk_delay: float = 0.0
    hang_after: int | None = None


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error: status, JSON body, optional extra headers (e.g. Retry-After)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None) -> dict:
    """The error body shape OpenAI returns."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


class FakeOpenAI:
    """The server. Script replies with `reply`/`fail` (served in order, one per request);
    read what clients sent in `requests` (parsed JSON bodies)."""

    # litellm routes "openai/<name>" to any OpenAI-compatible base URL; the key is never checked.
    model = "openai/fake-model"
    api_key = "test"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._script: deque[Reply | ErrorReply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        # A short poll keeps close() (which waits for one poll) from slowing every test down.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release any reply hanging mid-stream."""
        self._closing.set()
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
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------

    def reply(
        self,
        *parts: Part,
        usage: tuple[int, int] | None = (10, 5),
        finish_reason: str | None = None,
        chunk_delay: float = 0.0,
        hang_after: int | None = None,
    ) -> None:
        self.push(Reply(parts, usage, finish_reason, chunk_delay, hang_after))

    def fail(
        self,
        status: int,
        message: str = "scripted failure",
        *,
        code: str | None = None,
        type_: str = "api_error",
        retry_after: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["Retry-After"] = retry_after
        self.push(ErrorReply(status, error_body(message, type_, code), all_headers))

    def push(self, item: Reply | ErrorReply) -> None:
        with self._lock:
            self._script.append(item)

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self._script)

    def _next(self, body: dict[str, Any]) -> Reply | ErrorReply:
        with self._lock:
            self.requests.append(body)
            if self._script:
                return self._script.popleft()
        return ErrorReply(
            500, error_body("fake server: no scripted reply left for this request", "server_error")
        )


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.0 handler: a streamed body ends when the connection closes, as SSE allows."""

    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        return

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.split("?")[0] not in CHAT_PATHS:
            self._send_json(404, error_body(f"fake server: no route {self.path}", code="not_found"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        item = self.fake._next(body)
        if isinstance(item, ErrorReply):
            self._send_json(item.status, item.body, item.headers)
        elif body.get("stream"):
            self._stream(item, body)
        else:
            self._send_json(200, _completion(item, body))

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for sent, chunk in enumerate(_chunks(reply, body, include_usage)):
            if reply.hang_after is not None and sent >= reply.hang_after:
                self.fake._closing.wait()
                return
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            try:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (cancelled): nothing more to do
        self.wfile.write(b"data: [DONE]\n\n")


# -- wire format --------------------------------------------------------------------------


def _deltas(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    """Each part as the `delta` objects it is streamed as."""
    deltas: list[dict[str, Any]] = []
    call_count = 0
    for part in parts:
        if isinstance(part, Text):
            deltas.append({"content": part.text})
        elif isinstance(part, Reasoning):
            deltas.append({"reasoning_content": part.text})
        elif isinstance(part, ToolCallFragment):
            deltas.append({"tool_calls": [_fragment(part.index, part.id, part.name, part.arguments)]})
        else:
            index = call_count if part.index is None else part.index
            call_id = part.id or f"call_{index}"
            for number, piece in enumerate(_split(part.arguments, part.fragments)):
                first = number == 0
                fragment = _fragment(index, call_id if first else None, part.name if first else None, piece)
                deltas.append({"tool_calls": [fragment]})
            call_count += 1
    return deltas


def _fragment(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    return fragment


def _split(text: str, pieces: int) -> list[str]:
    """`text` cut into `pieces` nearly equal slices (at least one, possibly empty)."""
    pieces = max(1, pieces)
    size = -(-len(text) // pieces) or 1
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    has_calls = any(isinstance(p, ToolCall | ToolCallFragment) for p in reply.parts)
    return "tool_calls" if has_calls else "stop"


def _usage(reply: Reply) -> dict[str, int] | None:
    if reply.usage is None:
        return None
    prompt, completion = reply.usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _envelope(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": kind,
        "created": int(time.time()),
        "model": body.get("model", ""),
    }


def _chunks(reply: Reply, body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The SSE chunks of a streamed reply: role, deltas, finish, then usage if asked for."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {**_envelope(body, "chat.completion.chunk"), "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk(delta) for delta in _deltas(reply.parts)]
    chunks.append(chunk({}, _finish_reason(reply)))
    usage = _usage(reply)
    if include_usage and usage is not None:
        chunks.append({**_envelope(body, "chat.completion.chunk"), "choices": [], "usage": usage})
    return chunks


def _completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    """The whole reply as one non-streamed `chat.completion` object."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(p.text for p in reply.parts if isinstance(p, Text)) or None,
    }
    reasoning = "".join(p.text for p in reply.parts if isinstance(p, Reasoning))
    if reasoning:
        message["reasoning_content"] = reasoning
    calls: dict[int, dict[str, Any]] = {}
    for delta in _deltas(reply.parts):
        for fragment in delta.get("tool_calls", []):
            call = calls.setdefault(fragment["index"], {"type": "function", "function": {"arguments": ""}})
            call.setdefault("id", fragment.get("id"))
            if "name" in fragment["function"]:
                call["function"]["name"] = fragment["function"]["name"]
            call["function"]["arguments"] += fragment["function"]["arguments"]
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    choice = {"index": 0, "message": message, "finish_reason": _finish_reason(reply)}
    result = {**_envelope(body, "chat.completion"), "choices": [choice]}
    usage = _usage(reply)
    if usage is not None:
        result["usage"] = usage
    return result
