"""Schema migrations: an ordered list of steps; ``PRAGMA user_version`` records how many
a database has applied.

Append new steps at the end and never edit a released one: user_version says how many
steps a database has seen, not what they contained.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from app.store.errors import StoreError

Migration = tuple[str, ...]
"""One step: SQL statements run in order, inside the migration transaction."""

MIGRATIONS: tuple[Migration, ...] = (
    # 1: sessions, messages and file history.
    (
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            parent_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
            title TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0,
            summary_message_id TEXT REFERENCES messages (id) ON DELETE SET NULL,
            model TEXT
        )
        """,
        # Child keys get indexes so cascades and children() do not scan the table.
        "CREATE INDEX sessions_by_parent ON sessions (parent_id)",
        "CREATE INDEX sessions_by_summary ON sessions (summary_message_id)",
        """
        CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            parts TEXT NOT NULL,
            model TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            finished_at INTEGER
        )
        """,
        "CREATE INDEX messages_by_session ON messages (session_id, created_at)",
        # id is the write order across sessions (an INTEGER PRIMARY KEY keeps it through
        # VACUUM, unlike a plain rowid). UNIQUE (session_id, path, seq) is itself the index
        # on (session_id, path): lookups use its prefix, a second index would slow inserts.
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            content TEXT NOT NULL,
            version TEXT NOT NULL,
            seq INTEGER NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
            created_at INTEGER NOT NULL,
            UNIQUE (session_id, path, seq)
        )
        """,
    ),
    # 2: the raw bytes of versions whose content is not UTF-8 text (docs/specs/000-delete.md: no content
    # is ever lost); NULL for text, whose bytes are its content encoded as UTF-8.
    ("ALTER TABLE files ADD COLUMN data BLOB",),
    # 3: what each session has seen of each file (canonical absolute path), so freshness
    # checks hold across processes (`opencode tool ... --session ID`).
    (
        """
        CREATE TABLE seen_files (
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            mtime_ns INTEGER,
            size INTEGER,
            inode INTEGER,
            seen_at REAL NOT NULL,
            PRIMARY KEY (session_id, path)
        )
        """,
    ),
    # 4: what kind of session a row is: a conversation ('chat'), or the one-shot session
    # of an `opencode tool` call ('tool'), which listings and "the last session" skip.
    ("ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'tool'))",),
    # 5: the change path's write-ahead journal. A change set is recorded here, with what
    # each entry was before it, in the transaction that records its history versions,
    # before any file is touched; its row goes once every file has changed. A row still
    # here at start is a change a crash interrupted: recovery rolls it back (app/workspace/
    # recovery.py). AUTOINCREMENT: an id is never reused, so the history rows tagged with
    # it belong to one change set only.
    (
        """
        CREATE TABLE change_sets (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            root TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title TEXT NOT NULL,
            started_at INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE change_set_entries (
            change_set INTEGER NOT NULL REFERENCES change_sets (id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('absent', 'file', 'link', 'dir')),
            mode INTEGER,
            data BLOB,
            in_history INTEGER NOT NULL DEFAULT 0 CHECK (in_history IN (0, 1)),
            PRIMARY KEY (change_set, path)
        )
        """,
        "ALTER TABLE files ADD COLUMN change_set INTEGER",
        "CREATE INDEX files_by_change_set ON files (change_set) WHERE change_set IS NOT NULL",
    ),
    # 6: turns, for undo and redo of a whole turn (app/prompt/turn_undo.py). A turn is a prompt
    # and everything answered to it; the history rows it wrote (its sub-agents' too) are
    # those of its session tree with an id in (files_after, files_until]. ``state``: done,
    # undone (redo may bring it back) or dropped (undone, and a newer prompt ended the
    # redo). An undone turn's messages keep their rows, marked with ``undone_at``.
    (
        """
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL UNIQUE REFERENCES messages (id) ON DELETE CASCADE,
            files_after INTEGER NOT NULL,
            files_until INTEGER,
            state TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('done', 'undone', 'dropped'))
        )
        """,
        "CREATE INDEX turns_by_session ON turns (session_id, state)",
        "ALTER TABLE messages ADD COLUMN undone_at INTEGER",
    ),
    # 7: each session's todo list (the agent's plan, written whole by the todowrite tool):
    # one row per session holding the items as JSON, kept and deleted with the session.
    (
        """
        CREATE TABLE todos (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            items TEXT NOT NULL,
            updated_at INTEGER NOT NULL
        )
        """,
    ),
    # 8: what a version was besides its bytes, so undo and revert put it back whole: the
    # permission bits of a regular file (NULL: not known, a new file's default), and for
    # a symlink its target (NULL: no symlink; the version's content is then "").
    ("ALTER TABLE files ADD COLUMN mode INTEGER", "ALTER TABLE files ADD COLUMN link TEXT"),
    # 9: how an undone turn was taken back, so a redo brings back exactly that: the turns
    # one step took back together (a /rewind: the id of the step's earliest turn, shared)
    # and what it took back of them (both, files or conversation).
    ("ALTER TABLE turns ADD COLUMN undo_step INTEGER", "ALTER TABLE turns ADD COLUMN undo_scope TEXT"),
)


def schema_version(conn: sqlite3.Connection) -> int:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


def migrate(conn: sqlite3.Connection, steps: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the steps this database has not seen, all in one transaction (a failure
    leaves it as it was), and return the resulting version. ``conn`` must be in
    autocommit mode (isolation_level=None)."""
    if schema_version(conn) == len(steps):
        return len(steps)
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another process may have migrated meanwhile.
        current = schema_version(conn)
        if current > len(steps):
            raise StoreError(
                f"the database has schema version {current} but this opencode knows only "
                f"{len(steps)}; upgrade opencode or point it at another data directory"
            )
        for step in steps[current:]:
            for statement in step:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(steps)}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return len(steps)
