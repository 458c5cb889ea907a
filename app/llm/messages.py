"""The shape of stored message parts, and their conversion to the OpenAI chat format.

The store keeps ``parts`` as opaque JSON; this module owns what they mean (docs/agents.md
lists them for the front-ends that replay a session):

    {"type": "text", "text"}                 user prompt or assistant answer
    {"type": "reasoning", "text"}            the model's thinking; unsigned, never sent back
    {"type": "reasoning", "text", "signature"}   a signed thinking block (Anthropic), sent
                                             back as received, to the model that wrote it
    {"type": "reasoning", "text": "", "redacted"}  a redacted thinking block, likewise
    {"type": "image", "path", "mime", "data"}   an image the user attached (base64 data)
    {"type": "file", "path", "kind", "text"}   a file ("file": its numbered lines as view
                                             shows them) or folder ("folder": its ls tree)
                                             the user's prompt mentioned as @path
    {"type": "context", "source", "text"}    text a hook added for the model (a
                                             UserPromptSubmit hook's context, a Stop
                                             hook's reason to go on); not the user's words
    {"type": "tool_call", "id", "name", "arguments"}   arguments: the JSON text as written
    {"type": "tool_result", "call_id", "name", "output", "metadata", "error"}
    {"type": "finish", "reason"}             stop, tool_calls, length, cancelled, failed...

A tool result whose metadata holds ``"image": {"path", "mime", "data"}`` (view of an
image) is shown to the model as an image after the results.

Roles: ``user`` (text, images), ``assistant`` (reasoning, text, tool calls, finish), ``tool``
(the results of one assistant message's calls, in call order).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from app.core import boundedjson
from app.store import Message

Part = dict[str, Any]

CANCELLED_OUTPUT = "cancelled: the turn was stopped before this call finished"
SUMMARY_PREAMBLE = "The earlier part of this conversation was compacted. Summary of it so far:\n\n"
SUMMARY_CONTINUE = "\n\nContinue from here: finish the user's current request if it is not done."


def text_part(text: str) -> Part:
    return {"type": "text", "text": text}


def signed_reasoning_part(text: str, signature: str = "", redacted: str = "") -> Part:
    """A thinking block as the provider signed it (or its redacted data)."""
    if redacted:
        return {"type": "reasoning", "text": "", "redacted": redacted}
    return {"type": "reasoning", "text": text, "signature": signature}


def tool_call_part(call_id: str, name: str, arguments: str) -> Part:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def tool_result_part(
    call_id: str, name: str, output: str, metadata: dict[str, Any] | None = None, *, error: bool = False
) -> Part:
    return {
        "type": "tool_result",
        "call_id": call_id,
        "name": name,
        "output": output,
        "metadata": metadata or {},
        "error": error,
    }


def finish_part(reason: str) -> Part:
    return {"type": "finish", "reason": reason}


def text_of(parts: Iterable[Part], kind: str = "text") -> str:
    """The concatenated text of the parts of one kind ("text" or "reasoning")."""
    return "".join(part["text"] for part in parts if part.get("type") == kind)


def since_summary(messages: list[Message], summary_message_id: str | None) -> list[Message]:
    """The messages a request sends: from the compaction summary on (all when none)."""
    if summary_message_id is None:
        return messages
    for index, message in enumerate(messages):
        if message.id == summary_message_id:
            return messages[index:]
    return messages


def to_chat(
    messages: list[Message],
    summary_message_id: str | None = None,
    *,
    model: str | None = None,
    vision: bool = False,
) -> list[dict[str, Any]]:
    """Stored messages (from the summary on) as chat messages a provider accepts, for
    ``model``: the signed thinking blocks of the assistant messages that model wrote go
    back with them, exactly as received (Anthropic requires them after a tool call);
    another model's are left out, since no provider accepts a signature it did not make.
    Images go as image parts when ``vision`` (the model takes them), else as a line
    saying one was left out.

    The result is always valid for a provider: every assistant tool call is followed by
    exactly one tool result (a missing one, e.g. after a crash, reads "cancelled"), and
    assistant messages with neither text nor calls (a turn cancelled before any output)
    are left out. Results are paired with the tool message that follows their assistant
    message, so a server that reuses call ids across messages ("call_0") is no problem.
    """
    chat: list[dict[str, Any]] = []
    shown = since_summary(messages, summary_message_id)
    for index, message in enumerate(shown):
        following = shown[index + 1] if index + 1 < len(shown) else None
        chat += chat_of(message, following, summary_message_id, model=model, vision=vision)
    return chat


def chat_of(
    message: Message, following: Message | None, summary_message_id: str | None, *, model: str | None, vision: bool
) -> list[dict[str, Any]]:
    """The chat messages one stored message becomes in ``to_chat``: they depend on it, on
    the message after it (an assistant message's tool results), on the summary's id and
    on ``model`` and ``vision``, nothing else (app.llm.chat_history relies on that)."""
    if message.id == summary_message_id:
        return [{"role": "user", "content": SUMMARY_PREAMBLE + text_of(message.parts) + SUMMARY_CONTINUE}]
    if message.role == "user":
        return [{"role": "user", "content": _user_content(message.parts, vision)}]
    chat: list[dict[str, Any]] = []
    if message.role == "assistant":
        results = following.parts if following is not None and following.role == "tool" else []
        _append_assistant(chat, message.parts, results, model is not None and message.model == model, vision)
    return chat


def _user_content(parts: list[Part], vision: bool) -> str | list[dict[str, Any]]:
    """A prompt as the model reads it: its text, then the files and folders it mentioned,
    then its images, from one walk over its parts."""
    texts: list[str] = []
    attached: list[str] = []
    images: list[Part] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            texts.append(part["text"])
        elif kind == "file":
            attached.append(f'\n\n<attached {part["kind"]}="{part["path"]}">\n{part["text"]}\n</attached>')
        elif kind == "context":
            attached.append(f'\n\n<context source="{part["source"]}">\n{part["text"]}\n</context>')
        elif kind == "image":
            images.append(part)
    return _with_images("".join(texts) + "".join(attached), images, vision)


def _with_images(text: str, images: list[Part], vision: bool) -> str | list[dict[str, Any]]:
    """A user message's content: plain text, or text then image parts."""
    if not images:
        return text
    if not vision:
        left_out = ", ".join(image["path"] for image in images)
        return f"{text}\n[image left out: {left_out}; the current model does not take images]"
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images:
        url = f"data:{image['mime']};base64,{image['data']}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _thinking_block(part: Part) -> dict[str, Any] | None:
    """A signed reasoning part in litellm's thinking_blocks shape; None for an unsigned one."""
    if part.get("redacted"):
        return {"type": "redacted_thinking", "data": part["redacted"]}
    if part.get("signature"):
        return {"type": "thinking", "thinking": part["text"], "signature": part["signature"]}
    return None


def _append_assistant(
    chat: list[dict[str, Any]], parts: list[Part], result_parts: list[Part], own_thinking: bool, vision: bool
) -> None:
    """One assistant message (its signed thinking first, when ``own_thinking``: the model
    that wrote it reads it), then its calls' results in call order, then the images they
    returned. Each list of parts is walked once: this runs for every message of the
    history at every step."""
    texts: list[str] = []
    calls: list[Part] = []
    thinking: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            texts.append(part["text"])
        elif kind == "tool_call":
            calls.append(part)
        elif kind == "reasoning" and own_thinking and (block := _thinking_block(part)) is not None:
            thinking.append(block)
    text = "".join(texts)
    if not text and not calls:
        return
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if thinking:
        message["thinking_blocks"] = thinking
    outputs: dict[str, str] = {}
    images: list[Part] = []
    for part in result_parts:
        if part.get("type") == "tool_result":
            outputs[part["call_id"]] = part["output"]
            image = (part.get("metadata") or {}).get("image")
            if isinstance(image, dict):
                images.append(image)
    if calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": _replayable(call["arguments"])},
            }
            for call in calls
        ]
    chat.append(message)
    chat.extend(
        {"role": "tool", "tool_call_id": call["id"], "content": outputs.get(call["id"], CANCELLED_OUTPUT)}
        for call in calls
    )
    if images and calls:
        intro = "The images the tool calls above returned:"
        chat.append({"role": "user", "content": _with_images(intro, images, vision)})


def _replayable(arguments: str) -> str:
    """Arguments as sent back to the provider: malformed JSON (already answered with an
    error result) is replaced by "{}", because some providers reject a history holding it."""
    try:
        return arguments if isinstance(boundedjson.loads(arguments), dict) else "{}"
    except ValueError:  # JSONDecodeError or JsonLimitError: refused by the tool as well
        return "{}"


def estimate_tokens(payload: object) -> int:
    """A rough token count (4 characters a token) for when no provider has counted yet."""
    return json_chars(payload) // 4


def json_chars(payload: object) -> int:
    """The length of ``payload`` as JSON, as ``estimate_tokens`` counts it."""
    return len(_ESTIMATE_ENCODER.encode(payload))


_ESTIMATE_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
"""``json.dumps(payload, ensure_ascii=False, default=str)``'s encoder, made once: the history
is measured one message at a time, and ``json.dumps`` with options makes one per call."""


def list_json_chars(item_chars: int, count: int) -> int:
    """``json_chars`` of a list of ``count`` items whose own ``json_chars`` add up to
    ``item_chars``, without writing the list: its brackets and a ", " between items."""
    return 2 + item_chars + 2 * max(count - 1, 0)
