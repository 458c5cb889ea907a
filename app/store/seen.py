"""Which files each session has seen, and what they looked like then: the file records'
memory across processes, so `opencode tool view` and a later `opencode tool edit
--session ID` agree that the file was read (freshness is per session, not per process)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from app.store.db import Database


class SeenFile(NamedTuple):
    """A stat fingerprint (None fields: the file did not exist) and when it was taken."""

    mtime_ns: int | None
    size: int | None
    inode: int | None
    seen_at: float


class SeenFiles:
    def __init__(self, db: Database) -> None:
        self._db = db

    def save(self, session_id: str, entries: Iterable[tuple[str, SeenFile]]) -> None:
        """Remember (path, state) pairs for a session, in one transaction."""
        with self._db.transaction():
            self._db.execute_many(
                "INSERT OR REPLACE INTO seen_files (session_id, path, mtime_ns, size, inode, seen_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                ((session_id, path, seen.mtime_ns, seen.size, seen.inode, seen.seen_at) for path, seen in entries),
            )

    def load(self, session_id: str, path: str) -> SeenFile | None:
        row = self._db.query_one(
            "SELECT mtime_ns, size, inode, seen_at FROM seen_files WHERE session_id = ? AND path = ?",
            (session_id, path),
        )
        return None if row is None else SeenFile(row["mtime_ns"], row["size"], row["inode"], row["seen_at"])
