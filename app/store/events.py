"""Events the store publishes on the bus, always after the transaction that made them
committed (a rolled-back change publishes nothing). None is droppable: each one carries
final state a subscriber must not miss."""

from __future__ import annotations

from dataclasses import dataclass

from app.bus import Event
from app.store.models import Message, Session, TodoItem


@dataclass(frozen=True, slots=True)
class SessionCreated(Event):
    session: Session


@dataclass(frozen=True, slots=True)
class SessionUpdated(Event):
    session: Session


@dataclass(frozen=True, slots=True)
class SessionDeleted(Event):
    """Published for the deleted session and for each descendant removed with it."""

    session_id: str


@dataclass(frozen=True, slots=True)
class MessageCreated(Event):
    message: Message


@dataclass(frozen=True, slots=True)
class MessageUpdated(Event):
    message: Message


@dataclass(frozen=True, slots=True)
class FileVersionCreated(Event):
    session_id: str
    path: str
    version: str
    deleted: bool


@dataclass(frozen=True, slots=True)
class TodosUpdated(Event):
    """A session's todo list was replaced: ``todos`` is the whole new list (empty when cleared)."""

    session_id: str
    todos: tuple[TodoItem, ...]
