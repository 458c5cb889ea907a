"""The change path's write-ahead journal: a change set is written down before any file
changes, so a crash at any moment can be undone at the next start.

``begin`` records, in one transaction, the change set (pending), what each entry was
before it (a file's bytes and mode, a symlink's target, a folder's mode, or "did not
exist") and the history versions of the change (the intended results). Only then does
the change path touch files. ``finish`` removes the change set once every file has
changed and publishes the history events; ``abandon`` removes it with its history rows,
for a change undone (by the change path after a failure, by recovery after a crash).
A file's bytes are stored once: when the history's "initial" version written in the same
transaction holds them, the entry points there instead of keeping a copy.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.store.db import Database
from app.store.events import FileVersionCreated
from app.store.history import HistoryService
from app.store.ids import now_ms
from app.store.models import RecordedChange

Kind = Literal["absent", "file", "link", "dir"]


@dataclass(frozen=True, slots=True)
class Before:
    """What a workspace-relative ``path`` was before a change set: nothing ("absent"), a
    regular file (``data`` its bytes), a symlink (``data`` its target), or a folder."""

    path: str
    kind: Kind
    data: bytes | None = None
    mode: int | None = None

    @property
    def link_target(self) -> str:
        return os.fsdecode(self.data or b"")


@dataclass(frozen=True, slots=True)
class PendingChange:
    """A change set begun and not finished: in flight, or interrupted by a crash."""

    id: int
    session_id: str
    title: str
    entries: list[Before]


@dataclass(frozen=True, slots=True)
class Begun:
    """A change set recorded as pending, and the history events to publish once it is done."""

    id: int
    events: list[FileVersionCreated]


class ChangeJournal:
    def __init__(self, db: Database, history: HistoryService) -> None:
        self._db = db
        self._history = history

    def begin(
        self, root: str, session_id: str, title: str, entries: Sequence[Before], recorded: Sequence[RecordedChange]
    ) -> Begun:
        """Record the change set as pending, its entries and its history versions, in one
        transaction (see the module doc). ``root``: the workspace, as recovery finds it."""
        with self._db.transaction():
            change_set = self._db.insert(
                "INSERT INTO change_sets (root, session_id, title, started_at) VALUES (?, ?, ?, ?)",
                (root, session_id, title, now_ms()),
            )
            written = self._history.record_changes(session_id, recorded, change_set=change_set)
            self._db.execute_many(
                "INSERT INTO change_set_entries (change_set, path, kind, mode, data, in_history) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (change_set, entry.path, entry.kind, entry.mode, None if held else entry.data, held)
                    for entry in entries
                    for held in [entry.kind == "file" and entry.path in written.initial]
                ),
            )
        return Begun(change_set, written.events)

    def finish(self, begun: Begun) -> None:
        """The files have changed: the change set is done, its history versions announced."""
        with self._db.transaction():
            self._db.execute("DELETE FROM change_sets WHERE id = ?", (begun.id,))
            self._db.on_commit(lambda: self._history.publish(begun.events))

    def abandon(self, change_set: int) -> None:
        """The change set was undone on disk: it and its history versions go."""
        with self._db.transaction():
            self._db.execute("DELETE FROM files WHERE change_set = ?", (change_set,))
            self._db.execute("DELETE FROM change_sets WHERE id = ?", (change_set,))

    def has_pending(self, root: str) -> bool:
        """Cheap: whether any change set on this workspace is begun and not finished."""
        return self._db.query_one("SELECT 1 FROM change_sets WHERE root = ? LIMIT 1", (root,)) is not None

    def pending(self, root: str) -> list[PendingChange]:
        """The change sets on this workspace begun and not finished, oldest first, each
        with what its entries were before it."""
        found = []
        for row in self._db.query(
            "SELECT id, session_id, title FROM change_sets WHERE root = ? ORDER BY id", (root,)
        ):
            entries = [
                Before(entry["path"], entry["kind"], _bytes(entry), entry["mode"])
                for entry in self._db.query(
                    "SELECT e.path, e.kind, e.mode, e.data, f.content, f.data AS history_data "
                    "FROM change_set_entries AS e LEFT JOIN files AS f "
                    "ON e.in_history AND f.change_set = e.change_set AND f.path = e.path AND f.seq = 0 "
                    "WHERE e.change_set = ?",
                    (row["id"],),
                )
            ]
            found.append(PendingChange(row["id"], row["session_id"], row["title"], entries))
        return found


def _bytes(entry: sqlite3.Row) -> bytes | None:
    """An entry's bytes: its own, or those of the history version holding them (a text
    version's content is its exact UTF-8; a binary one keeps its bytes beside)."""
    if entry["data"] is not None or entry["content"] is None:
        data: bytes | None = entry["data"]
        return data
    if entry["history_data"] is not None:
        history_data: bytes = entry["history_data"]
        return history_data
    content: str = entry["content"]
    return content.encode("utf-8")
