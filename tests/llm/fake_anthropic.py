"""A real Anthropic Messages API server on 127.0.0.1 that plays scripted replies.

It speaks the streaming wire format (`message_start`, `content_block_start/delta/stop`
with `text_delta`, `input_json_delta`, `thinking_delta` and `signature_delta`,
`message_delta` with usage, `message_stop`) and refuses requests the way the real API
does: a wrong key (401), a `tool_result` without its `tool_use` and a `tool_use` left
unanswered (400), thinking enabled while the assistant turn being continued after its
tool calls lacks its thinking block, a thinking block whose signature does not match its
text, more than four cache breakpoints.

Prompt caching is modelled: every prefix ending at a `cache_control` breakpoint is
written to the server's cache, and a later request whose prompt starts with a cached
prefix reads it (tokens counted as JSON characters / 4). The reported usage is then
`input_tokens` (as scripted: the uncached tail), `cache_creation_input_tokens` and
`cache_read_input_tokens` (computed); `reported` keeps each usage sent.

    server = FakeAnthropic().start()
    server.reply(Reasoning("Let me look."), Text("Hi"), ToolCall("read", '{"path": "a"}'))
    ... model=server.model, base_url=server.base_url, api_key=server.api_key
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from itertools import groupby
from typing import Any

from tests.llm.fake_server import (
    ErrorReply,
    FakeHandler,
    FakeServer,
    Part,
    Reasoning,
    Received,
    Reply,
    Text,
    ToolCall,
    split_text,
    sse,
)

__all__ = ["FakeAnthropic", "Reasoning", "Text", "ToolCall", "error_body", "sign"]

MESSAGES_PATH = "/v1/messages"
MAX_CACHE_BREAKPOINTS = 4
CACHE_LOOKBACK_BLOCKS = 20
"""The real API looks for a cached prefix at most this many blocks before a breakpoint."""
_SIGNING_KEY = b"fake-anthropic-thinking"


def error_body(message: str, type_: str = "invalid_request_error") -> dict[str, Any]:
    """The error body shape Anthropic returns."""
    return {"type": "error", "error": {"type": type_, "message": message}}


def sign(thinking: str) -> str:
    """The signature the fake gives a thinking block: only the server can make it, and it
    stops matching when the text changes."""
    digest = hmac.new(_SIGNING_KEY, thinking.encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


class FakeAnthropic(FakeServer):
    model = "anthropic/claude-sonnet-4-5"
    api_key = "sk-ant-test"

    def __init__(self) -> None:
        super().__init__()
        self.reported: list[dict[str, int]] = []
        """The usage sent with each successful reply."""
        self._cache: dict[str, int] = {}
        """Digest of a cached prompt prefix -> its token count."""

    @property
    def base_url(self) -> str:
        """What litellm takes as `api_base` for Anthropic (it appends /v1/messages)."""
        return self.origin

    def fail(
        self,
        status: int,
        message: str = "scripted failure",
        *,
        type_: str = "api_error",
        retry_after: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["retry-after"] = retry_after
        self.push(ErrorReply(status, error_body(message, type_), all_headers))

    # -- requests --------------------------------------------------------------------

    def handle(self, handler: FakeHandler, request: Received) -> None:
        if request.path.rstrip("/") != MESSAGES_PATH:
            handler.send_json(404, error_body(f"fake server: no route {request.path}", "not_found_error"))
            return
        self.log(request)
        if request.headers.get("x-api-key") != self.api_key:
            handler.send_json(401, error_body("invalid x-api-key", "authentication_error"))
            return
        if problem := self.refusal(request):
            handler.send_json(400, error_body(problem))
            return
        item = self.next_item() or ErrorReply(
            500, error_body("fake server: no scripted reply left for this request")
        )
        if isinstance(item, ErrorReply):
            handler.send_error_reply(item)
            return
        usage = self._usage(request.body, item)
        self.reported.append(usage)
        if request.body.get("stream"):
            handler.send_events(item, _events(item, request.body, usage))
        else:
            handler.send_json(200, _message(item, request.body, usage))

    def refusal(self, request: Received) -> str | None:
        """The real API's 400 message for a request it refuses, or None."""
        body = request.body
        if "anthropic-version" not in request.headers:
            return "anthropic-version: header is required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        thinking = body.get("thinking") or {}
        if thinking.get("type") == "enabled":
            budget = thinking.get("budget_tokens", 0)
            if budget < 1024:
                return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            if body["max_tokens"] <= budget:
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
        breakpoints = sum(1 for block in _blocks(body) if "cache_control" in block)
        if breakpoints > MAX_CACHE_BREAKPOINTS:
            return f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
        messages = body.get("messages") or []
        return (
            _tool_pairing_problem(messages)
            or _signature_problem(messages)
            or (_thinking_problem(messages) if thinking.get("type") == "enabled" else None)
        )

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        """Usage with the cache modelled: the longest cached prefix is read, and every
        breakpoint's prefix not cached yet is written."""
        scripted_input, output = reply.usage or (10, 5)
        blocks = _blocks(body)
        sizes = [len(json.dumps(_without_cache_control(block))) // 4 + 1 for block in blocks]
        digests = _prefix_digests(blocks)
        marks = [index for index, block in enumerate(blocks) if "cache_control" in block]
        read = 0
        for mark in marks:
            for end in range(mark, max(-1, mark - CACHE_LOOKBACK_BLOCKS), -1):
                if digests[end] in self._cache:
                    read = max(read, self._cache[digests[end]])
                    break
        written = 0
        for mark in marks:
            tokens = sum(sizes[: mark + 1])
            if digests[mark] not in self._cache:
                self._cache[digests[mark]] = tokens
                written = max(written, tokens - read)
        return {
            "input_tokens": scripted_input,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": output,
        }


# -- request checks -----------------------------------------------------------------------


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _tool_pairing_problem(messages: list[dict[str, Any]]) -> str | None:
    """Each tool_use answered in the very next message, each tool_result answering one."""
    for index, message in enumerate(messages):
        blocks = _content(message)
        if message.get("role") == "user":
            previous = _content(messages[index - 1]) if index else []
            asked = {block.get("id") for block in previous if block.get("type") == "tool_use"}
            for number, block in enumerate(blocks):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                    return (
                        f"messages.{index}.content.{number}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block must "
                        "have a corresponding `tool_use` block in the previous message."
                    )
        else:
            calls = [block["id"] for block in blocks if block.get("type") == "tool_use"]
            following = _content(messages[index + 1]) if index + 1 < len(messages) else None
            if calls and following is not None:
                answered = {block.get("tool_use_id") for block in following if block.get("type") == "tool_result"}
                missing = [call for call in calls if call not in answered]
                if missing:
                    return (
                        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                        "corresponding `tool_result` block in the next message."
                    )
    return None


def _signature_problem(messages: list[dict[str, Any]]) -> str | None:
    for index, message in enumerate(messages):
        for number, block in enumerate(_content(message)):
            if block.get("type") == "thinking" and block.get("signature") != sign(block.get("thinking", "")):
                return f"messages.{index}.content.{number}: Invalid `signature` in `thinking` block"
    return None


def _thinking_problem(messages: list[dict[str, Any]]) -> str | None:
    """With thinking on, the assistant message whose tool calls the conversation is
    continuing (the last one, answered by tool results) must start with its thinking."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None:
        return None
    blocks = _content(messages[last])
    continues_tools = any(block.get("type") == "tool_use" for block in blocks) and all(
        message.get("role") == "user" for message in messages[last + 1 :]
    )
    if continues_tools and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
        return (
            f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must "
            "start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` "
            "blocks). We recommend you include thinking blocks from previous turns. To avoid this "
            "requirement, disable `thinking`."
        )
    return None


# -- the prompt as cacheable blocks -------------------------------------------------------


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt in the order the API caches it: tools, system, then message blocks."""
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    blocks = [*(body.get("tools") or []), *system]
    for message in body.get("messages") or []:
        blocks.extend({"role": message.get("role"), **block} for block in _content(message))
    return blocks


def _without_cache_control(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


def _prefix_digests(blocks: list[dict[str, Any]]) -> list[str]:
    """Digest of blocks[: i + 1] for every i, breakpoints left out (they change nothing cached)."""
    running = hashlib.sha256()
    digests = []
    for block in blocks:
        running.update(json.dumps(_without_cache_control(block), sort_keys=True).encode())
        digests.append(running.copy().hexdigest())
    return digests


# -- replies ------------------------------------------------------------------------------


def _content_blocks(reply: Reply) -> list[dict[str, Any]]:
    """The reply's parts as whole content blocks: consecutive Reasoning or Text parts make
    one block; the pieces are kept under "pieces" for streaming."""
    blocks: list[dict[str, Any]] = []
    calls = 0
    for kind, group in groupby(reply.parts, key=type):
        parts: list[Part] = list(group)
        if kind is Reasoning:
            pieces = [part.text for part in parts]  # type: ignore[union-attr]
            blocks.append({"type": "thinking", "pieces": pieces, "signature": sign("".join(pieces))})
        elif kind is Text:
            blocks.append({"type": "text", "pieces": [part.text for part in parts]})  # type: ignore[union-attr]
        else:
            for part in parts:
                assert isinstance(part, ToolCall), "the Anthropic fake streams whole tool calls only"
                call_id = part.id or f"toolu_fake{calls:04d}"
                calls += 1
                pieces = split_text(part.arguments, part.fragments)
                blocks.append({"type": "tool_use", "id": call_id, "name": part.name, "pieces": pieces})
    return blocks


def _stop_reason(reply: Reply, blocks: list[dict[str, Any]]) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"


def _whole(block: dict[str, Any]) -> dict[str, Any]:
    text = "".join(block["pieces"])
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": text, "signature": block["signature"]}
    if block["type"] == "text":
        return {"type": "text", "text": text}
    return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": json.loads(text or "{}")}


def _envelope(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "stop_sequence": None,
    }


def _events(reply: Reply, body: dict[str, Any], usage: dict[str, int]) -> list[bytes]:
    blocks = _content_blocks(reply)
    start_usage = {**usage, "output_tokens": 1}
    message = {**_envelope(body), "content": [], "stop_reason": None, "usage": start_usage}
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    events.append(sse({"type": "ping"}, "ping"))
    for index, block in enumerate(blocks):
        events.append(sse({"type": "content_block_start", "index": index, "content_block": _empty(block)}, "content_block_start"))
        for piece in block["pieces"]:
            events.append(sse({"type": "content_block_delta", "index": index, "delta": _delta(block, piece)}, "content_block_delta"))
        if block["type"] == "thinking":
            delta = {"type": "signature_delta", "signature": block["signature"]}
            events.append(sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = {"stop_reason": _stop_reason(reply, blocks), "stop_sequence": None}
    events.append(sse({"type": "message_delta", "delta": stop, "usage": usage}, "message_delta"))
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


def _empty(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}


def _delta(block: dict[str, Any], piece: str) -> dict[str, Any]:
    if block["type"] == "thinking":
        return {"type": "thinking_delta", "thinking": piece}
    if block["type"] == "text":
        return {"type": "text_delta", "text": piece}
    return {"type": "input_json_delta", "partial_json": piece}


def _message(reply: Reply, body: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
    blocks = _content_blocks(reply)
    return {
        **_envelope(body),
        "content": [_whole(block) for block in blocks],
        "stop_reason": _stop_reason(reply, blocks),
        "usage": usage,
    }
