"""Events the agent loop publishes on the bus: the contract between the loop and every
front-end (TUI, ACP, headless CLI). Deltas are droppable for slow subscribers; the
stored message (``MessageUpdated`` from the store) always carries the full state, and
turn endings are never dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.bus import Event


@dataclass(frozen=True, slots=True)
class TurnStarted(Event):
    session_id: str
    agent: str
    model: str


@dataclass(frozen=True, slots=True)
class MentionRefused(Event):
    """``@path`` in the prompt was not attached; ``line`` says why, for the user."""

    session_id: str
    path: str
    line: str


@dataclass(frozen=True, slots=True)
class SubagentStarted(Event):
    """A ``task`` call of ``session_id`` started ``agent`` in the child session
    ``child_session_id``; the child's own events carry the child's id, so a front-end
    links them to the parent's tool call ``call_id`` through this event."""

    session_id: str
    call_id: str | None
    child_session_id: str
    agent: str
    description: str


@dataclass(frozen=True, slots=True)
class MessageDelta(Event):
    """A piece of the assistant message ``message_id`` as it streams: droppable, as the
    stored message carries it whole."""

    session_id: str
    message_id: str
    text: str
    droppable: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class TextDelta(MessageDelta):
    """A piece of the answer."""


@dataclass(frozen=True, slots=True)
class ReasoningDelta(MessageDelta):
    """A piece of the model's reasoning."""


@dataclass(frozen=True, slots=True)
class ToolCallStarted(Event):
    session_id: str
    message_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallFinished(Event):
    session_id: str
    message_id: str
    call_id: str
    tool: str
    output: str
    metadata: dict[str, Any] = field(default_factory=dict)
    error: bool = False


@dataclass(frozen=True, slots=True)
class UsageUpdated(Event):
    session_id: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    context_window: int
    cache_read_tokens: int = 0
    """Of prompt_tokens, read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of prompt_tokens, written to the provider's prompt cache."""


@dataclass(frozen=True, slots=True)
class TurnFinished(Event):
    """The model stopped on its own; ``reason`` is the last finish reason (stop, length...)
    or ``max_steps`` when the step limit ended the turn."""

    session_id: str
    response: str
    reason: str


@dataclass(frozen=True, slots=True)
class TurnFailed(Event):
    session_id: str
    error: str


@dataclass(frozen=True, slots=True)
class TurnCancelled(Event):
    session_id: str


@dataclass(frozen=True, slots=True)
class ModelRetrying(Event):
    """The model call failed before any output (rate limit, timeout, 5xx) and is sent
    again after ``delay`` seconds, so a front-end can say why nothing streams yet."""

    session_id: str
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class SessionCompacted(Event):
    """The history was condensed into ``summary_message_id``; later requests send only
    the summary and the messages after it."""

    session_id: str
    summary_message_id: str


TURN_PROGRESS: tuple[type[Event], ...] = (
    TextDelta, ReasoningDelta, ToolCallStarted, ToolCallFinished, SubagentStarted, UsageUpdated, ModelRetrying,
    MentionRefused,
)
"""What every front-end that follows a turn shows of it as it runs: its text and reasoning,
its tool calls and sub-agents, its usage, a retried model call, a mention not attached."""
