"""What a tool asks for and what comes back: the data shared by the service, the bus
events and the front-ends that draw the question (TUI modal, ACP client)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from app.permission.effects import Effect

PreviewKind = Literal["diff", "command", "files", "text"]
ReplyDecision = Literal["allow_once", "allow_session", "deny", "deny_session"]
GrantKey = tuple[str, str, str, str]
"""(tool, scope, effect kind, target): one thing an answer for the session answers (the
request's ``scope``; the kind "" for a request without effects, whose target is its
subject)."""


@dataclass(frozen=True, slots=True)
class PermissionPreview:
    """What the user looks at before answering: a diff, a command, or a file list with
    line counts (a directory delete)."""

    kind: PreviewKind
    text: str = ""
    files: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """One tool call asking to go ahead. `subject` is what the rules match (workspace-relative
    POSIX path, or the bash command); `absolute` is the absolute path for path tools;
    `task` is the description of the task a sub-agent runs (None for a primary agent),
    so the question can say which sub-agent asks and for what; `person_only` is why only a
    person may approve it (set on a question asked although rules or --yes would allow it).

    `effects` are every effect the question covers (each file the call writes or deletes;
    for bash, each part it runs and each file it reaches): an answer for the session
    answers each of them, and a later call only when every one of its effects was answered.
    Empty: the call is its subject. `scope`: what a later call must share for an answer to
    cover it, besides its effects: the command, for bash (its parts run in its order, after
    its `cd`s, so an answer never holds for a part in another command); the tool that
    reads, for a read outside the workspace (a listing allowed is not a search of every
    file); the prompt, for a task; "" when each effect stands alone (the file tools)."""

    session_id: str
    tool: str
    subject: str
    agent: str
    title: str
    preview: PermissionPreview
    absolute: str | None = None
    task: str | None = None
    person_only: str | None = None
    effects: tuple[Effect, ...] = ()
    scope: str = ""

    def session_covers(self) -> tuple[str, str]:
        """(what an answer for the session covers, what still asks), in words for the
        person answering: "what this patch does to a.txt, b.txt", "other paths and other
        changes". Every front-end says it the same way."""
        paths = list(dict.fromkeys(effect.target for effect in self.effects if effect.kind != "execute"))
        if self.tool == "bash":
            return "this exact command" + (f" (with what it does to {_listed(paths)})" if paths else ""), "other commands"
        if self.tool == "fetch":
            return "this exact URL", "other URLs"
        if self.tool == "external_directory" and self.scope:  # a reading tool's path outside
            return f"{self.scope} reading {self.subject}", "other paths and other tools"
        if paths and (paths != [self.subject] or self.tool == "patch"):  # patch also deletes and moves
            return f"what this {self.tool} does to {_listed(paths)}", "other paths and other changes"
        if self.absolute is not None or self.preview.kind in ("diff", "files"):  # a path
            return f"{self.tool} on {self.subject}", "other files"
        return f"{self.tool} with these exact arguments", "other arguments"

    def grants(self) -> tuple[GrantKey, ...]:
        """What an answer for the session to this question answers, one key per effect."""
        if not self.effects:
            return ((self.tool, self.scope, "", self.subject),)
        return tuple(dict.fromkeys((self.tool, self.scope, e.kind, e.target) for e in self.effects))


def _listed(paths: list[str]) -> str:
    """The first three paths, and how many more."""
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


@dataclass(frozen=True, slots=True)
class PermissionReply:
    """The answer. `message` is the user's words when a person answered, otherwise the
    explanation; `automatic` is True when no person answered (a rule, the headless policy,
    an earlier answer for this session, a cancelled turn)."""

    decision: ReplyDecision
    message: str | None = None
    automatic: bool = False

    @property
    def allowed(self) -> bool:
        return self.decision in ("allow_once", "allow_session")
