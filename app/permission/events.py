"""Bus events of the permission service. The question and its answer may not be
dropped: a lost question hangs the turn, a lost answer leaves a modal open."""

from __future__ import annotations

from dataclasses import dataclass

from app.bus import Event
from app.permission.request import PermissionReply, PermissionRequest


@dataclass(frozen=True, slots=True)
class PermissionRequested(Event):
    """A call needs the user's answer; reply with `PermissionService.reply(request_id, ...)`."""

    request_id: str
    request: PermissionRequest


@dataclass(frozen=True, slots=True)
class PermissionResolved(Event):
    """A request was answered (by the user, a sibling's session answer, or cancellation)."""

    request_id: str
    reply: PermissionReply


@dataclass(frozen=True, slots=True)
class PermissionGranted(Event):
    """A call was allowed with nobody asked (a rule, an answer earlier in the session,
    --yes): it runs now, which a front-end may show (ACP's in_progress). Nothing waits on it."""

    session_id: str
    tool: str
    subject: str


@dataclass(frozen=True, slots=True)
class ApprovalMissing(Event):
    """A call that needed a person's approval was refused because nobody could give it:
    a headless run without --yes, or a question --yes does not cover. The call's own
    error tells the model; this tells a front-end that the turn did less than asked
    (`opencode -p` then exits 3)."""

    session_id: str
    tool: str
    subject: str
