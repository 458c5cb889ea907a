"""Turns, for undo and redo of a whole turn (app/prompt/turn_undo.py).

A turn is a user's prompt and everything answered to it. Its row says which history rows
it wrote: those of its session tree (sub-agents included) with an id after
``files_after`` and up to ``files_until``, the largest id when it ended. History ids
grow with every write, whatever the session, so the range holds exactly what the turn's
tools wrote; the session tree leaves out what other sessions wrote meanwhile.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

from app.store.db import Database
from app.store.sessions import SESSION_TREE_SQL

TurnState = Literal["done", "undone", "dropped"]
UndoScope = Literal["both", "files", "conversation"]
"""What a step took back of its turns: their files and messages, or only one of them."""

_COLUMNS = "id, session_id, message_id, files_after, files_until, state, undo_step, undo_scope"

_TURN_ROWS_SQL = f"""
    {SESSION_TREE_SQL}
    SELECT files.id, files.session_id, path, content, seq, deleted, data, mode, link, change_set
    FROM files JOIN tree ON files.session_id = tree.id
    WHERE files.id > ? AND files.id <= ?
    ORDER BY files.id
"""

_RESULTS_SQL = """
    SELECT files.id FROM files
    JOIN turns ON files.id > turns.files_after
              AND files.id <= COALESCE(turns.files_until, (SELECT MAX(id) FROM files))
    WHERE turns.session_id = ? AND turns.state = 'done' AND files.session_id = ?
      AND NOT EXISTS (
          SELECT 1 FROM files AS later
          WHERE later.session_id = files.session_id AND later.path = files.path
            AND later.seq > files.seq AND later.change_set = files.change_set
      )
"""
"""Versions a turn in place wrote as a change's result: a version followed by another of
the same path in its change set recorded what the change found, not what it wrote."""

_PREVIOUS_SQL = "SELECT content, deleted, data, mode, link FROM files WHERE session_id = ? AND path = ? AND seq = ?"


@dataclass(frozen=True)
class Turn:
    id: int
    session_id: str
    message_id: str
    """The user message that started it."""
    files_after: int
    files_until: int | None
    """None while it runs (or when a crash ended it)."""
    state: TurnState
    undo_step: int | None = None
    """For an undone turn: the step that took it back (turns a /rewind took back together share it)."""
    undo_scope: UndoScope | None = None
    """For an undone turn: what that step took back."""


@dataclass(frozen=True)
class Content:
    """A path's content at one moment: a regular file's bytes (None: no regular file there)
    and permission bits (None: not known), or a symlink's target."""

    data: bytes | None
    mode: int | None = None
    link: str | None = None


@dataclass(frozen=True)
class TurnFile:
    """One path a turn changed: what it held before the turn's first change and after its last."""

    path: str
    before: Content
    after: Content


class TurnStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def begin(self, session_id: str, message_id: str) -> Turn:
        """Record a turn starting at the user message ``message_id``. Turns of the session
        still undone can no longer be redone: a new prompt ends the redo (they stay
        undone, and in history)."""
        with self._db.transaction():
            self._db.execute("UPDATE turns SET state = 'dropped' WHERE session_id = ? AND state = 'undone'", (session_id,))
            turn_id = self._db.insert(
                "INSERT INTO turns (session_id, message_id, files_after) "
                "VALUES (?, ?, (SELECT COALESCE(MAX(id), 0) FROM files))",
                (session_id, message_id),
            )
            return self._get(turn_id)

    def end(self, turn_id: int) -> None:
        """The turn has ended: what history holds now is all it wrote."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE turns SET files_until = (SELECT COALESCE(MAX(id), 0) FROM files) WHERE id = ?", (turn_id,)
            )

    def last_done(self, session_id: str) -> Turn | None:
        """The latest turn of the session not undone: what undo takes back."""
        return self._one("WHERE session_id = ? AND state = 'done' ORDER BY id DESC", session_id)

    def first_undone(self, session_id: str) -> Turn | None:
        """The earliest turn still undone: the last one undo took back, which redo brings back."""
        return self._one("WHERE session_id = ? AND state = 'undone' ORDER BY id", session_id)

    def done(self, session_id: str) -> list[Turn]:
        """The session's turns the model still sees, oldest first: what /rewind numbers."""
        rows = self._db.query(f"SELECT {_COLUMNS} FROM turns WHERE session_id = ? AND state = 'done' ORDER BY id", (session_id,))
        return [Turn(**row) for row in rows]

    def taken_back_with(self, turn: Turn) -> list[Turn]:
        """The undone turns the step that took ``turn`` back took back (itself included), oldest first."""
        if turn.undo_step is None:  # undone before steps were recorded: one turn per step
            return [turn]
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM turns WHERE session_id = ? AND state = 'undone' AND undo_step = ? ORDER BY id",
            (turn.session_id, turn.undo_step),
        )
        return [Turn(**row) for row in rows]

    def following(self, turn: Turn) -> Turn | None:
        """The next turn of the same session, whatever its state."""
        return self._one("WHERE session_id = ? AND id > ? ORDER BY id", turn.session_id, turn.id)

    def set_state(self, turns: list[Turn], state: TurnState, scope: UndoScope | None = None) -> None:
        """Mark ``turns`` in one transaction: undone together (``scope`` saying what was
        taken back, one step shared by all) or done again. A turn that never ended (a
        crash) is closed at what history holds now."""
        step = turns[0].id if state == "undone" else None
        with self._db.transaction():
            for turn in turns:
                self._db.execute(
                    "UPDATE turns SET state = ?, undo_step = ?, undo_scope = ?, "
                    "files_until = COALESCE(files_until, (SELECT COALESCE(MAX(id), 0) FROM files)) WHERE id = ?",
                    (state, step, scope if state == "undone" else None, turn.id),
                )

    def files(self, turn: Turn) -> list[TurnFile]:
        """Every path the turn changed, sorted, with its content before and after the turn.
        Before is what the turn's first change of the path found there (an "initial", or
        the version recorded for content written by something else since), else the
        version preceding the turn's first one; after is the turn's last version."""
        until = turn.files_until
        if until is None:
            newest = self._db.query_one("SELECT COALESCE(MAX(id), 0) AS id FROM files")
            until = newest["id"] if newest is not None else 0
        first: dict[str, sqlite3.Row] = {}
        second: dict[str, sqlite3.Row] = {}
        last: dict[str, sqlite3.Row] = {}
        for row in self._db.query(_TURN_ROWS_SQL, (turn.session_id, turn.files_after, until)):
            if row["path"] in first:
                second.setdefault(row["path"], row)
            first.setdefault(row["path"], row)
            last[row["path"]] = row
        found = []
        for path in sorted(first):
            row = first[path]
            before = _content(row)
            if not _found_before(row, second.get(path)):
                previous = self._db.query_one(_PREVIOUS_SQL, (row["session_id"], path, row["seq"] - 1))
                before = _content(previous) if previous is not None else Content(None)
            found.append(TurnFile(path, before, _content(last[path])))
        return found

    def results_of_turns(self, session_id: str) -> set[int] | None:
        """The ids of the session's history versions that its turns still in place wrote
        as results: not those of undone turns, of undo and redo themselves or of the
        sidebar's reverts (written between turns), nor the versions that record what a
        change found (an "initial", content written elsewhere meanwhile). None for a
        session without recorded turns (made before turns were kept, or by `opencode tool`)."""
        if self._db.query_one("SELECT 1 FROM turns WHERE session_id = ? LIMIT 1", (session_id,)) is None:
            return None
        rows = self._db.query(_RESULTS_SQL, (session_id, session_id))
        return {row["id"] for row in rows}

    def _one(self, where: str, *params: object) -> Turn | None:
        row = self._db.query_one(f"SELECT {_COLUMNS} FROM turns {where} LIMIT 1", params)
        return Turn(**row) if row else None

    def _get(self, turn_id: int) -> Turn:
        turn = self._one("WHERE id = ?", turn_id)
        assert turn is not None
        return turn


def _found_before(row: sqlite3.Row, next_row: sqlite3.Row | None) -> bool:
    """Whether ``row`` holds what the change path found before a change rather than what
    a change wrote: an "initial", or the version a change set records first when the file
    held something else than the session's latest version (HistoryService.record_changes),
    followed by that change set's own version of the path."""
    if row["seq"] == 0:
        return True
    return (
        next_row is not None
        and row["change_set"] is not None
        and next_row["change_set"] == row["change_set"]
        and next_row["session_id"] == row["session_id"]
    )


def _content(row: sqlite3.Row) -> Content:
    """A history version's bytes: the raw ones kept for binary content, else its text
    (history keeps text with its BOM and line endings, so these are the file's bytes);
    with its mode, or a symlink's target."""
    if row["deleted"]:
        return Content(None)
    if row["link"] is not None:
        return Content(None, link=row["link"])
    return Content(row["data"] if row["data"] is not None else row["content"].encode("utf-8"), row["mode"])
