"""Auto-compaction: when a session's history nearly fills the model's window, the
summarizer agent condenses it into one message in the same session, and later requests
send only that summary and what follows it (sessions.summary_message_id).

The loop compacts at most once per turn: a history still too large after that fails the
turn with CompactionError instead of summarising summaries forever.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import OpencodeError

THRESHOLD = 0.9
"""Compact when the context passes this share of the model's window."""
SUMMARY_INSTRUCTION = (
    "Summarize the conversation above for the assistant that will continue it, "
    "following your instructions. Reply with the summary only."
)


class CompactionError(OpencodeError):
    """The history could not be brought under the model's window."""


def needs_compaction(tokens: int, window: int) -> bool:
    return tokens > THRESHOLD * window


def summary_request(system: str, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summarizer's request: its prompt, the history as the model saw it, and the
    instruction as the last user message (a scripted model can match it)."""
    return [{"role": "system", "content": system}, *history, {"role": "user", "content": SUMMARY_INSTRUCTION}]
