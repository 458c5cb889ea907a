"""One assistant message as it streams: its parts grow in memory with every delta and
reach the store when the message is created (first content), at most every ``interval``
seconds after that, and when it is closed, never once per token (a long answer is
thousands of deltas; each store write is a transaction and a MessageUpdated event)."""

from __future__ import annotations

import time

from app.llm.messages import Part, finish_part, text_of
from app.store import MessageStore


class StreamedMessage:
    """One streamed assistant message: parts grow in memory and reach the store when it is
    created (first content), at most every ``interval`` seconds, and when closed."""

    def __init__(self, messages: MessageStore, session_id: str, model: str, interval: float) -> None:
        self._messages = messages
        self._session_id = session_id
        self._model = model
        self._interval = interval
        self._flushed_at = 0.0
        self._id: str | None = None
        self.parts: list[Part] = []

    def ensure(self) -> str:
        """The message id, adding the message to the store on first use."""
        if self._id is None:
            self._id = self._messages.add(self._session_id, "assistant", self.parts, model=self._model).id
            self._flushed_at = time.monotonic()
        return self._id

    def append_text(self, kind: str, text: str) -> None:
        """A streamed delta: merged into the last part when it is of the same kind."""
        if self.parts and self.parts[-1]["type"] == kind:
            self.parts[-1]["text"] += text
        else:
            self.parts.append({"type": kind, "text": text})
        self.ensure()
        if time.monotonic() - self._flushed_at >= self._interval:
            self._write()

    def sign_reasoning(self, blocks: list[Part]) -> None:
        """Replace the streamed reasoning with the whole signed blocks the provider sent at
        the end (same text, plus what it takes to send them back), where it began."""
        first = next((i for i, part in enumerate(self.parts) if part["type"] == "reasoning"), 0)
        others = [part for part in self.parts if part["type"] != "reasoning"]
        self.parts[:] = [*others[:first], *blocks, *others[first:]]
        self.ensure()

    def close(self, reason: str, error: str | None = None) -> str:
        finish = finish_part(reason)
        if error is not None:
            finish["error"] = error
        self.parts.append(finish)
        message_id = self.ensure()
        self._write(finished=True)
        return message_id

    def _write(self, finished: bool = False) -> None:
        self._messages.update(self.ensure(), self.parts, finished=finished)
        self._flushed_at = time.monotonic()

    @property
    def text(self) -> str:
        return text_of(self.parts)
