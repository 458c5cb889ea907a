"""Messages: JSON parts round-trip, order, finishing, validation, events."""

import asyncio

import pytest

from app.bus import Bus
from app.store import (
    InvalidRecordError,
    MessageCreated,
    MessageUpdated,
    RecordNotFoundError,
    Store,
    open_store,
)

PARTS = [
    {"type": "text", "text": "Déjà vu — naïve “quotes” 🚀\nline two"},
    {"type": "tool_call", "id": "call_1", "name": "edit", "input": {"path": "a.py", "count": 3, "ok": True}},
    {"type": "tool_result", "id": "call_1", "output": None, "lines": [1, 2.5, "x"]},
]


def test_parts_round_trip_through_the_file(store: Store, db_path, bus: Bus) -> None:
    session = store.sessions.create()
    added = store.messages.add(session.id, "assistant", PARTS, model="anthropic/claude")
    assert added.parts == PARTS
    assert (added.role, added.model, added.finished_at) == ("assistant", "anthropic/claude", None)
    store.close()
    reopened = open_store(db_path, bus)
    assert reopened.messages.get(added.id) == added
    reopened.close()


def test_list_keeps_insertion_order_within_one_session(store: Store) -> None:
    session = store.sessions.create()
    other = store.sessions.create()
    roles = ["system", "user", "assistant", "tool", "assistant", "user"]
    added = [store.messages.add(session.id, role, [{"n": n}]) for n, role in enumerate(roles)]
    store.messages.add(other.id, "user", [{"n": "other"}])
    assert store.messages.list(session.id) == added
    assert [m.parts[0]["n"] for m in store.messages.list(session.id)] == list(range(len(roles)))


def test_update_replaces_parts_and_stamps_finished_once(store: Store) -> None:
    session = store.sessions.create()
    message = store.messages.add(session.id, "assistant", [])
    streaming = store.messages.update(message.id, [{"type": "text", "text": "Hel"}])
    assert streaming.finished_at is None
    done = store.messages.update(message.id, [{"type": "text", "text": "Hello"}], finished=True)
    assert done.finished_at is not None and done.parts == [{"type": "text", "text": "Hello"}]
    again = store.messages.update(message.id, [{"type": "text", "text": "Hello!"}])
    assert again.finished_at == done.finished_at
    assert store.messages.get(message.id) == again


@pytest.mark.parametrize(
    ("role", "parts", "message"),
    [
        ("robot", [], "role 'robot' is not one of user, assistant, tool, system"),
        ("user", {"type": "text"}, "must be a list of dicts, not dict"),
        ("user", ["text"], "must be a list of dicts, not list"),
        ("user", [{"when": object()}], "must be JSON-compatible"),
        ("user", [{"x": float("nan")}], "must be JSON-compatible"),
    ],
)
def test_bad_messages_are_refused_and_not_stored(store: Store, role: str, parts: object, message: str) -> None:
    session = store.sessions.create()
    with pytest.raises(InvalidRecordError, match=message):
        store.messages.add(session.id, role, parts)  # type: ignore[arg-type]
    assert store.messages.list(session.id) == []


def test_missing_session_or_message_is_named(store: Store) -> None:
    with pytest.raises(RecordNotFoundError, match="session 'ghost' does not exist"):
        store.messages.add("ghost", "user", [])
    with pytest.raises(RecordNotFoundError, match="message 'ghost' does not exist"):
        store.messages.update("ghost", [])
    assert store.messages.get("ghost") is None


async def test_message_events_carry_the_stored_message(store: Store, bus: Bus) -> None:
    session = store.sessions.create()
    async with bus.subscribe(MessageCreated, MessageUpdated) as events:
        added = store.messages.add(session.id, "user", [{"type": "text", "text": "hi"}])
        finished = store.messages.update(added.id, [{"type": "text", "text": "hi!"}], finished=True)
        received = [await asyncio.wait_for(events.get(), 1) for _ in range(2)]
    assert received == [MessageCreated(added), MessageUpdated(finished)]
    assert not MessageUpdated.droppable
