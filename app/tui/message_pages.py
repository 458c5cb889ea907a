"""A session's messages as the chat reads them: counted, then a page at a time from the
store, in a thread, so the UI never waits on SQLite nor holds the whole session."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from app.store.messages import MessageStore
    from app.store.models import Message


class SessionEnd(NamedTuple):
    """The session's end as read together with its count: the messages from ``start``
    to the last of the ``total``."""

    total: int
    start: int
    messages: list[Message]


class MessagePages:
    """``session_id``'s live messages (those of undone turns left out), by position.

    ``end``: the session's end, already read in the thread that opened the store: the
    count and the pages within it are answered from it, with no trip to a thread, so the
    chat draws the last turn as soon as it has it. Nothing else writes the session while
    it is read that way (before the runtime exists); a session changed by another process
    meanwhile shows as it was when read."""

    def __init__(self, messages: MessageStore, session_id: str, *, end: SessionEnd | None = None) -> None:
        self._messages = messages
        self.session_id = session_id
        self._end = end

    async def count(self) -> int:
        if self._end is not None:
            return self._end.total
        return await asyncio.to_thread(self._messages.count, self.session_id)

    async def page(self, start: int, stop: int) -> list[Message]:
        """The messages at positions ``start`` to ``stop`` (excluded)."""
        end = self._end
        if end is not None and end.start <= max(start, 0) and stop <= end.total:
            return end.messages[max(start, 0) - end.start: stop - end.start]
        return await asyncio.to_thread(self._messages.page, self.session_id, start, stop)

    async def find(self, text: str) -> list[int]:
        """The positions of the messages whose text holds ``text`` (case ignored)."""
        return await asyncio.to_thread(self._messages.find, self.session_id, text)
