"""A prompt sent while the session's turn runs steers that turn (docs/acp.md, "Steering").

The prompt that started the turn owns a ``TurnOutcome``; the prompts that steered it wait
for it and answer with the turn's stop reason once their message is in the conversation.
A message the turn ended before reading is in ``undelivered``: its prompt runs it as the
next turn, so nothing typed is lost."""

from __future__ import annotations

from dataclasses import dataclass, field

from acp import RequestError
from acp.schema import PromptResponse


@dataclass
class TurnOutcome:
    """How a prompt's turn ended: its response, or the error it answered with, and the
    steering messages the loop still held (``AgentLoop.take_steering``)."""

    response: PromptResponse | None = None
    error: RequestError | None = None
    undelivered: list[str] = field(default_factory=list)

    @property
    def cancelled(self) -> bool:
        """Cancelled by the editor, or stopped with no answer at all (the connection closed)."""
        return self.error is None and (self.response is None or self.response.stop_reason == "cancelled")

    def delivered(self, text: str) -> bool:
        """Whether the turn read ``text``; one undelivered copy of it is claimed if not."""
        if text in self.undelivered:
            self.undelivered.remove(text)
            return False
        return True

    def answer(self) -> PromptResponse:
        """The answer of a prompt whose message the turn read: the turn's stop reason, or its error."""
        if self.error is not None:
            raise self.error
        return PromptResponse(stop_reason=self.response.stop_reason if self.response else "cancelled")
