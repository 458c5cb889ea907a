"""How big the next request is, by part (docs/context.md): what the status bar shows,
what ``/context`` lists, and what the compaction decision reads, from one measure.

Each part is estimated from the JSON sent (``estimate_tokens``: 4 characters a token):
the system prompt (the agent's prompt and where it works), the instructions files in it,
the built-in tools' and the MCP tools' definitions, and the messages. When a provider
has counted (the last response's prompt and completion tokens, plus the estimate of what
was added since), its count is the total, and the parts are that count shared in the
proportions of their estimates, so they still add up to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.llm.context import instructions_of
from app.llm.messages import estimate_tokens

PARTS = ("System prompt", "Tools", "MCP tools", "Instructions files", "Messages")


@dataclass(frozen=True)
class ContextSize:
    parts: tuple[tuple[str, int], ...]
    """(name, tokens) in ``PARTS`` order; they add up to ``total``."""
    total: int
    window: int
    """The model's context window (0: not known)."""
    counted: bool
    """Whether ``total`` comes from the provider's count rather than the estimate."""

    def lines(self) -> str:
        """``/context``: the parts, the total, and where the total comes from."""
        width = max(len(name) for name in PARTS)
        rows = [f"{name:<{width}}  {tokens:>9,}" for name, tokens in self.parts]
        share = f" of {self.window:,} ({round(100 * self.total / self.window)}%)" if self.window else ""
        source = "the provider's count of the last response, plus what was added since" if self.counted else "estimated"
        return "\n".join(
            [f"Context of the next request: {self.total:,} tokens{share}", *rows, f"{'Total':<{width}}  {self.total:>9,}  ({source})"]
        )


def measure(
    messages: list[dict[str, Any]], specs: list[dict[str, Any]], mcp_tools: set[str], *, counted: int, window: int,
    history_tokens: int | None = None,
) -> ContextSize:
    """The size of a request of ``messages`` (the system message first) offering the
    tools ``specs``, of which those named in ``mcp_tools`` come from MCP servers;
    ``counted`` is the provider's count for it (0: none, the estimate stands).
    ``history_tokens``: the estimate of the messages after the system message, when the
    caller keeps it (app.llm.chat_history), so a long history is not written out again."""
    system = str(messages[0]["content"]) if messages else ""
    instructions = estimate_tokens(instructions_of(system))
    mcp = [spec for spec in specs if spec["function"]["name"] in mcp_tools]
    own = [spec for spec in specs if spec["function"]["name"] not in mcp_tools]
    estimates = [
        max(estimate_tokens(messages[:1]) - instructions, 0),
        estimate_tokens(own) if own else 0,
        estimate_tokens(mcp) if mcp else 0,
        instructions,
        _history_estimate(messages) if history_tokens is None else history_tokens,
    ]
    estimated = sum(estimates)
    total = counted or estimated
    shares = _shared(estimates, total) if counted and estimated else estimates
    return ContextSize(tuple(zip(PARTS, shares, strict=True)), total, window, bool(counted))


def _history_estimate(messages: list[dict[str, Any]]) -> int:
    return estimate_tokens(messages[1:]) if len(messages) > 1 else 0


def _shared(estimates: list[int], total: int) -> list[int]:
    """``total`` split in the proportions of ``estimates``; the messages take what
    rounding down leaves, so the parts add up to it exactly."""
    whole = sum(estimates)
    shares = [part * total // whole for part in estimates[:-1]]
    return [*shares, total - sum(shares)]
