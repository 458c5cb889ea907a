"""The SQLite connection every store shares: WAL mode, migrations, nestable transactions,
and callbacks that run only once a transaction has committed.

One connection behind a re-entrant lock, not a pool: sqlite3 calls take microseconds,
the writers are few (the agent loop, tools in worker threads), and a single connection
keeps "publish after commit" and nested transactions simple. Other processes on the same
file are handled by WAL (readers never block the writer) and the busy timeout.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.datadir import create_data_dir
from app.store.errors import StoreError
from app.store.migrations import migrate, schema_version

BUSY_TIMEOUT_MS = 5_000
"""How long a write waits for another process's transaction before giving up."""

_AUTOCHECKPOINT_PAGES = 1000
"""SQLite's default: a commit leaving this many pages in the WAL copies them into the database."""


class Database:
    def __init__(self, path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        """Create the parent directories and the file if needed, then migrate it."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        self._checkpoint_later = False
        self._checkpointer: threading.Thread | None = None
        self._conn = _connect(self.path, busy_timeout_ms)

    @property
    def schema_version(self) -> int:
        with self._lock:
            return schema_version(self._conn)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit. Nested calls become savepoints: an inner failure undoes only
        the inner block, and only the outermost block commits. The connection is held for
        the whole block, so other threads wait rather than interleave."""
        with self._lock:
            depth = self._depth
            savepoint = f"nested_{depth}"
            pending_mark = len(self._after_commit)
            self._begin(depth, savepoint)
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                del self._after_commit[pending_mark:]
                if depth == 0:
                    self._checkpoint_later = False
                self._undo(depth, savepoint)
                raise
            self._depth -= 1
            if depth > 0:
                self._conn.execute(f"RELEASE {savepoint}")
                return
            self._commit()

    def _begin(self, depth: int, savepoint: str) -> None:
        if depth > 0:
            self._conn.execute(f"SAVEPOINT {savepoint}")
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            raise StoreError(
                f"cannot write to {self.path}: {err}; another opencode process is holding it, "
                "retry once it finishes"
            ) from err

    def _undo(self, depth: int, savepoint: str) -> None:
        if not self._conn.in_transaction:
            return  # SQLite already rolled back on its own (disk full, I/O error)
        if depth == 0:
            self._conn.execute("ROLLBACK")
        else:
            self._conn.execute(f"ROLLBACK TO {savepoint}")
            self._conn.execute(f"RELEASE {savepoint}")

    def _commit(self) -> None:
        callbacks, self._after_commit = self._after_commit, []
        later, self._checkpoint_later = self._checkpoint_later, False
        if later:
            self._conn.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            self._conn.execute("COMMIT")
        except BaseException:
            self._undo(0, "")
            raise
        finally:
            if later:
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
        if later:
            self._checkpoint_in_background()
        for callback in callbacks:
            callback()

    def checkpoint_after_commit(self) -> None:
        """Say the open transaction writes a lot (files' contents): its commit then
        leaves the copy of the WAL into the database file, with its two fsyncs, to a
        background thread instead of doing it inside COMMIT as SQLite would, so the
        caller goes on at once. ``close`` waits for it."""
        with self._lock:
            self._checkpoint_later = self._depth > 0

    def _checkpoint_in_background(self) -> None:
        if self._checkpointer is not None and self._checkpointer.is_alive():
            return  # not waiting for it: what it leaves, the next automatic checkpoint copies
        self._checkpointer = threading.Thread(
            target=_checkpoint, args=(self.path,), name="opencode-checkpoint", daemon=True
        )
        self._checkpointer.start()

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current transaction commits, in registration order
        (now, if none is open); dropped if the transaction or its savepoint rolls back."""
        with self._lock:
            if self._depth == 0:
                callback()
            else:
                self._after_commit.append(callback)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        with self._lock:
            return self._conn.execute(sql, params).rowcount

    def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each row of parameters (SQLite prepares it once)."""
        with self._lock:
            self._conn.executemany(sql, rows)

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one INSERT; returns the new row's rowid (its INTEGER PRIMARY KEY, if any)."""
        with self._lock:
            row_id = self._conn.execute(sql, params).lastrowid
        assert row_id is not None, "lastrowid is set by every successful INSERT"
        return row_id

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self._conn.execute(sql, params).fetchone()

    def close(self) -> None:
        with self._lock:
            if self._checkpointer is not None:
                self._checkpointer.join()  # so this connection, the last, ends the WAL
            self._conn.close()


def _checkpoint(path: Path) -> None:
    """Copy the WAL's committed pages into the database file, on a connection of its own.
    PASSIVE never waits for nor blocks other connections; what fails here is left to
    SQLite's next automatic checkpoint."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            conn.close()
    except sqlite3.Error:
        pass


def _connect(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    try:
        create_data_dir(path.parent)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as err:
        raise StoreError(f"cannot open the database {path}: {err}; check that its directory is writable") from err
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL cannot corrupt the file; a power cut may lose the last commits.
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as err:
        conn.close()
        raise StoreError(
            f"{path} is not a usable opencode database ({err}); move it aside to start a fresh one"
        ) from err
    except BaseException:
        conn.close()
        raise
    return conn
