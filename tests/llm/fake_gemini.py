"""A real Gemini API server on 127.0.0.1 that plays scripted replies.

It answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with server-sent
`GenerateContentResponse` chunks (text parts, `thought` parts for Reasoning, whole
`functionCall` parts, `usageMetadata` on the last chunk) and `:generateContent` with one
response, and refuses requests the way the real API does: a wrong key (400
API_KEY_INVALID), a `functionResponse` turn that does not answer the function call turn
right before it (400). For Gemini 3 models each function call carries a
`thoughtSignature`, and a request whose current turn sends a call back without the
signature it was given is refused (400), as Gemini 3 does.

    server = FakeGemini().start()
    server.reply(Text("Hi"), ToolCall("read", '{"path": "a"}'))
    ... model=server.model, base_url=server.base_url, api_key=server.api_key
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from tests.llm.fake_server import (
    ErrorReply,
    FakeHandler,
    FakeServer,
    Reasoning,
    Received,
    Reply,
    Text,
    ToolCall,
    sse,
)

__all__ = ["FakeGemini", "Reasoning", "Text", "ToolCall", "error_body"]

_ROUTE = re.compile(r"^/v1beta/models/(?P<model>[^:/]+):(?P<method>streamGenerateContent|generateContent)$")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def error_body(code: int, message: str, reason: str | None = None) -> dict[str, Any]:
    """The error body shape Google APIs return."""
    error: dict[str, Any] = {"code": code, "message": message, "status": _STATUS_NAMES.get(code, "UNKNOWN")}
    if reason:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}
        ]
    return {"error": error}


class FakeGemini(FakeServer):
    model = "gemini/gemini-2.5-flash"
    api_key = "gemini-test-key"

    @property
    def base_url(self) -> str:
        """What litellm takes as `api_base` for Gemini (it appends /models/<model>:<method>)."""
        return f"{self.origin}/v1beta"

    def fail(
        self, status: int, message: str = "scripted failure", *, retry_after: str | None = None
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.push(ErrorReply(status, error_body(status, message), headers))

    def handle(self, handler: FakeHandler, request: Received) -> None:
        route = _ROUTE.match(request.path)
        if route is None:
            handler.send_json(404, error_body(404, f"fake server: no route {request.path}"))
            return
        self.log(request)
        key = request.headers.get("x-goog-api-key") or request.query.get("key")
        if key != self.api_key:
            message = "API key not valid. Please pass a valid API key."
            handler.send_json(400, error_body(400, message, "API_KEY_INVALID"))
            return
        contents = request.body.get("contents") or []
        signed = route["model"].startswith("gemini-3")
        if problem := _function_turn_problem(contents) or (_signature_problem(contents) if signed else None):
            handler.send_json(400, error_body(400, problem))
            return
        item = self.next_item() or ErrorReply(
            500, error_body(500, "fake server: no scripted reply left for this request")
        )
        if isinstance(item, ErrorReply):
            handler.send_error_reply(item)
        elif route["method"] == "streamGenerateContent":
            handler.send_events(item, [sse(chunk) for chunk in _chunks(item, route["model"], signed)])
        else:
            handler.send_json(200, _response(item, route["model"], _parts(item.parts, signed), last=True))


def _fields(content: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The `name` fields of a content's parts; the API reads proto JSON, so both the
    camelCase and the snake_case spelling of a field are accepted."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    found = []
    for part in content.get("parts", []):
        if (value := part.get(name, part.get(snake))) is not None:
            found.append(value)
    return found


def _function_turn_problem(contents: list[dict[str, Any]]) -> str | None:
    """A functionResponse turn must come right after the function call turn it answers,
    with one response per call."""
    for index, content in enumerate(contents):
        responses = _fields(content, "functionResponse")
        if not responses:
            continue
        previous = contents[index - 1] if index else {}
        calls = _fields(previous, "functionCall")
        if previous.get("role") != "model" or not calls:
            return (
                "Please ensure that function response turn comes immediately after a function call turn."
            )
        if len(calls) != len(responses):
            return (
                "Please ensure that the number of function response parts is equal to the number of "
                "function call parts of the function call turn."
            )
        if sorted(call.get("name") for call in calls) != sorted(response.get("name") for response in responses):
            return "Please ensure that each function response answers a function call of the previous turn by name."
    return None


def call_signature(name: str, args: dict[str, Any]) -> str:
    """The thoughtSignature the fake gives a function call (Gemini's are opaque too)."""
    digest = hashlib.sha256(json.dumps([name, args], sort_keys=True).encode()).digest()
    return base64.b64encode(digest).decode()


def _signature_problem(contents: list[dict[str, Any]]) -> str | None:
    """Gemini 3: every function call of the current turn (after the last user text) must
    come back with the thoughtSignature it was sent with."""
    texts = [i for i, c in enumerate(contents) if c.get("role") == "user" and any("text" in p for p in c.get("parts", []))]
    start = texts[-1] if texts else 0
    for index in range(start, len(contents)):
        for position, part in enumerate(contents[index].get("parts", [])):
            call = part.get("functionCall", part.get("function_call"))
            if call is None:
                continue
            signature = part.get("thoughtSignature", part.get("thought_signature"))
            if signature != call_signature(call.get("name", ""), call.get("args") or {}):
                return (
                    "Function call is missing a thought_signature in functionCall parts. This is required "
                    f"for tools to work correctly. Additional data, function call `{call.get('name')}`, "
                    f"position {position + 1}."
                )
    return None


def _parts(parts: tuple, signed: bool = False) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            wire.append({"text": part.text})
        elif isinstance(part, Reasoning):
            wire.append({"text": part.text, "thought": True})
        else:
            assert isinstance(part, ToolCall), "the Gemini fake sends text, thoughts and whole calls"
            args = json.loads(part.arguments or "{}")
            call: dict[str, Any] = {"functionCall": {"name": part.name, "args": args}}
            if signed:
                call["thoughtSignature"] = call_signature(part.name, args)
            wire.append(call)
    return wire


def _usage(reply: Reply) -> dict[str, int] | None:
    if reply.usage is None:
        return None
    prompt, completion = reply.usage
    return {"promptTokenCount": prompt, "candidatesTokenCount": completion, "totalTokenCount": prompt + completion}


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or "STOP"  # Gemini says STOP after function calls too


def _response(reply: Reply, model: str, parts: list[dict[str, Any]], *, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    response: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if last:
        candidate["finishReason"] = _finish_reason(reply)
        if (usage := _usage(reply)) is not None:
            response["usageMetadata"] = usage
    return response


def _chunks(reply: Reply, model: str, signed: bool) -> list[dict[str, Any]]:
    """One chunk per part; the last carries the finish reason and the usage."""
    parts = _parts(reply.parts, signed) or [{"text": ""}]
    return [
        _response(reply, model, [part], last=number == len(parts) - 1) for number, part in enumerate(parts)
    ]
