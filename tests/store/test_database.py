"""The database file itself: migrations, pragmas, transactions, errors, threads."""

import sqlite3
import threading
from pathlib import Path

import pytest

from app.store import Database, StoreError
from app.store.migrations import MIGRATIONS, migrate, schema_version


def test_fresh_database_is_created_with_parent_dirs_and_migrated(db_path: Path) -> None:
    db = Database(db_path)
    assert db_path.is_file()
    assert db.schema_version == len(MIGRATIONS)
    tables = {row["name"] for row in db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "messages", "files"} <= tables
    db.close()


def test_wal_foreign_keys_and_busy_timeout_are_on(db_path: Path) -> None:
    db = Database(db_path)
    assert db.query_one("PRAGMA journal_mode")[0] == "wal"
    assert db.query_one("PRAGMA foreign_keys")[0] == 1
    assert db.query_one("PRAGMA busy_timeout")[0] > 0
    db.close()


def test_reopen_keeps_data_and_does_not_migrate_again(db_path: Path) -> None:
    db = Database(db_path)
    with db.transaction():
        db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('s1', 1, 1)")
    db.close()
    reopened = Database(db_path)
    assert reopened.schema_version == len(MIGRATIONS)
    assert reopened.query_one("SELECT id FROM sessions")["id"] == "s1"
    reopened.close()


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_only_new_steps_run_on_an_older_database(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "m.db")
    first = ("CREATE TABLE a (x INTEGER)",)
    second = ("CREATE TABLE b (y INTEGER)", "INSERT INTO a VALUES (1)")
    assert migrate(conn, [first]) == 1
    assert migrate(conn, [first, second]) == 2  # would fail if step 1 ran again
    assert migrate(conn, [first, second]) == 2
    assert conn.execute("SELECT COUNT(*) FROM a").fetchone()[0] == 1
    assert schema_version(conn) == 2


def test_a_failing_step_leaves_the_database_untouched(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "m.db")
    good = ("CREATE TABLE a (x INTEGER)",)
    bad = ("CREATE TABLE b (y INTEGER)", "INSERT INTO missing VALUES (1)")
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, [good, bad])
    assert schema_version(conn) == 0
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == []


def test_an_unwritable_location_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open the database"):
        Database(blocker / "sub" / "opencode.db")


def test_a_write_lock_held_too_long_by_another_process_is_reported(db_path: Path) -> None:
    db = Database(db_path, busy_timeout_ms=50)
    other_process = _connect(db_path)
    other_process.execute("BEGIN IMMEDIATE")
    locked = r"cannot write to .*opencode\.db: database is locked; .*retry"
    with pytest.raises(StoreError, match=locked), db.transaction():
        _insert(db, "blocked")
    other_process.execute("ROLLBACK")
    with db.transaction():  # usable again once the other writer is done
        _insert(db, "after")
    assert _count(db) == 1
    other_process.close()
    db.close()


def _count(db: Database) -> int:
    return db.query_one("SELECT COUNT(*) FROM sessions")[0]


def _insert(db: Database, session_id: str) -> None:
    db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)", (session_id,))


def test_transaction_rolls_back_everything_on_error(db_path: Path) -> None:
    db = Database(db_path)
    with pytest.raises(RuntimeError), db.transaction():
        _insert(db, "a")
        raise RuntimeError("boom")
    assert _count(db) == 0
    db.close()


def test_nested_transaction_commits_only_with_the_outermost(db_path: Path) -> None:
    db = Database(db_path)
    other = Database(db_path)
    with db.transaction():
        with db.transaction():
            _insert(db, "a")
        assert _count(other) == 0  # inner block ended, nothing committed yet
    assert _count(other) == 1
    db.close()
    other.close()


def test_failed_inner_block_is_undone_alone(db_path: Path) -> None:
    db = Database(db_path)
    with db.transaction():
        _insert(db, "kept")
        with pytest.raises(RuntimeError), db.transaction():
            _insert(db, "undone")
            raise RuntimeError("inner")
    assert [row["id"] for row in db.query("SELECT id FROM sessions")] == ["kept"]
    db.close()


def test_on_commit_callbacks_run_after_commit_and_are_dropped_on_rollback(db_path: Path) -> None:
    db = Database(db_path)
    other = Database(db_path)
    seen: list[tuple[str, int]] = []
    with db.transaction():
        _insert(db, "a")
        db.on_commit(lambda: seen.append(("outer", _count(other))))
        with pytest.raises(RuntimeError), db.transaction():
            db.on_commit(lambda: seen.append(("rolled back", 0)))
            raise RuntimeError("inner")
        assert seen == []
    assert seen == [("outer", 1)]  # the other connection already saw the row
    with pytest.raises(RuntimeError), db.transaction():
        db.on_commit(lambda: seen.append(("never", 0)))
        raise RuntimeError("outer")
    db.on_commit(lambda: seen.append(("no transaction", 0)))
    assert seen == [("outer", 1), ("no transaction", 0)]
    db.close()
    other.close()


def test_two_threads_share_one_database(db_path: Path) -> None:
    db = Database(db_path)
    errors: list[BaseException] = []

    def writer(prefix: str) -> None:
        try:
            for n in range(200):
                with db.transaction():
                    before = _count(db)
                    _insert(db, f"{prefix}{n}")
                    assert _count(db) == before + 1  # no other thread's insert in between
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _count(db) == 400
    db.close()


def test_two_connections_write_concurrently_without_busy_errors(db_path: Path) -> None:
    """Two Database objects on one file stand for two opencode processes."""
    first, second = Database(db_path), Database(db_path)
    errors: list[BaseException] = []

    def writer(db: Database, prefix: str) -> None:
        try:
            for n in range(100):
                with db.transaction():
                    _insert(db, f"{prefix}{n}")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer, args=pair) for pair in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _count(first) == _count(second) == 200
    first.close()
    second.close()


def test_execute_many_runs_the_statement_for_every_row_inside_the_transaction(db_path: Path) -> None:
    db = Database(db_path)
    rows = [(f"s{n}", n, n) for n in range(50)]
    with db.transaction():
        db.execute_many("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)", rows)
    with pytest.raises(RuntimeError), db.transaction():
        db.execute_many("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, ?, ?)", [("late", 0, 0)])
        raise RuntimeError("rolled back")
    assert [row["id"] for row in db.query("SELECT id FROM sessions ORDER BY created_at")] == [r[0] for r in rows]
    db.close()


def _big_transaction(db: Database, *, fail: bool = False) -> None:
    with db.transaction():
        db.checkpoint_after_commit()
        db.execute_many(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, 0, 0)",
            [(f"s{n}", "x" * 100_000) for n in range(60)],  # 6 MB: past SQLite's own checkpoint
        )
        if fail:
            raise RuntimeError("rolled back")


def test_a_big_commit_leaves_the_checkpoint_to_a_thread_that_close_waits_for(db_path: Path) -> None:
    db = Database(db_path)
    _big_transaction(db)
    assert db.query_one("PRAGMA wal_autocheckpoint")[0] == 1000  # small commits checkpoint as before
    db.close()
    wal = db_path.with_name(db_path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    reopened = Database(db_path)
    assert reopened.query_one("SELECT COUNT(*) FROM sessions")[0] == 60
    reopened.close()


def test_a_big_transaction_rolled_back_keeps_the_automatic_checkpoint(db_path: Path) -> None:
    db = Database(db_path)
    with pytest.raises(RuntimeError):
        _big_transaction(db, fail=True)
    with db.transaction():
        db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('small', 0, 0)")
    assert db.query_one("PRAGMA wal_autocheckpoint")[0] == 1000
    assert [row["id"] for row in db.query("SELECT id FROM sessions")] == ["small"]
    db.close()


def test_none_bools_and_bytes_are_stored_as_sqlite_stores_them(db_path: Path) -> None:
    """The adapters that spare sqlite3 its adapter search store what it stored without them."""
    db = Database(db_path)
    db.execute("CREATE TABLE kinds (a, b, c, d, e)")
    db.execute_many("INSERT INTO kinds VALUES (?, ?, ?, ?, ?)", [(None, True, False, b"\x00\xff", b"")])
    row = db.query_one("SELECT typeof(a), typeof(b), typeof(c), typeof(d), typeof(e), a, b, c, d, e FROM kinds")
    assert row is not None
    assert tuple(row) == ("null", "integer", "integer", "blob", "blob", None, 1, 0, b"\x00\xff", b"")
    db.close()
