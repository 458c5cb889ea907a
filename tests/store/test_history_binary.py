"""History keeps the exact bytes of content that is not text, and records many files at
once with the same versions and events as one create() + create_version() per file."""

from __future__ import annotations

import sqlite3

import pytest

from app.store import InvalidRecordError, open_store
from app.store.events import FileVersionCreated
from app.store.migrations import MIGRATIONS
from app.store.models import RecordedChange

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00"


def test_binary_bytes_round_trip_beside_their_placeholder(store) -> None:
    session = store.sessions.create(title="t").id
    store.history.create(session, "img/logo.png", "(binary file, 20 bytes)", data=PNG)
    store.history.create_version(session, "img/logo.png", "", deleted=True)
    initial, deleted = store.history.versions(session, "img/logo.png")
    assert (initial.content, initial.data) == ("(binary file, 20 bytes)", PNG)
    assert (deleted.deleted, deleted.data) == (True, None)
    [change] = store.history.list_latest_session_files(session)
    assert change.initial_data == PNG


def test_text_versions_keep_no_bytes(store) -> None:
    session = store.sessions.create(title="t").id
    version = store.history.create(session, "a.txt", "hi\n")
    assert version.data is None and store.history.versions(session, "a.txt")[0].data is None


async def test_record_changes_writes_initials_once_and_numbers_versions(store, bus) -> None:
    session = store.sessions.create(title="t").id
    store.history.create(session, "old.txt", "0\n")
    store.history.create_version(session, "old.txt", "1\n")
    async with bus.subscribe(FileVersionCreated) as events:
        store.history.record_changes(session, [
            RecordedChange("old.txt", "1\n", "2\n"),
            RecordedChange("new.bin", "", "(binary file, 20 bytes)", after_data=PNG),
            RecordedChange("gone.png", "(binary file, 20 bytes)", "", deleted=True, before_data=PNG),
        ])
        seen = [events.get_nowait() for _ in range(5)]
    assert [v.version for v in store.history.versions(session, "old.txt")] == ["initial", "v1", "v2"]
    assert [(v.version, v.data) for v in store.history.versions(session, "new.bin")] == [("initial", None), ("v1", PNG)]
    gone = store.history.versions(session, "gone.png")
    assert [(v.version, v.deleted, v.data) for v in gone] == [("initial", False, PNG), ("v1", True, None)]
    assert [(e.path, e.version) for e in seen] == [
        ("old.txt", "v2"), ("new.bin", "initial"), ("new.bin", "v1"), ("gone.png", "initial"), ("gone.png", "v1"),
    ]


def test_record_changes_rejects_a_deleted_version_with_content_and_records_nothing(store) -> None:
    session = store.sessions.create(title="t").id
    with pytest.raises(InvalidRecordError, match="empty content"):
        store.history.record_changes(session, [RecordedChange("a.txt", "", "x"), RecordedChange("b", "b", "b", True)])
    assert store.history.versions(session, "a.txt") == []


def test_a_version_1_database_gains_the_data_column(tmp_path, bus) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('s', '', 0, 0)")
    conn.execute("INSERT INTO files (session_id, path, content, version, seq, created_at) "
                 "VALUES ('s', 'a.txt', 'old\n', 'initial', 0, 0)")
    conn.close()
    store = open_store(path, bus)
    try:
        [version] = store.history.versions("s", "a.txt")
        assert (version.content, version.data) == ("old\n", None)
    finally:
        store.close()
