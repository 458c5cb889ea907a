"""Sessions: CRUD, parent/children, cascade delete, usage totals, events."""

import asyncio
import itertools

import pytest

from app.bus import Bus, Event
from app.store import (
    InvalidRecordError,
    RecordNotFoundError,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
    Store,
    open_store,
)
from app.store.sessions import SessionStore


def test_create_then_get_round_trips(store: Store) -> None:
    created = store.sessions.create("Fix the parser", model="anthropic/claude")
    assert store.sessions.get(created.id) == created
    assert (created.title, created.model, created.parent_id) == ("Fix the parser", "anthropic/claude", None)
    assert (created.prompt_tokens, created.completion_tokens, created.cost) == (0, 0, 0.0)
    assert store.sessions.get("no-such-id") is None


def test_sessions_survive_reopening(store: Store, db_path, bus: Bus) -> None:
    created = store.sessions.create("kept")
    store.close()
    reopened = open_store(db_path, bus)
    assert reopened.sessions.get(created.id) == created
    reopened.close()


def test_list_is_newest_first_and_top_level_only(store: Store) -> None:
    first = store.sessions.create("first")
    second = store.sessions.create("second")
    store.sessions.create("sub-agent", parent_id=first.id)
    assert [s.title for s in store.sessions.list()] == ["second", "first"]
    assert store.sessions.list()[0] == second


def test_children_are_listed_oldest_first(store: Store) -> None:
    parent = store.sessions.create("parent")
    kids = [store.sessions.create(f"kid {n}", parent_id=parent.id) for n in range(3)]
    store.sessions.create("unrelated")
    assert store.sessions.children(parent.id) == kids
    assert store.sessions.children(kids[0].id) == []


def test_child_of_a_missing_parent_is_refused(store: Store) -> None:
    with pytest.raises(RecordNotFoundError, match="session 'ghost' does not exist"):
        store.sessions.create("orphan", parent_id="ghost")
    assert store.sessions.list() == []


def test_update_sets_fields_and_bumps_updated_at(store: Store) -> None:
    session = store.sessions.create("old")
    updated = store.sessions.update(session.id, title="new", model="openai/gpt", cost=1.5)
    assert (updated.title, updated.model, updated.cost) == ("new", "openai/gpt", 1.5)
    assert updated.updated_at >= session.updated_at
    assert store.sessions.get(session.id) == updated


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"colour": "red"}, "no updatable field 'colour'"),
        ({"title": None}, "'title' must be str, not NoneType"),
        ({"prompt_tokens": "12"}, "'prompt_tokens' must be int, not str"),
        ({"summary_message_id": "nope"}, "is not a message of session"),
    ],
)
def test_update_refuses_bad_fields_and_changes_nothing(store: Store, fields: dict, message: str) -> None:
    session = store.sessions.create("same")
    with pytest.raises(InvalidRecordError, match=message):
        store.sessions.update(session.id, **fields)
    assert store.sessions.get(session.id) == session


def test_summary_message_must_belong_to_the_session(store: Store) -> None:
    session = store.sessions.create()
    other = store.sessions.create()
    own = store.messages.add(session.id, "assistant", [{"type": "text", "text": "summary"}])
    foreign = store.messages.add(other.id, "assistant", [])
    assert store.sessions.update(session.id, summary_message_id=own.id).summary_message_id == own.id
    with pytest.raises(InvalidRecordError):
        store.sessions.update(session.id, summary_message_id=foreign.id)


def test_update_and_delete_of_a_missing_session_say_so(store: Store) -> None:
    with pytest.raises(RecordNotFoundError, match="'ghost' does not exist"):
        store.sessions.update("ghost", title="x")
    with pytest.raises(RecordNotFoundError, match="'ghost' does not exist"):
        store.sessions.delete("ghost")
    with pytest.raises(RecordNotFoundError):
        store.sessions.add_usage("ghost", 1, 1, 0.1)


def test_add_usage_accumulates(store: Store) -> None:
    session = store.sessions.create()
    store.sessions.add_usage(session.id, 100, 20, 0.25)
    totals = store.sessions.add_usage(session.id, 50, 5, 0.5)
    assert (totals.prompt_tokens, totals.completion_tokens, totals.cost) == (150, 25, 0.75)
    with pytest.raises(InvalidRecordError, match="must not be negative"):
        store.sessions.add_usage(session.id, -1, 0, 0)


def test_latest_is_the_most_recently_updated_top_level_session(store: Store, bus: Bus) -> None:
    ticks = itertools.count(1_000_000)  # each stamp a millisecond after the one before
    sessions = SessionStore(store.db, bus, clock=lambda: next(ticks))
    assert sessions.latest() is None
    older = sessions.create("older")
    newer = sessions.create("newer")
    assert sessions.latest() == newer
    sessions.create("child", parent_id=older.id)
    resumed = sessions.update(older.id, title="resumed")
    assert sessions.latest() == resumed


def test_delete_cascades_to_children_messages_and_files(store: Store) -> None:
    parent = store.sessions.create("parent")
    child = store.sessions.create("child", parent_id=parent.id)
    grandchild = store.sessions.create("grandchild", parent_id=child.id)
    survivor = store.sessions.create("survivor")
    for session in (parent, grandchild, survivor):
        store.messages.add(session.id, "user", [{"type": "text", "text": "hi"}])
        store.history.create(session.id, "a.txt", "a\n")
        store.history.create_version(session.id, "a.txt", "b\n")
    store.sessions.update(parent.id, summary_message_id=store.messages.list(parent.id)[0].id)

    store.sessions.delete(parent.id)

    assert [store.sessions.get(s.id) for s in (parent, child, grandchild)] == [None, None, None]
    assert store.db.query_one("SELECT COUNT(*) FROM messages")[0] == 1
    assert store.db.query_one("SELECT COUNT(*) FROM files")[0] == 2
    assert len(store.history.versions(survivor.id, "a.txt")) == 2
    assert store.sessions.list() == [survivor]


async def _drain(subscription, count: int) -> list[Event]:
    return [await asyncio.wait_for(subscription.get(), 1) for _ in range(count)]


async def test_session_events_are_published(store: Store, bus: Bus) -> None:
    async with bus.subscribe(SessionCreated, SessionUpdated, SessionDeleted) as events:
        parent = store.sessions.create("p")
        child = store.sessions.create("c", parent_id=parent.id)
        renamed = store.sessions.update(parent.id, title="renamed")
        store.sessions.delete(parent.id)
        received = await _drain(events, 5)
        assert events.get_nowait() is None
    assert received == [
        SessionCreated(parent),
        SessionCreated(child),
        SessionUpdated(renamed),
        SessionDeleted(parent.id),
        SessionDeleted(child.id),
    ]


async def test_failed_update_publishes_nothing(store: Store, bus: Bus) -> None:
    session = store.sessions.create()
    async with bus.subscribe() as events:
        with pytest.raises(InvalidRecordError):
            store.sessions.update(session.id, summary_message_id="missing")
        assert events.get_nowait() is None


def test_tool_sessions_are_left_out_of_lists_and_latest_unless_asked_for(store: Store) -> None:
    conversation = store.sessions.create("a conversation")
    tool_run = store.sessions.create("opencode tool view", kind="tool")
    assert (conversation.kind, tool_run.kind) == ("chat", "tool")
    assert store.sessions.list() == [conversation]
    assert store.sessions.latest() == conversation
    assert store.sessions.list(include_tool=True) == [tool_run, conversation]
    assert store.sessions.latest(include_tool=True) == tool_run
    with pytest.raises(InvalidRecordError, match="unknown session kind 'robot': use chat or tool"):
        store.sessions.create(kind="robot")
    assert store.sessions.update(tool_run.id, kind="chat").kind == "chat"


def test_sessions_of_an_older_database_are_conversations(db_path, bus: Bus) -> None:
    import sqlite3

    from app.store.migrations import MIGRATIONS, migrate

    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, MIGRATIONS[:3])  # the schema before session kinds
    conn.execute("INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'from before', 1, 1)")
    conn.close()
    store = open_store(db_path, bus)
    try:
        assert [(s.id, s.kind) for s in store.sessions.list()] == [("old", "chat")]
    finally:
        store.close()
