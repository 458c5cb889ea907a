"""The SQLite connection every store shares: WAL mode, migrations, nestable transactions,
and callbacks that run only once a transaction has committed.

One connection behind a re-entrant lock, not a pool: sqlite3 calls take microseconds,
the writers are few (the agent loop, tools in worker threads), and a single connection
keeps "publish after commit" and nested transactions simple. Other processes on the same
file are handled by WAL (readers never block the writer) and the busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.file_kinds import kind_of
from app.store.datadir import create_data_dir
from app.store.errors import StoreError
from app.store.migrations import MIGRATIONS, migrate, schema_version

BUSY_TIMEOUT_MS = 5_000
"""How long a write waits for another process's transaction before giving up."""

_AUTOCHECKPOINT_PAGES = 1000
"""SQLite's default: a commit leaving this many pages in the WAL copies them into the database."""


def _null(value: None) -> None:
    """The adapter of None: it stays NULL."""
    return value


# sqlite3 binds an int, float, str or bytearray as it is; any other value (None, a bool,
# bytes) is first looked up among the registered adapters, and when none is found the
# module raises and clears an AttributeError on the way (for every such value: nine of
# them per file of a folder delete, in its history rows and journal entries). An adapter for each of these three stores what was stored without one (NULL,
# the integer 0 or 1, the same blob) and skips that search.
sqlite3.register_adapter(type(None), _null)
sqlite3.register_adapter(bool, int)
sqlite3.register_adapter(bytes, bytes)


class Database:
    def __init__(self, path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS, *, read_only: bool = False) -> None:
        """Create the parent directories and the file if needed, then migrate it. A file
        there that is damaged, not opencode's, or from a newer opencode is renamed aside
        (``notice`` says so) and a fresh one created. ``read_only``: only open a database
        that is there and of this opencode's schema, for reading (nothing is created,
        migrated or moved; StoreError otherwise)."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        self._checkpoint_later = False
        self._checkpointer: threading.Thread | None = None
        if read_only:
            self._conn, self.notice = _open_read_only(self.path, busy_timeout_ms), None
        else:
            self._conn, self.notice = _connect(self.path, busy_timeout_ms)
        """One line saying an unusable file was set aside and a fresh one started, else None."""

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
            rows: list[sqlite3.Row] = self._conn.execute(sql, params).fetchall()
        return rows

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
        return row

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


_CANNOT_WRITE_CODES = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM})
"""SQLite's primary result codes for a file it may not create or write (the extended
codes keep the primary one in their low byte)."""


def _cannot_write(path: Path, err: Exception) -> StoreError:
    return StoreError(
        f"cannot open the database {path}: {err}; make its folder writable, or set "
        "OPENCODE_DATA__DIRECTORY to a writable folder"
    )


def _connect(path: Path, busy_timeout_ms: int) -> tuple[sqlite3.Connection, str | None]:
    """The migrated connection, and the notice to show when the file found there could
    not be used (damaged, another application's, a newer opencode's) and was replaced:
    it is kept beside under a new name, for recovery by hand, and a fresh one started."""
    try:
        create_data_dir(path.parent)
    except OSError as err:
        raise _cannot_write(path, err) from err
    _check_regular(path)
    try:
        return _open_usable(path, busy_timeout_ms), None
    except _UnusableDatabase as unusable:
        kept = _set_aside(path)
        notice = f"{path} {unusable}: kept it as {kept.name} and started a fresh database"
    try:
        return _open_usable(path, busy_timeout_ms), notice
    except _UnusableDatabase as unusable:
        raise StoreError(f"{path} {unusable}, even freshly created; check the disk and its directory") from None


def _open_read_only(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """A reading connection to the database at ``path`` as it is: SQLite's read-only mode
    never creates the file, and a schema other than this opencode's is refused rather
    than migrated (the writing connection does that)."""
    if not path.is_file():
        raise StoreError(f"no database at {path}")
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise StoreError(f"cannot read the database {path}: {err}") from err
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        version = schema_version(conn)
    except sqlite3.Error as err:
        conn.close()
        raise StoreError(f"cannot read the database {path}: {err}") from err
    if version != len(MIGRATIONS):
        conn.close()
        raise StoreError(f"the database {path} has schema version {version}, not {len(MIGRATIONS)}")
    return conn


def _check_regular(path: Path) -> None:
    """Refuse, before SQLite opens it, what is at ``path`` but is no file (a FIFO, a
    device, a symlink loop): it is not ours to rename, and SQLite would only say "disk
    I/O error"."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise StoreError(
            f"cannot open the database {path}: {err.strerror}; remove it or set data.directory elsewhere"
        ) from None
    if not stat.S_ISREG(mode):
        raise StoreError(
            f"the database {path} is {kind_of(mode)}, not a file: remove it or set data.directory elsewhere"
        )


class _UnusableDatabase(Exception):
    """The file at the database path is not one opencode can use; ``str`` says why."""


def _open_usable(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise _cannot_write(path, err) from err
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        _check_usable(conn)  # first: a file that is not ours is left as it was found
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL cannot corrupt the file; a power cut may lose the last commits.
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as err:
        conn.close()
        if isinstance(err, sqlite3.OperationalError) and not _is_damage(err):
            if getattr(err, "sqlite_errorcode", 0) & 0xFF in _CANNOT_WRITE_CODES:
                raise _cannot_write(path, err) from err
            raise StoreError(f"cannot use the database {path}: {err}; check the disk and its permissions") from err
        raise _UnusableDatabase(f"is damaged ({err})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _is_damage(err: sqlite3.OperationalError) -> bool:
    """Most damage is a DatabaseError; a few forms of it come as an OperationalError,
    which otherwise means a locked, read-only or full database: not the file's fault."""
    return "malformed" in str(err) or "not a database" in str(err)


def _check_usable(conn: sqlite3.Connection) -> None:
    """Raise _UnusableDatabase unless the file is sound and ours (or empty). quick_check
    reads every page once without checking index contents against tables: a damaged
    page is found now, not in the middle of a tool call."""
    result = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    if result != "ok":  # e.g. "*** in database main ***\nPage 4: btreeInitPage() returns error code 11"
        problem = "; ".join(line for line in result.splitlines() if not line.startswith("***"))
        raise _UnusableDatabase(f"is damaged ({problem})")
    version = schema_version(conn)
    if version > len(MIGRATIONS):
        raise _UnusableDatabase(
            f"was written by a newer opencode (schema version {version}, this one knows {len(MIGRATIONS)})"
        )
    if version == 0 and conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
        raise _UnusableDatabase("is not an opencode database (it holds another application's tables)")


def _set_aside(path: Path) -> Path:
    """Rename ``path`` to ``<name>.damaged-<UTC time>`` and its write-ahead log with it
    (a log left behind would be replayed into the fresh file); the shared-memory index
    is rebuilt from the log, so it goes."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    extra = 1
    while kept.exists():
        extra += 1
        kept = path.with_name(f"{path.name}.damaged-{stamp}-{extra}")
    try:
        os.rename(path, kept)
        wal = path.with_name(path.name + "-wal")
        if wal.exists():
            os.rename(wal, kept.with_name(kept.name + "-wal"))
        path.with_name(path.name + "-shm").unlink(missing_ok=True)
    except OSError as err:
        raise StoreError(
            f"{path} cannot be used and cannot be moved aside ({err.strerror}): move it away by hand"
        ) from None
    return kept
