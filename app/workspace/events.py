"""Events the workspace room publishes on the bus."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.bus import Event

ChangeKind = Literal["added", "modified", "deleted"]


@dataclass(frozen=True, slots=True)
class FileChangedOnDisk(Event):
    """A file some session has read or written was changed by something other than our
    change path (an editor, git, a build). Those sessions' next edit of it will be refused
    until they read it again; front-ends refresh what they show of it.

    ``path`` is workspace-relative POSIX; ``session_ids`` are the sessions that had seen
    the file, sorted."""

    path: str
    change: ChangeKind
    session_ids: tuple[str, ...] = ()
