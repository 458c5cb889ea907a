"""FileVersionCreated on the bus: one per version, in order, only after commit."""

import asyncio

import pytest

from app.bus import Bus, Subscription
from app.store import Database, FileVersionCreated, Store


async def _drain(events: Subscription, count: int) -> list:
    received = [await asyncio.wait_for(events.get(), 1) for _ in range(count)]
    assert events.get_nowait() is None
    return received


async def test_every_version_publishes_in_order(store: Store, bus: Bus) -> None:
    session = store.sessions.create().id
    async with bus.subscribe(FileVersionCreated) as events:
        store.history.create(session, "a.txt", "a\n")
        store.history.create_version(session, "a.txt", "b\n")
        store.history.create(session, "b.txt", "b\n")
        store.history.create_version(session, "a.txt", "", deleted=True)
        received = await _drain(events, 4)
    assert received == [
        FileVersionCreated(session, "a.txt", "initial", False),
        FileVersionCreated(session, "a.txt", "v1", False),
        FileVersionCreated(session, "b.txt", "initial", False),
        FileVersionCreated(session, "a.txt", "v2", True),
    ]
    assert not FileVersionCreated.droppable


async def test_batch_publishes_after_commit(store: Store, bus: Bus, db_path) -> None:
    session = store.sessions.create().id
    other_process = Database(db_path)
    paths = [f"dir/f{n}.txt" for n in range(3)]
    async with bus.subscribe(FileVersionCreated) as events:
        with store.history.batch():
            for path in paths:
                store.history.create(session, path, "x\n")
                store.history.create_version(session, path, "", deleted=True)
            assert events.get_nowait() is None  # nothing announced yet ...
            assert other_process.query_one("SELECT COUNT(*) FROM files")[0] == 0  # ... nor committed
        received = await _drain(events, 6)
    assert other_process.query_one("SELECT COUNT(*) FROM files")[0] == 6
    assert [(e.path, e.version, e.deleted) for e in received] == [
        (path, version, deleted) for path in paths for version, deleted in (("initial", False), ("v1", True))
    ]
    other_process.close()


async def test_a_failed_batch_stores_and_publishes_nothing(store: Store, bus: Bus) -> None:
    session = store.sessions.create().id
    store.history.create(session, "kept.txt", "k\n")
    async with bus.subscribe(FileVersionCreated) as events:
        with pytest.raises(OSError), store.history.batch():
            store.history.create_version(session, "kept.txt", "changed\n")
            store.history.create(session, "new.txt", "n\n")
            raise OSError("disk full while removing files")
        await asyncio.sleep(0)
        assert events.get_nowait() is None
    assert [v.version for v in store.history.versions(session, "kept.txt")] == ["initial"]
    assert store.history.versions(session, "new.txt") == []


async def test_events_from_a_worker_thread_reach_the_loop(store: Store, bus: Bus) -> None:
    session = store.sessions.create().id
    async with bus.subscribe(FileVersionCreated) as events:
        await asyncio.to_thread(store.history.create, session, "t.txt", "t\n")
        [event] = await _drain(events, 1)
    assert event == FileVersionCreated(session, "t.txt", "initial", False)
