"""Events the store publishes on the bus, always after the transaction that made them
committed (a rolled-back change publishes nothing). None is droppable: each one carries
final state a subscriber must not miss."""

from __future__ import annotations

from app.bus import Event
from app.store.models import Message, Session, TodoItem


class SessionCreated(Event):
    session: Session


class SessionUpdated(Event):
    session: Session


class SessionDeleted(Event):
    """Published for the deleted session and for each descendant removed with it."""

    session_id: str


class MessageCreated(Event):
    message: Message


class MessageUpdated(Event):
    message: Message


class FileVersionCreated(Event):
    session_id: str
    path: str
    version: str
    deleted: bool


class TodosUpdated(Event):
    """A session's todo list was replaced: ``todos`` is the whole new list (empty when cleared)."""

    session_id: str
    todos: tuple[TodoItem, ...]
