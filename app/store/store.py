"""The store as one object: what the runtime builds once and hands to every service."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.bus import Bus
from app.store.db import Database
from app.store.history import HistoryService
from app.store.journal import ChangeJournal
from app.store.messages import MessageStore
from app.store.seen import SeenFiles
from app.store.sessions import SessionStore
from app.store.todos import TodoStore
from app.store.turns import TurnStore


@dataclass(frozen=True)
class Store:
    db: Database
    sessions: SessionStore
    messages: MessageStore
    history: HistoryService
    journal: ChangeJournal
    seen: SeenFiles
    turns: TurnStore
    todos: TodoStore

    def close(self) -> None:
        self.db.close()


def open_store(db_path: Path, bus: Bus) -> Store:
    """Open (creating and migrating) the database at ``db_path`` with every store on it."""
    db = Database(db_path)
    history = HistoryService(db, bus)
    return Store(
        db=db,
        sessions=SessionStore(db, bus),
        messages=MessageStore(db, bus),
        history=history,
        journal=ChangeJournal(db, history),
        seen=SeenFiles(db),
        turns=TurnStore(db),
        todos=TodoStore(db, bus),
    )
