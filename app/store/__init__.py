"""SQLite persistence: sessions, messages and file history, publishing on the bus."""

from app.store.db import Database
from app.store.errors import InvalidRecordError, RecordNotFoundError, StoreError
from app.store.events import (
    FileVersionCreated,
    MessageCreated,
    MessageUpdated,
    SessionCreated,
    SessionDeleted,
    SessionUpdated,
)
from app.store.history import HistoryService
from app.store.messages import MessageStore
from app.store.models import FileChange, FileVersion, Message, Role, Session
from app.store.sessions import SessionStore
from app.store.store import Store, open_store

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
    "open_store",
]
