"""Errors the store raises on purpose. Each message is one line: what is wrong, what to do."""

from app.core.errors import OpencodeError


class StoreError(OpencodeError):
    """The database file cannot be opened, is not an opencode database, or is too new."""


class RecordNotFoundError(StoreError, LookupError):
    """A session or message id names no stored record."""


class InvalidRecordError(StoreError, ValueError):
    """A caller passed values the store refuses (unknown role, bad path, version out of order)."""
