"""The loop's view of each session's messages: the store's rows, read once, then kept
current from the store's own MessageCreated / MessageUpdated events, so a step does not
re-read and re-decode the whole session from SQLite (in a long session, most of a
step's cost).

Following the bus rather than the loop's own writes keeps every reader in the process
exact, whoever wrote: two AgentLoops on one runtime (the TUI keeps one per provider)
see each other's messages. Another process writing the same session is not seen until
the session drops out of the cache; opencode runs one writer per session at a time.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from app.bus import Bus, Subscription
from app.store import Message, MessageCreated, MessageStore, MessageUpdated, SessionDeleted

CACHED_SESSIONS = 16
"""Sessions kept in memory (most recently used); older ones are read again when needed."""


class Transcripts:
    def __init__(self, messages: MessageStore, bus: Bus, capacity: int = CACHED_SESSIONS) -> None:
        self._messages = messages
        self._bus = bus
        self._capacity = capacity
        self._sessions: OrderedDict[str, dict[str, Message]] = OrderedDict()
        """session id -> {message id: message}, in the order the messages were added."""
        self._events: Subscription | None = None
        self._reshaped: dict[str, int] = {}
        """session id -> how many times messages left it or came back (undo, redo, rewind)."""

    def list(self, session_id: str) -> list[Message]:
        """The session's messages in order, as stored, less those of undone turns. Call
        from the event loop."""
        self._catch_up()
        cached = self._sessions.get(session_id)
        if cached is None:
            cached = self._sessions[session_id] = {m.id: m for m in self._messages.list(session_id)}
            while len(self._sessions) > self._capacity:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(session_id)
        return list(cached.values())

    async def load(self, session_id: str) -> None:
        """Read the session from the store in a worker thread, unless it is cached: the
        first step of a turn in a long session then does not hold the event loop (the
        screen, the keys) while thousands of rows are read and decoded. Events that come
        while it reads are applied once the read is in, as ``list`` would: a message it
        read is replaced by the same one, a newer one follows the rest."""
        self._catch_up()  # subscribed before the read, so nothing written meanwhile is missed
        if session_id in self._sessions:
            return
        read = await asyncio.to_thread(self._messages.list, session_id)
        if session_id not in self._sessions:
            self._sessions[session_id] = {m.id: m for m in read}
            while len(self._sessions) > self._capacity:
                self._sessions.popitem(last=False)
        self._catch_up()

    def reshaped(self, session_id: str) -> int:
        """How many times messages of the session were taken out or put back since this
        started: a count of the conversation's size made before a change no longer holds."""
        self._catch_up()
        return self._reshaped.get(session_id, 0)

    def close(self) -> None:
        if self._events is not None:
            self._events.close()

    def _catch_up(self) -> None:
        """Apply the store's events since the last call. The subscription starts with the
        first read (it needs a running event loop), before any session is cached."""
        if self._events is None:
            self._events = self._bus.subscribe(MessageCreated, MessageUpdated, SessionDeleted)
        for event in self._events.drain():
            if isinstance(event, SessionDeleted):
                self._sessions.pop(event.session_id, None)
                continue
            if not isinstance(event, (MessageCreated, MessageUpdated)):
                continue
            message = event.message
            cached = self._sessions.get(message.session_id)
            # An undo takes a message out; an update of one not listed is a redo putting it back.
            out_or_back = message.undone or (isinstance(event, MessageUpdated) and message.id not in (cached or {}))
            if out_or_back:
                self._reshaped[message.session_id] = self._reshaped.get(message.session_id, 0) + 1
            if cached is None:
                continue
            if out_or_back:
                # An undo takes messages out and a redo puts them back in their places:
                # the session is read again, in order, when next needed.
                del self._sessions[message.session_id]
            else:  # a created message is appended; an updated one keeps its place
                cached[message.id] = message
