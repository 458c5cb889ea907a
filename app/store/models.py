"""The records the store hands out: frozen snapshots of rows, safe to pass between threads
and to put in bus events. Timestamps are milliseconds since the Unix epoch. They are
NamedTuples, as rows are."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

Role = Literal["user", "assistant", "tool", "system"]
SessionKind = Literal["chat", "tool"]
TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
TodoPriority = Literal["high", "medium", "low"]


class Session(NamedTuple):
    id: str
    parent_id: str | None
    """Set for the child sessions sub-agents run in; None for a top-level conversation."""
    title: str
    created_at: int
    updated_at: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    summary_message_id: str | None
    """The message holding the compaction summary; history before it is not sent again."""
    model: str | None
    kind: SessionKind = "chat"
    """'chat' for a conversation; 'tool' for the session an `opencode tool` call made for
    itself, which session lists and "the last session" leave out unless asked."""


class TreeUsage(NamedTuple):
    """A session's token counts and cost with those of every sub-agent session below it."""

    prompt_tokens: int
    completion_tokens: int
    cost: float


class Message(NamedTuple):
    id: str
    session_id: str
    role: Role
    parts: list[dict[str, Any]]
    """JSON-compatible dicts; their shape belongs to the agent loop, not to the store."""
    model: str | None
    created_at: int
    updated_at: int
    finished_at: int | None
    undone_at: int | None = None
    """When /undo took back the turn holding it: kept, but no longer sent to the model
    nor listed (app/prompt/turn_undo.py); None while it counts."""

    @property
    def undone(self) -> bool:
        return self.undone_at is not None


class FileVersion(NamedTuple):
    id: int
    """Increases with every version written, whatever the session: the order of writes."""
    session_id: str
    path: str
    """Workspace-relative POSIX path."""
    content: str
    version: str
    """"initial" (the content before the session first changed it), then "v1", "v2", ..."""
    seq: int
    """0 for "initial", n for "vn": the order of versions within one session and path."""
    deleted: bool
    """True when this version removed the file (content is then ""), so an emptied file and
    a deleted one stay distinguishable; on an "initial" version: the file did not exist
    before the session (it created it)."""
    created_at: int
    data: bytes | None = None
    """The exact bytes when the content is not UTF-8 text (an image, a binary): ``content``
    then holds a "(binary file, N bytes)" placeholder for display, and a revert uses these."""
    mode: int | None = None
    """A regular file's permission bits; None when not known (a new file's default)."""
    link: str | None = None
    """A symlink's target when the version is a symlink (``content`` is then "")."""


class FileChange(NamedTuple):
    """One path changed in a session tree: what the sidebar and the ACP diff show."""

    path: str
    session_id: str
    """The session that wrote the latest version (the parent or one of its sub-agents)."""
    initial_content: str
    latest_content: str
    version: str
    deleted: bool
    additions: int
    deletions: int
    initial_data: bytes | None = None
    """The initial version's exact bytes when it was not text (see FileVersion.data)."""
    created: bool = False
    """The file did not exist before the session: its initial version is marked deleted."""
    unchanged: bool = False
    """The latest version is the initial one again (same bytes, same existence): a file
    changed and restored, or created and deleted, which the session left as it found."""
    initial_mode: int | None = None
    """The initial version's permission bits, when known (see FileVersion.mode)."""
    initial_link: str | None = None
    """The initial version's symlink target, when it was a symlink."""


class RecordedChange(NamedTuple):
    """One file changed on disk, for HistoryService.record_changes: its content before
    (stored as "initial" if the session has none yet) and after. ``*_data`` carry the raw
    bytes of non-text content, as in FileVersion.data; ``*_mode`` and ``*_link`` as in
    FileVersion. ``created``: nothing was there before, so an "initial" stored for it is
    marked deleted (absent, not empty)."""

    path: str
    before: str
    after: str
    deleted: bool = False
    before_data: bytes | None = None
    after_data: bytes | None = None
    created: bool = False
    before_mode: int | None = None
    after_mode: int | None = None
    """Permission bits before and after (None: not known, a new file's default)."""
    before_link: str | None = None
    after_link: str | None = None
    """The symlink's target, when the entry was (or becomes) a symlink."""


class TodoItem(NamedTuple):
    """One step of a session's todo list (the agent's plan)."""

    id: str
    content: str
    status: TodoStatus
    priority: TodoPriority
