"""Conversation messages. ``parts`` is stored as JSON text: the agent loop owns its shape
(text, tool calls, tool results...), the store only keeps it intact and in order."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Sequence
from functools import partial
from typing import Any, get_args

from app.bus import Bus
from app.store.db import Database
from app.store.errors import InvalidRecordError, RecordNotFoundError
from app.store.events import MessageCreated, MessageUpdated
from app.store.ids import new_id, now_ms
from app.store.models import Message, Role
from app.store.sessions import require_session

ROLES: tuple[str, ...] = get_args(Role)

_COLUMNS = "id, session_id, role, parts, model, created_at, updated_at, finished_at, undone_at"


class MessageStore:
    def __init__(self, db: Database, bus: Bus) -> None:
        self._db = db
        self._bus = bus

    def add(self, session_id: str, role: Role, parts: list[dict[str, Any]], model: str | None = None) -> Message:
        if role not in ROLES:
            raise InvalidRecordError(f"message role {role!r} is not one of {', '.join(ROLES)}")
        encoded = _encode_parts(parts)
        now = now_ms()
        with self._db.transaction():
            require_session(self._db, session_id)
            message_id = new_id()
            self._db.execute(
                f"INSERT INTO messages ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                (message_id, session_id, role, encoded, model, now, now),
            )
            return self._announce(message_id, MessageCreated)

    def update(self, message_id: str, parts: list[dict[str, Any]], finished: bool = False) -> Message:
        """Replace the parts (streaming rewrites them as they grow). ``finished`` stamps
        finished_at once; a later update keeps the first stamp."""
        encoded = _encode_parts(parts)
        now = now_ms()
        with self._db.transaction():
            self._db.execute(
                "UPDATE messages SET parts = ?, updated_at = ?, finished_at = COALESCE(finished_at, ?) WHERE id = ?",
                (encoded, now, now if finished else None, message_id),
            )
            return self._announce(message_id, MessageUpdated)

    def get(self, message_id: str) -> Message | None:
        row = self._db.query_one(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,))
        return _message(row) if row else None

    def list(self, session_id: str, *, include_undone: bool = False) -> list[Message]:
        """The session's messages in the order they were added; those of undone turns
        only with ``include_undone``."""
        live = "" if include_undone else " AND undone_at IS NULL"
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM messages WHERE session_id = ?{live} ORDER BY created_at, rowid", (session_id,)
        )
        return [_message(row) for row in rows]

    def count(self, session_id: str) -> int:
        """How many messages ``list`` would return: what a page's position counts in."""
        row = self._db.query_one(
            "SELECT COUNT(*) AS n FROM messages WHERE session_id = ? AND undone_at IS NULL", (session_id,)
        )
        return int(row["n"]) if row else 0

    def page(self, session_id: str, start: int, stop: int) -> builtins.list[Message]:
        """The messages at positions ``start`` to ``stop`` (excluded) of ``list``: what a
        transcript reads as it scrolls, without reading the whole session."""
        start = max(start, 0)
        if stop <= start:
            return []
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND undone_at IS NULL"
            " ORDER BY created_at, rowid LIMIT ? OFFSET ?",
            (session_id, stop - start, start),
        )
        return [_message(row) for row in rows]

    def find(self, session_id: str, text: str) -> builtins.list[int]:
        """The positions (as in ``list``) of the messages whose text parts (a prompt, a
        reply, the model's thinking) or tool output hold ``text``, case ignored, in order."""
        needle = text.casefold()
        if not needle:
            return []
        # SQLite's LIKE ignores the case of ASCII letters only, and JSON escapes quotes,
        # backslashes and control characters: such text is checked on every message.
        narrowed = needle.isascii() and needle.isprintable() and not any(c in needle for c in '"\\')
        pattern = "%" + needle.replace("^", "^^").replace("%", "^%").replace("_", "^_") + "%"
        rows = self._db.query(
            "SELECT position, parts FROM (SELECT parts, ROW_NUMBER() OVER (ORDER BY created_at, rowid) - 1"
            " AS position FROM messages WHERE session_id = ? AND undone_at IS NULL)"
            " WHERE parts LIKE ? ESCAPE '^' ORDER BY position",
            (session_id, pattern if narrowed else "%"),
        )
        return [
            int(row["position"])
            for row in rows
            if any(needle in shown.casefold() for shown in searched_texts(json.loads(row["parts"])))
        ]

    def prompts(self, session_id: str) -> builtins.list[str]:
        """The text of every prompt of the session, oldest first (the prompt's history)."""
        rows = self._db.query(
            "SELECT parts FROM messages WHERE session_id = ? AND undone_at IS NULL AND role = 'user'"
            " ORDER BY created_at, rowid",
            (session_id,),
        )
        return [
            str(part["text"])
            for row in rows
            for part in json.loads(row["parts"])
            if part.get("type") == "text" and "text" in part
        ]

    def set_undone(self, message_ids: Sequence[str], undone: bool) -> None:
        """Mark messages as taken back by an undo (``undone``) or brought back by a redo;
        each publishes MessageUpdated. Nothing is deleted."""
        stamp = now_ms() if undone else None
        with self._db.transaction():
            for message_id in message_ids:
                self._db.execute("UPDATE messages SET undone_at = ? WHERE id = ?", (stamp, message_id))
                self._announce(message_id, MessageUpdated)

    def _announce(self, message_id: str, event: type[MessageCreated | MessageUpdated]) -> Message:
        """Called inside the writing transaction: read back what was stored and publish it on commit."""
        message = self.get(message_id)
        if message is None:
            raise RecordNotFoundError(
                f"message {message_id!r} does not exist; add it with MessageStore.add() first"
            )
        self._db.on_commit(partial(self._bus.publish, event(message)))
        return message


def part_texts(parts: list[dict[str, Any]]) -> list[str]:
    """The text a person reads in a message: its text and reasoning parts."""
    return [str(part["text"]) for part in parts if part.get("type") in ("text", "reasoning") and part.get("text")]


def searched_texts(parts: list[dict[str, Any]]) -> list[str]:
    """What find looks in: the text a person reads, and the output of tool calls."""
    outputs = [str(part["output"]) for part in parts if part.get("type") == "tool_result" and part.get("output")]
    return part_texts(parts) + outputs


def _encode_parts(parts: list[dict[str, Any]]) -> str:
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise InvalidRecordError(f"message parts must be a list of dicts, not {type(parts).__name__} {parts!r:.60}")
    try:
        return json.dumps(parts, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidRecordError(f"message parts must be JSON-compatible: {err}") from None


def _message(row: sqlite3.Row) -> Message:
    return Message(**{**row, "parts": json.loads(row["parts"])})
