"""Chat sessions: top-level conversations and the child sessions sub-agents run in."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from functools import partial
from typing import Any, get_args

from app.bus import Bus
from app.store.db import Database
from app.store.errors import InvalidRecordError, RecordNotFoundError
from app.store.events import SessionCreated, SessionDeleted, SessionUpdated
from app.store.ids import new_id, now_ms
from app.store.models import Session, SessionKind, TreeUsage

_COLUMNS = ", ".join(Session._fields)
_PLACEHOLDERS = ", ".join("?" for _ in Session._fields)

SESSION_TREE_SQL = """
    WITH RECURSIVE tree (id) AS (
        SELECT id FROM sessions WHERE id = ?
        UNION ALL
        SELECT sessions.id FROM sessions JOIN tree ON sessions.parent_id = tree.id
    )
"""
"""A CTE naming a session and all its descendants as ``tree``; one parameter, the root id."""

_UPDATABLE: dict[str, tuple[type, ...]] = {
    "title": (str,),
    "prompt_tokens": (int,),
    "completion_tokens": (int,),
    "cost": (int, float),
    "model": (str, type(None)),
    "summary_message_id": (str, type(None)),
    "kind": (str,),
}


def require_session(db: Database, session_id: str) -> None:
    """Raise a readable error instead of SQLite's bare "FOREIGN KEY constraint failed"."""
    if db.query_one("SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
        raise _not_found(session_id)


class SessionStore:
    def __init__(self, db: Database, bus: Bus, clock: Callable[[], int] = now_ms) -> None:
        """``clock`` gives the milliseconds stamped on created_at and updated_at."""
        self._db = db
        self._bus = bus
        self._clock = clock

    def create(
        self,
        title: str = "",
        parent_id: str | None = None,
        model: str | None = None,
        kind: SessionKind = "chat",
    ) -> Session:
        """A new session; ``kind="tool"`` marks the one-shot session of an `opencode tool` call."""
        _check_field("kind", kind)
        now = self._clock()
        session = Session(
            id=new_id(now),
            parent_id=parent_id,
            title=title,
            created_at=now,
            updated_at=now,
            prompt_tokens=0,
            completion_tokens=0,
            cost=0.0,
            summary_message_id=None,
            model=model,
            kind=kind,
        )
        with self._db.transaction():
            if parent_id is not None:
                require_session(self._db, parent_id)
            self._db.execute(
                f"INSERT INTO sessions ({_COLUMNS}) VALUES ({_PLACEHOLDERS})", session
            )
            self._db.on_commit(partial(self._bus.publish, SessionCreated(session)))
        return session

    def get(self, session_id: str) -> Session | None:
        row = self._db.query_one(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return Session(**row) if row else None

    def list(self, *, include_tool: bool = False) -> list[Session]:
        """Top-level conversations, newest first (children are reached through
        ``children``); ``include_tool`` adds the one-shot sessions of `opencode tool`."""
        return self._select(
            f"WHERE parent_id IS NULL{_kinds(include_tool)} ORDER BY created_at DESC, rowid DESC"
        )

    # Below the method `list`, the bare name means the method: annotations say builtins.list.
    def children(self, session_id: str) -> builtins.list[Session]:
        """Direct children, oldest first: the order the sub-agents were started in."""
        return self._select("WHERE parent_id = ? ORDER BY created_at, rowid", (session_id,))

    def latest(self, *, include_tool: bool = False) -> Session | None:
        """The top-level conversation used most recently (by updated_at): what --continue
        resumes; ``include_tool`` lets the one-shot session of `opencode tool` be it."""
        found = self._select(
            f"WHERE parent_id IS NULL{_kinds(include_tool)} ORDER BY updated_at DESC, rowid DESC LIMIT 1"
        )
        return found[0] if found else None

    def update(self, session_id: str, **fields: Any) -> Session:
        """Set any of title, prompt_tokens, completion_tokens, cost, model,
        summary_message_id, kind; updated_at is bumped even when no field is given."""
        for name, value in fields.items():
            _check_field(name, value)
        assignments = "".join(f"{name} = ?, " for name in fields)
        with self._db.transaction():
            if fields.get("summary_message_id") is not None:
                self._require_own_message(session_id, fields["summary_message_id"])
            changed = self._db.execute(
                f"UPDATE sessions SET {assignments}updated_at = ? WHERE id = ?",
                (*fields.values(), self._clock(), session_id),
            )
            return self._changed(session_id, changed)

    def add_usage(self, session_id: str, prompt_tokens: int, completion_tokens: int, cost: float) -> Session:
        """Add one model call's usage to the running totals (atomic, so concurrent calls add up)."""
        if min(prompt_tokens, completion_tokens, cost) < 0:
            raise InvalidRecordError(
                f"usage must not be negative (got {prompt_tokens}, {completion_tokens}, {cost}); "
                "pass the counts of one model call"
            )
        with self._db.transaction():
            changed = self._db.execute(
                """
                UPDATE sessions SET prompt_tokens = prompt_tokens + ?,
                    completion_tokens = completion_tokens + ?, cost = cost + ?, updated_at = ?
                WHERE id = ?
                """,
                (prompt_tokens, completion_tokens, cost, self._clock(), session_id),
            )
            return self._changed(session_id, changed)

    def tree_usage(self, session_id: str) -> TreeUsage:
        """The session's usage plus that of its sub-agents' sessions (and theirs): what a
        conversation cost in all, for a status bar. A front-end keeps it live by calling it
        again on each ``UsageUpdated`` of the session or of a child that
        ``SubagentStarted`` announced. Zero for an unknown session."""
        row = self._db.query_one(
            f"""{SESSION_TREE_SQL}
            SELECT COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,
                   COALESCE(SUM(completion_tokens), 0) AS completion_tokens,
                   COALESCE(SUM(cost), 0.0) AS cost
            FROM sessions JOIN tree ON sessions.id = tree.id""",
            (session_id,),
        )
        assert row is not None, "an aggregate query returns one row"
        return TreeUsage(row["prompt_tokens"], row["completion_tokens"], float(row["cost"]))

    def delete(self, session_id: str) -> None:
        """Delete the session with its descendants, messages and file history."""
        with self._db.transaction():
            doomed = [row["id"] for row in self._db.query(f"{SESSION_TREE_SQL} SELECT id FROM tree", (session_id,))]
            if not doomed:
                raise _not_found(session_id)
            self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            for doomed_id in doomed:
                self._db.on_commit(partial(self._bus.publish, SessionDeleted(doomed_id)))

    def _select(self, where: str, params: tuple[Any, ...] = ()) -> builtins.list[Session]:
        return [Session(**row) for row in self._db.query(f"SELECT {_COLUMNS} FROM sessions {where}", params)]

    def _changed(self, session_id: str, rows_changed: int) -> Session:
        """Called inside the updating transaction: read the new state and announce it."""
        session = self.get(session_id) if rows_changed else None
        if session is None:
            raise _not_found(session_id)
        self._db.on_commit(partial(self._bus.publish, SessionUpdated(session)))
        return session

    def _require_own_message(self, session_id: str, message_id: str) -> None:
        row = self._db.query_one("SELECT session_id FROM messages WHERE id = ?", (message_id,))
        if row is None or row["session_id"] != session_id:
            raise InvalidRecordError(
                f"summary_message_id {message_id!r} is not a message of session {session_id!r}; "
                "store the summary message in that session first"
            )


def _kinds(include_tool: bool) -> str:
    """The SQL condition (after others) keeping conversations only, unless tool sessions too."""
    return "" if include_tool else " AND kind = 'chat'"


def _check_field(name: str, value: Any) -> None:
    allowed = _UPDATABLE.get(name)
    if allowed is None:
        raise InvalidRecordError(
            f"sessions have no updatable field {name!r}; use one of {', '.join(_UPDATABLE)}"
        )
    if not isinstance(value, allowed) or isinstance(value, bool):
        expected = " or ".join("None" if kind is type(None) else kind.__name__ for kind in allowed)
        raise InvalidRecordError(f"session field {name!r} must be {expected}, not {type(value).__name__}")
    if name == "kind" and value not in get_args(SessionKind):
        raise InvalidRecordError(f"unknown session kind {value!r}: use {' or '.join(get_args(SessionKind))}")


def _not_found(session_id: str) -> RecordNotFoundError:
    return RecordNotFoundError(
        f"session {session_id!r} does not exist; create it first or pick one from the session list"
    )
