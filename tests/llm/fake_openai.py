"""A real OpenAI-compatible HTTP server on 127.0.0.1 that plays scripted replies.

Tests drive the real litellm client against it, so the wire format (SSE chunks,
tool-call fragments, usage chunk, error bodies and headers) is exercised end to end
without a network or an API key. It runs in a thread so it keeps answering while
the test's own event loop awaits litellm.

    server = FakeOpenAI().start()
    server.reply(Text("Hel"), Text("lo"), usage=(12, 2))
    server.fail(429, retry_after="1")
    ... model=server.model, base_url=server.base_url, api_key=server.api_key
    ... run_headless(root, HeadlessRequest(prompt), env=server.env)
    server.requests[0]["messages"]
"""

from __future__ import annotations

import time
from typing import Any

from tests.llm.fake_server import (
    MEASURED,
    ErrorReply,
    FakeHandler,
    FakeServer,
    Part,
    Reasoning,
    Received,
    Reply,
    Text,
    ToolCall,
    ToolCallFragment,
    measured_tokens,
    split_text,
    sse,
)

__all__ = [
    "MEASURED", "ErrorReply", "FakeOpenAI", "Reasoning", "Reply", "Text", "ToolCall", "ToolCallFragment", "error_body",
    "measured_tokens",
]  # fmt: skip

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


def error_body(message: str, type_: str = "invalid_request_error", code: str | None = None) -> dict:
    """The error body shape OpenAI returns."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


class FakeOpenAI(FakeServer):
    """The server. Script replies with `reply`/`fail` (served in order, one per request);
    read what clients sent in `requests` (parsed JSON bodies) and `received`."""

    # litellm routes "openai/<name>" to any OpenAI-compatible base URL; the key is never checked.
    model = "openai/fake-model"
    api_key = "test"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def env(self) -> dict[str, str]:
        """The variables that point the openai provider at this server, as a user's
        environment would (the model is then chosen from OPENAI_API_KEY)."""
        return {"OPENAI_API_KEY": self.api_key, "OPENAI_BASE_URL": self.base_url}

    @property
    def providers(self) -> dict[str, dict[str, str]]:
        """The ``providers`` config that points the openai provider at this server, as an
        .opencode.json would."""
        return {"openai": {"apiKey": self.api_key, "baseURL": self.base_url}}

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

    def handle(self, handler: FakeHandler, request: Received) -> None:
        if request.path not in CHAT_PATHS:
            handler.send_json(404, error_body(f"fake server: no route {request.path}", code="not_found"))
            return
        self.log(request)
        body = request.body
        item = self.next_item() or ErrorReply(
            500, error_body("fake server: no scripted reply left for this request", "server_error")
        )
        if isinstance(item, ErrorReply):
            handler.send_error_reply(item)
        elif body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = [sse(chunk) for chunk in _chunks(item, body, include_usage)]
            handler.send_events(item, [*events, b"data: [DONE]\n\n"])
        else:
            handler.send_json(200, _completion(item, body))


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
            for number, piece in enumerate(split_text(part.arguments, part.fragments)):
                first = number == 0
                fragment = _fragment(index, call_id if first else None, part.name if first else None, piece)
                deltas.append({"tool_calls": [fragment]})
            call_count += 1
    return deltas


def _packed(deltas: list[dict[str, Any]], calls_per_chunk: int) -> list[dict[str, Any]]:
    """The deltas with up to ``calls_per_chunk`` consecutive tool-call deltas in one."""
    packed: list[dict[str, Any]] = []
    for delta in deltas:
        previous = packed[-1] if packed else {}
        if list(delta) == list(previous) == ["tool_calls"] and len(previous["tool_calls"]) < calls_per_chunk:
            previous["tool_calls"] = [*previous["tool_calls"], *delta["tool_calls"]]
        else:
            packed.append(dict(delta))
    return packed


def _fragment(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        fragment["id"] = call_id
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    return fragment


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    has_calls = any(isinstance(p, ToolCall | ToolCallFragment) for p in reply.parts)
    return "tool_calls" if has_calls else "stop"


def _usage(reply: Reply, body: dict[str, Any]) -> dict[str, int] | None:
    if reply.usage is None:
        return None
    if reply.usage == MEASURED:
        said = [part.text if isinstance(part, Text) else part.arguments for part in reply.parts if isinstance(part, Text | ToolCall)]
        prompt, completion = measured_tokens(body), len("".join(said)) // 4
    else:
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
    chunks += [chunk(delta) for delta in _packed(_deltas(reply.parts), reply.calls_per_chunk)]
    chunks.append(chunk({}, _finish_reason(reply)))
    usage = _usage(reply, body)
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
    usage = _usage(reply, body)
    if usage is not None:
        result["usage"] = usage
    return result
