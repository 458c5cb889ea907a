"""Each session's todo list: the plan the agent keeps with the todowrite tool, replaced
whole on every write, kept with the session (and deleted with it), announced on the bus."""

from __future__ import annotations

import json
from functools import partial

from app.bus import Bus
from app.store.db import Database
from app.store.events import TodosUpdated
from app.store.ids import now_ms
from app.store.models import TodoItem
from app.store.sessions import require_session


class TodoStore:
    def __init__(self, db: Database, bus: Bus) -> None:
        self._db = db
        self._bus = bus

    def get(self, session_id: str) -> list[TodoItem]:
        """The session's list, in the agent's order; empty when it never wrote one."""
        row = self._db.query_one("SELECT items FROM todos WHERE session_id = ?", (session_id,))
        return [TodoItem(**item) for item in json.loads(row["items"])] if row else []

    def replace(self, session_id: str, todos: list[TodoItem]) -> None:
        """Store ``todos`` as the session's whole list and publish TodosUpdated once committed."""
        encoded = json.dumps([todo._asdict() for todo in todos], ensure_ascii=False)
        with self._db.transaction():
            require_session(self._db, session_id)
            self._db.execute(
                "INSERT INTO todos (session_id, items, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET items = excluded.items, updated_at = excluded.updated_at",
                (session_id, encoded, now_ms()),
            )
            self._db.on_commit(partial(self._bus.publish, TodosUpdated(session_id, tuple(todos))))
