"""SQLite persistence: sessions, messages and file history, publishing on the bus.

The names below are imported on first use (PEP 562), so importing one submodule, such
as ``app.store.events`` for the event classes, does not load the database code too.
``from app.store import X`` works as with eager imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from app.store.db import Database
    from app.store.errors import InvalidRecordError, RecordNotFoundError, StoreError
    from app.store.events import (
        FileVersionCreated,
        MessageCreated,
        MessageUpdated,
        SessionCreated,
        SessionDeleted,
        SessionUpdated,
        TodosUpdated,
    )
    from app.store.history import HistoryService
    from app.store.messages import MessageStore
    from app.store.models import FileChange, FileVersion, Message, Role, Session, TodoItem
    from app.store.sessions import SessionStore
    from app.store.store import Store, open_store
    from app.store.todos import TodoStore

_HOMES = {
    "app.store.db": ("Database",),
    "app.store.errors": ("InvalidRecordError", "RecordNotFoundError", "StoreError"),
    "app.store.events": (
        "FileVersionCreated", "MessageCreated", "MessageUpdated", "SessionCreated", "SessionDeleted", "SessionUpdated",
        "TodosUpdated",
    ),
    "app.store.history": ("HistoryService",),
    "app.store.messages": ("MessageStore",),
    "app.store.models": ("FileChange", "FileVersion", "Message", "Role", "Session", "TodoItem"),
    "app.store.sessions": ("SessionStore",),
    "app.store.store": ("Store", "open_store"),
    "app.store.todos": ("TodoStore",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "Database",
    "FileChange",
    "FileVersion",
    "FileVersionCreated",
    "HistoryService",
    "InvalidRecordError",
    "Message",
    "MessageCreated",
    "MessageStore",
    "MessageUpdated",
    "RecordNotFoundError",
    "Role",
    "Session",
    "SessionCreated",
    "SessionDeleted",
    "SessionStore",
    "SessionUpdated",
    "Store",
    "StoreError",
    "TodoItem",
    "TodoStore",
    "TodosUpdated",
    "open_store",
]


__getattr__ = lazy_attributes(__name__, _HOME_OF)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
