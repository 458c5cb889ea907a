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


def test_pages_count_find_and_prompts_read_only_the_live_messages_by_position(store: Store) -> None:
    session = store.sessions.create()
    other = store.sessions.create()
    texts = ["Start with ZANZIBAR", "a reply", 'quote "this" 50% _x_', "Été sous la pluie", "undone one"]
    added = [store.messages.add(session.id, "user" if n % 2 == 0 else "assistant", [{"type": "text", "text": text}])
             for n, text in enumerate(texts)]
    store.messages.add(session.id, "assistant", [{"type": "reasoning", "text": "thinking of zanzibar"}])
    store.messages.add(other.id, "user", [{"type": "text", "text": "zanzibar elsewhere"}])
    store.messages.set_undone([added[4].id], True)
    # positions: 0..3 the first four texts, 4 the reasoning (the undone message is left out)
    assert store.messages.count(session.id) == 5
    assert [m.id for m in store.messages.page(session.id, 1, 3)] == [added[1].id, added[2].id]
    assert store.messages.page(session.id, 4, 99)[0].parts[0]["type"] == "reasoning"
    assert store.messages.page(session.id, 3, 3) == []
    assert store.messages.find(session.id, "zanzibar") == [0, 4]
    assert store.messages.find(session.id, '"THIS" 50% _x') == [2]
    assert store.messages.find(session.id, "ÉTÉ") == [3]
    assert store.messages.find(session.id, "text") == []  # a key of the stored JSON, not a word shown
    assert store.messages.find(session.id, "undone") == []
    assert store.messages.prompts(session.id) == ["Start with ZANZIBAR", 'quote "this" 50% _x_']


def test_find_looks_in_tool_output_but_not_in_the_calls_names_or_ids(store: Store) -> None:
    session = store.sessions.create()
    call = {"type": "tool_call", "id": "call-grep", "name": "grep", "arguments": '{"pattern": "x"}'}
    store.messages.add(session.id, "assistant", [{"type": "text", "text": "Searching."}, call])
    result = {"type": "tool_result", "call_id": "call-grep", "name": "grep", "output": "src/Loader.py:3: class Zanzibar"}
    store.messages.add(session.id, "tool", [result])
    assert store.messages.find(session.id, "zanzibar") == [1]
    assert store.messages.find(session.id, "call-grep") == []
