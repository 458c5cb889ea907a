"""The loop's cached view of a session: read once (from a worker thread when a turn
starts), then kept current from the store's events, whoever writes."""

from __future__ import annotations

import asyncio
import threading

from app.llm.transcript import Transcripts
from app.runtime import Runtime
from app.store import Message, MessageStore
from tests.waiting import eventually


class ReadThenWait(MessageStore):
    """The real store, whose reads of whole sessions wait at a gate once they have read
    (a write can then land between the read and its use), and say which thread read."""

    def __init__(self, store: MessageStore) -> None:
        self.store = store
        self.read = threading.Event()
        self.gate = threading.Event()
        self.reader: int | None = None

    def list(self, session_id: str, *, include_undone: bool = False) -> list[Message]:
        messages = self.store.list(session_id, include_undone=include_undone)
        self.reader = threading.get_ident()
        self.read.set()
        self.gate.wait(timeout=60)
        return messages


def text_of(message: Message) -> str:
    return message.parts[0]["text"]


async def test_a_session_is_read_off_the_event_loop_and_misses_nothing_written_meanwhile(runtime: Runtime):
    store = runtime.store.messages
    session_id = runtime.store.sessions.create(title="long").id
    for n in range(3):
        store.add(session_id, "user", [{"type": "text", "text": f"old {n}"}])
    gated = ReadThenWait(store)
    transcripts = Transcripts(gated, runtime.bus)
    loading = asyncio.create_task(transcripts.load(session_id))
    await eventually(gated.read.is_set, 60, "the read in its thread", pause=lambda: asyncio.sleep(0.01))
    assert gated.reader != threading.get_ident()
    old = store.list(session_id)[0]
    store.update(old.id, [{"type": "text", "text": "old 0, edited"}])
    store.add(session_id, "assistant", [{"type": "text", "text": "written while it read"}])
    gated.gate.set()
    await loading
    assert [text_of(message) for message in transcripts.list(session_id)] == [
        "old 0, edited", "old 1", "old 2", "written while it read",
    ]


async def test_a_cached_session_is_not_read_again(runtime: Runtime):
    store = runtime.store.messages
    session_id = runtime.store.sessions.create(title="cached").id
    store.add(session_id, "user", [{"type": "text", "text": "hello"}])
    gated = ReadThenWait(store)
    gated.gate.set()
    transcripts = Transcripts(gated, runtime.bus)
    await transcripts.load(session_id)
    gated.read.clear()
    store.add(session_id, "assistant", [{"type": "text", "text": "hi"}])
    await transcripts.load(session_id)
    assert not gated.read.is_set()
    assert [text_of(message) for message in transcripts.list(session_id)] == ["hello", "hi"]
