"""Prompt-cache breakpoints for the models that take them (Anthropic's, wherever served).

Anthropic caches a prompt prefix only up to a block marked with ``cache_control``, and a
request reads a cached prefix when its own prompt starts with it. Three breakpoints make
every round trip of a tool loop read what the previous one wrote:

- the system prompt, which covers the tools before it (the API caches tools, system,
  then messages, in that order): the prefix shared by every turn of every session;
- the last two messages: the last one writes the whole conversation so far for the next
  request; the one before it is read back when more was added since than the API's
  lookback (20 blocks) reaches.

Anthropic accepts four breakpoints, so one is left for a caller. Pure functions over chat
messages in the OpenAI format litellm takes; litellm carries ``cache_control`` over into
each provider's own request.
"""

from __future__ import annotations

import copy
from typing import Any

from app.llm.models import provider_of

EPHEMERAL = {"type": "ephemeral"}
RECENT_BREAKPOINTS = 2
# Routes that serve Claude under another provider's name and pass cache_control through.
_CLAUDE_ROUTES = frozenset({"bedrock", "bedrock_converse", "vertex_ai", "openrouter"})


def takes_breakpoints(model: str) -> bool:
    """Whether the model's API caches on cache_control breakpoints: Anthropic's own API
    (any model routed as anthropic/..., custom anthropic-compatible providers included)
    and Claude served through Bedrock, Vertex AI or OpenRouter."""
    route = provider_of(model)
    return route == "anthropic" or (route in _CLAUDE_ROUTES and "claude" in model.lower())


def with_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` with breakpoints on the system prompt and the last two
    other messages (the input is not changed: the loop rebuilds it per request)."""
    marked = [dict(message) for message in messages]
    targets = [index for index, message in enumerate(marked) if message.get("role") == "system"][:1]
    others = [index for index, message in enumerate(marked) if message.get("role") != "system"]
    targets += others[-RECENT_BREAKPOINTS:]
    for index in targets:
        marked[index] = _marked(marked[index])
    return marked


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """The message with its last block marked: an assistant turn's last tool call, a
    text's last block; tool results and other assistant turns are marked as a whole,
    which litellm puts on the block the message becomes."""
    content = message.get("content")
    if calls := message.get("tool_calls"):
        return {**message, "tool_calls": [*calls[:-1], {**calls[-1], "cache_control": EPHEMERAL}]}
    if message.get("role") in ("tool", "assistant") or not content:
        return {**message, "cache_control": EPHEMERAL}
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
    blocks = copy.copy(content)
    blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
    return {**message, "content": blocks}
