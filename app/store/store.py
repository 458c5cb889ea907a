"""The store as one object: what the runtime builds once and hands to every service."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from app.bus import Bus
from app.store.db import Database
from app.store.history import HistoryService
from app.store.journal import ChangeJournal
from app.store.messages import MessageStore
from app.store.seen import SeenFiles
from app.store.sessions import SessionStore
from app.store.todos import TodoStore

if TYPE_CHECKING:
    from app.store.turns import TurnStore


class Store:
    """Every store on one database. ``turns`` (what /undo takes back) is built on first
    use: a one-shot command never runs a turn, so it never imports it."""

    def __init__(self, db: Database, bus: Bus) -> None:
        self.db = db
        self.sessions = SessionStore(db, bus)
        self.messages = MessageStore(db, bus)
        self.history = HistoryService(db, bus)
        self.journal = ChangeJournal(db, self.history)
        self.seen = SeenFiles(db)
        self.todos = TodoStore(db, bus)

    @cached_property
    def turns(self) -> TurnStore:
        from app.store.turns import TurnStore

        return TurnStore(self.db)

    def close(self) -> None:
        self.db.close()


def open_store(db_path: Path, bus: Bus) -> Store:
    """Open (creating and migrating) the database at ``db_path`` with every store on it."""
    return Store(Database(db_path), bus)
