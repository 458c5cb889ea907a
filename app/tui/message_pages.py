"""A session's messages as the chat reads them: counted, then a page at a time from the
store, in a thread, so the UI never waits on SQLite nor holds the whole session."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.store.messages import MessageStore
    from app.store.models import Message


class MessagePages:
    """``session_id``'s live messages (those of undone turns left out), by position."""

    def __init__(self, messages: MessageStore, session_id: str) -> None:
        self._messages = messages
        self.session_id = session_id

    async def count(self) -> int:
        return await asyncio.to_thread(self._messages.count, self.session_id)

    async def page(self, start: int, stop: int) -> list[Message]:
        """The messages at positions ``start`` to ``stop`` (excluded)."""
        return await asyncio.to_thread(self._messages.page, self.session_id, start, stop)

    async def find(self, text: str) -> list[int]:
        """The positions of the messages whose text holds ``text`` (case ignored)."""
        return await asyncio.to_thread(self._messages.find, self.session_id, text)
