"""File history (docs/specs/000-delete.md): per session and path, the content before the session first
changed the file ("initial"), then every content it wrote ("v1", "v2", ...). A deletion
is a version with empty content and ``deleted=True`` (docs/specs/004-acp-deleted.md), so it differs from a
file emptied on purpose; likewise an "initial" marked deleted says the session created
the file (nothing was there before), so reverting it removes the file.

Every query is scoped to one session, or to one session and its descendants for
``list_latest_session_files``: another session's versions of the same path never show.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from app.bus import Bus
from app.core.diff import diff_stats
from app.store.db import Database
from app.store.errors import InvalidRecordError
from app.store.events import FileVersionCreated
from app.store.ids import now_ms
from app.store.models import FileChange, FileVersion, RecordedChange
from app.store.sessions import SESSION_TREE_SQL, require_session

INITIAL = "initial"

_BIG_BATCH_CHARS = 4 << 20
"""About SQLite's automatic checkpoint (1,000 pages of 4 KiB): a batch this big would
pay for that checkpoint inside its commit, so it is left to a background thread."""

_BAD_SEGMENTS = frozenset({"", ".", ".."})

_COLUMNS = "id, session_id, path, content, version, seq, deleted, created_at, data, mode, link"

_INSERT_SQL = (
    "INSERT INTO files (session_id, path, content, version, seq, deleted, created_at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)

_INSERT_TAGGED_SQL = (
    "INSERT INTO files (session_id, path, content, version, seq, deleted, created_at, data, mode, link, change_set) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_LATEST_TREE_FILES_SQL = f"""
    {SESSION_TREE_SQL},
    changed AS (
        SELECT path,
               MAX(files.id) AS latest_id,
               MIN(CASE WHEN seq = 0 THEN files.id END) AS initial_id
        FROM files JOIN tree ON files.session_id = tree.id
        GROUP BY path
        HAVING MAX(seq) > 0
    )
    SELECT changed.path, latest.session_id, initial.content AS initial_content,
           latest.content AS latest_content, latest.version, latest.deleted,
           initial.data AS initial_data, initial.deleted AS created,
           initial.mode AS initial_mode, initial.link AS initial_link,
           (latest.content = initial.content AND latest.deleted = initial.deleted
            AND latest.data IS initial.data AND latest.link IS initial.link
            AND (latest.mode IS NULL OR initial.mode IS NULL OR latest.mode = initial.mode)) AS unchanged
    FROM changed
    JOIN files AS latest ON latest.id = changed.latest_id
    JOIN files AS initial ON initial.id = changed.initial_id
    ORDER BY changed.path
"""
"""Ids order versions across the sessions of a tree (seq only orders within one session):
the latest version is the last written, the initial the first "initial" written.
Every session holding a version beyond "initial" holds its own initial, so the join finds one.
A mode not known (NULL: a new file's default) matches any."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """What ``record_changes`` wrote: the events of its versions, and the paths whose
    "initial" version it wrote (holding the content the change replaced)."""

    events: list[FileVersionCreated] = field(default_factory=list)
    initial: set[str] = field(default_factory=set)


def version_name(seq: int) -> str:
    return INITIAL if seq == 0 else f"v{seq}"


class HistoryService:
    def __init__(self, db: Database, bus: Bus) -> None:
        self._db = db
        self._bus = bus

    def create(
        self, session_id: str, path: str, content: str, *, data: bytes | None = None, absent: bool = False
    ) -> FileVersion:
        """Record the content before this session's first change to ``path``. ``data``:
        the raw bytes when the content is not text (``content`` is then a placeholder);
        ``absent``: the file did not exist (the version is marked deleted)."""
        _check_path(path)
        _check_deleted(path, content, absent)
        with self._db.transaction():
            require_session(self._db, session_id)
            if self._latest_seq(session_id, path) is not None:
                raise InvalidRecordError(
                    f"{path!r} already has an initial version in session {session_id!r}; "
                    "record the change with create_version()"
                )
            return self._insert(session_id, path, content, seq=0, deleted=absent, data=data)

    def create_version(
        self, session_id: str, path: str, content: str, deleted: bool = False, *, data: bytes | None = None
    ) -> FileVersion:
        """Record the content after a change. The initial version must exist: only the
        caller knows what the file held before, so this never invents one."""
        _check_path(path)
        _check_deleted(path, content, deleted)
        with self._db.transaction():
            latest = self._latest_seq(session_id, path)
            if latest is None:
                raise InvalidRecordError(
                    f"{path!r} has no initial version in session {session_id!r}; "
                    "call create() with its content before the change first"
                )
            return self._insert(session_id, path, content, seq=latest + 1, deleted=deleted, data=data)

    def record_changes(
        self, session_id: str, changes: Sequence[RecordedChange], *, change_set: int | None = None
    ) -> Recorded:
        """Record many files changed at once (a patch, a folder delete): for each, its
        initial version when the session has none yet, then the new version. One
        transaction, one query for the versions already there, and one prepared insert
        run for every row: what create() + create_version() per file would do, at a
        fraction of the cost. A batch of many megabytes leaves the WAL checkpoint to a
        background thread.

        Without ``change_set``, FileVersionCreated events follow the commit, in order.
        With it (the change path's journal, app/store/journal.py), the rows are tagged
        with that change set and the events are returned instead: they are published once
        the files have changed, and the rows go if the change set is rolled back."""
        for change in changes:
            _check_path(change.path)
            _check_deleted(change.path, change.after, change.deleted)
        created_at = now_ms()
        rows: list[tuple[object, ...]] = []
        recorded = Recorded()
        size = 0

        def add(
            path: str, seq: int, content: str, deleted: bool, data: bytes | None, mode: int | None, link: str | None
        ) -> None:
            nonlocal size
            size += len(content) + len(data or b"")
            name = version_name(seq)
            rows.append((session_id, path, content, name, seq, deleted, created_at, data, mode, link, change_set))
            recorded.events.append(FileVersionCreated(session_id=session_id, path=path, version=name, deleted=deleted))

        with self._db.transaction():
            require_session(self._db, session_id)
            latest = {
                row["path"]: row["seq"]
                for row in self._db.query(
                    "SELECT path, MAX(seq) AS seq FROM files WHERE session_id = ? GROUP BY path", (session_id,)
                )
            }
            for change in changes:
                seq = latest.get(change.path)
                before = (change.before, change.created, change.before_data, change.before_mode, change.before_link)
                if seq is None:
                    seq = 0
                    add(change.path, 0, *before)
                    recorded.initial.add(change.path)
                elif self._changed_elsewhere(session_id, change, seq):
                    seq += 1
                    add(change.path, seq, *before)
                latest[change.path] = seq + 1
                after = (change.after, change.deleted, change.after_data, change.after_mode, change.after_link)
                add(change.path, seq + 1, *after)
            self._db.execute_many(_INSERT_TAGGED_SQL, rows)
            if change_set is None:
                self._db.on_commit(partial(self.publish, recorded.events))
            if size >= _BIG_BATCH_CHARS:
                self._db.checkpoint_after_commit()
        return recorded

    def _changed_elsewhere(self, session_id: str, change: RecordedChange, seq: int) -> bool:
        """Whether the file held something else than the session's latest version of it
        when the change found it (an editor, another session, a sub-agent wrote it since,
        a chmod changed its mode): that content is then recorded as a version of its own
        before the change, so every content the change path replaced stays in history (undo
        of a turn puts it back). A mode not known on either side matches any."""
        row = self._db.query_one(  # compared inside SQLite: no copy of the content is made
            "SELECT content = ? AND data IS ? AND deleted = ? AND link IS ? "
            "AND (mode IS NULL OR ? IS NULL OR mode = ?) AS same FROM files "
            "WHERE session_id = ? AND path = ? AND seq = ?",
            (
                change.before, change.before_data, change.created, change.before_link,
                change.before_mode, change.before_mode, session_id, change.path, seq,
            ),
        )  # fmt: skip
        return row is None or not row["same"]

    def publish(self, events: Sequence[FileVersionCreated]) -> None:
        """Announce versions recorded earlier (those of a change set, once it is done)."""
        for event in events:
            self._bus.publish(event)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Many creates in one transaction (one disk sync); their FileVersionCreated events
        are published after the commit, in order, and not at all if the block fails."""
        with self._db.transaction():
            yield

    def get_by_path_and_session(self, path: str, session_id: str) -> FileVersion | None:
        """The latest version of ``path`` in this session (not its children), or None."""
        row = self._db.query_one(
            f"SELECT {_COLUMNS} FROM files WHERE session_id = ? AND path = ? ORDER BY seq DESC LIMIT 1",
            (session_id, path),
        )
        return _file_version(row) if row else None

    def last_id(self) -> int:
        """The id of the latest version written by any session (0 when none): a mark to
        ask ``paths_since`` what was written after it."""
        row = self._db.query_one("SELECT COALESCE(MAX(id), 0) AS id FROM files")
        return int(row["id"]) if row is not None else 0

    def paths_since(self, session_id: str, mark: int) -> list[str]:
        """The paths this session wrote a version of after ``mark`` (a ``last_id``)."""
        rows = self._db.query(
            "SELECT DISTINCT path FROM files WHERE session_id = ? AND id > ? ORDER BY path", (session_id, mark)
        )
        return [row["path"] for row in rows]

    def changed_by_agent(self, path: str) -> bool:
        """Whether any session has changed ``path`` (workspace-relative): a version of it is kept."""
        return self._db.query_one("SELECT 1 FROM files WHERE path = ? LIMIT 1", (path,)) is not None

    def versions(self, session_id: str, path: str) -> list[FileVersion]:
        """Every version of ``path`` in this session, "initial" first."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM files WHERE session_id = ? AND path = ? ORDER BY seq", (session_id, path)
        )
        return [_file_version(row) for row in rows]

    def list_latest_session_files(self, session_id: str) -> list[FileChange]:
        """One entry per path changed in this session or its descendants, sorted by path,
        comparing the earliest initial content with the latest version. A file changed
        and then restored stays listed, with 0 additions and 0 deletions and ``unchanged``
        set (front-ends that list what differs leave it out)."""
        rows = self._db.query(_LATEST_TREE_FILES_SQL, (session_id,))
        return [_file_change(row) for row in rows]

    def _latest_seq(self, session_id: str, path: str) -> int | None:
        row = self._db.query_one(
            "SELECT MAX(seq) AS seq FROM files WHERE session_id = ? AND path = ?", (session_id, path)
        )
        seq: int | None = row["seq"] if row is not None else None
        return seq

    def _insert(
        self, session_id: str, path: str, content: str, seq: int, deleted: bool, data: bytes | None
    ) -> FileVersion:
        name, created_at = version_name(seq), now_ms()
        file_id = self._db.insert(_INSERT_SQL, (session_id, path, content, name, seq, deleted, created_at, data))
        version = FileVersion(
            id=file_id, session_id=session_id, path=path, content=content,
            version=name, seq=seq, deleted=deleted, created_at=created_at, data=data,
        )
        event = FileVersionCreated(session_id=session_id, path=path, version=name, deleted=deleted)
        self._db.on_commit(partial(self._bus.publish, event))
        return version


def _check_path(path: str) -> None:
    """History paths are keys the sidebar and ACP show, so each file gets one spelling:
    no leading "/", no empty, "." or ".." segments."""
    if not _BAD_SEGMENTS.isdisjoint(path.split("/")):
        raise InvalidRecordError(
            f"history path {path!r} is not a workspace-relative POSIX path like 'src/app.py'; "
            "pass Workspace.relative() of the file"
        )


def _check_deleted(path: str, content: str, deleted: bool) -> None:
    if deleted and content:
        raise InvalidRecordError(
            f"a deleted version of {path!r} must have empty content; pass content='' with deleted=True"
        )


def _file_version(row: sqlite3.Row) -> FileVersion:
    return FileVersion(**{**row, "deleted": bool(row["deleted"])})


def _file_change(row: sqlite3.Row) -> FileChange:
    additions, deletions = diff_stats(row["initial_content"], row["latest_content"])
    return FileChange(
        path=row["path"],
        session_id=row["session_id"],
        initial_content=row["initial_content"],
        latest_content=row["latest_content"],
        version=row["version"],
        deleted=bool(row["deleted"]),
        additions=additions,
        deletions=deletions,
        initial_data=row["initial_data"],
        created=bool(row["created"]),
        unchanged=bool(row["unchanged"]),
        initial_mode=row["initial_mode"],
        initial_link=row["initial_link"],
    )
