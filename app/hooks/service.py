"""The hooks of one workspace: which run (the user's always, the project's once trusted),
which an event selects, and what their replies add up to (``Outcome``).

Nothing is read until the runtime first asks for its hooks, and an event no hook is
declared for costs one dictionary lookup: hooks add no time when none are configured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.bus import Bus, Event
from app.hooks.config import Hook, load_hooks
from app.hooks.events import CONTEXT_EVENTS, matches, payload
from app.hooks.runner import HookReply, run_hooks
from app.hooks.trust import TrustStore, trust_file

TRUST_FLAG = "--trust-project-hooks"


@dataclass(frozen=True, slots=True)
class HookNotice(Event):
    """A line for the user about hooks in ``session_id``: a hook's output or failure at an
    event that has no tool call to show it under (a prompt, a stop), or hooks skipped."""

    session_id: str
    line: str


class Outcome:
    """What the replies of one event's hooks add up to."""

    def __init__(self, event: str, replies: Sequence[HookReply]) -> None:
        self.event = event
        self.replies = list(replies)

    @property
    def blocked(self) -> str | None:
        """The reasons of the hooks that block (exit 2, ``decision: block``), else None."""
        reasons = [reply.reason for reply in self.replies if reply.blocks]
        return "\n".join(reasons) if reasons else None

    @property
    def stopped(self) -> str | None:
        """Why a hook answered ``"continue": false`` (its ``stopReason``), else None."""
        for reply in self.replies:
            data = reply.data or {}
            if data.get("continue") is False:
                return str(data.get("stopReason") or f"the hook {reply.hook.command!r} stopped the agent")
        return None

    @property
    def permission(self) -> tuple[str, str] | None:
        """(decision, reason) of a PreToolUse hook: the strictest of deny, ask, allow
        (``hookSpecificOutput.permissionDecision``, or the older ``decision: approve``)."""
        found: list[tuple[str, str]] = []
        for reply in self.replies:
            decision = reply.specific("permissionDecision")
            if decision is None and (reply.data or {}).get("decision") == "approve":
                decision = "allow"
            if decision in ("allow", "deny", "ask"):
                reason = reply.specific("permissionDecisionReason") or (reply.data or {}).get("reason") or ""
                found.append((decision, str(reason)))
        for wanted in ("deny", "ask", "allow"):
            for decision, reason in found:
                if decision == wanted:
                    return decision, reason
        return None

    @property
    def context(self) -> str:
        """What the hooks add to the model's context: ``additionalContext``, and for the
        events whose plain stdout counts as context (UserPromptSubmit, SessionStart) that."""
        pieces = []
        for reply in self.replies:
            if reply.exit_code != 0:
                continue
            extra = reply.specific("additionalContext")
            if extra:
                pieces.append(str(extra))
            elif reply.data is None and self.event in CONTEXT_EVENTS and reply.stdout.strip():
                pieces.append(reply.stdout.strip())
        return "\n\n".join(pieces)

    @property
    def shown(self) -> list[str]:
        """Lines for the user: each failure, and the output of a hook that exited 0 (when
        it is not context, and not JSON asking ``suppressOutput``)."""
        lines = []
        for reply in self.replies:
            if reply.failure is not None:
                lines.append(reply.failure)
            elif reply.exit_code == 0 and reply.data is None and self.event not in CONTEXT_EVENTS:
                if reply.stdout.strip():
                    lines.append(f"{reply.hook.event} hook: {reply.stdout.strip()}")
            elif reply.data is not None and not reply.data.get("suppressOutput") and reply.data.get("systemMessage"):
                lines.append(str(reply.data["systemMessage"]))
        return lines


class HookService:
    """Built on first use by the runtime. ``trust_project``: run the project's hooks
    without asking (``--trust-project-hooks``)."""

    def __init__(self, root: Path, env: Mapping[str, str], bus: Bus, *, trust_project: bool = False) -> None:
        self.root = root
        self.bus = bus
        found = load_hooks(root, env)
        self.notices = found.notices
        self.user_hooks = [hook for hook in found.hooks if not hook.project]
        self.project_hooks = [hook for hook in found.hooks if hook.project]
        self.trust_store = TrustStore(trust_file(env))
        self.project_trusted = (
            trust_project or not self.project_hooks or self.trust_store.trusted(root, self.project_hooks)
        )
        self._by_event: dict[str, list[Hook]] = {}
        self._index()

    def _index(self) -> None:
        self._by_event = {}
        for hook in self.active():
            self._by_event.setdefault(hook.event, []).append(hook)

    def active(self) -> list[Hook]:
        """The hooks that run: the user's, and the project's once trusted."""
        return [*self.user_hooks, *(self.project_hooks if self.project_trusted else ())]

    @property
    def awaiting_trust(self) -> bool:
        """The project declares hooks the user has not trusted (in this exact form)."""
        return not self.project_trusted

    def trust(self) -> None:
        """The user trusts the project's hooks as they are now: remembered, and they run."""
        self.trust_store.trust(self.root, self.project_hooks)
        self.project_trusted = True
        self._index()

    def skipped_line(self) -> str:
        """The one line a front-end that cannot ask says about untrusted project hooks."""
        files = ", ".join(dict.fromkeys(hook.source for hook in self.project_hooks))
        count = len(self.project_hooks)
        return (
            f"{count} project hook{'s' if count != 1 else ''} ({files}) not run: this workspace's hooks are not "
            f"trusted; trust them in the TUI or run with {TRUST_FLAG}"
        )

    def trust_question(self) -> str:
        """The question a front-end asks before the project's hooks may run: every command
        they would run, with its event, matcher and file."""
        lines = [
            "This workspace declares hooks: commands opencode would run on this machine, outside the sandbox,",
            "at agent events. Run them from now on (until a hook file changes)?",
            "",
        ]
        for hook in self.project_hooks:
            selector = f" [{hook.matcher}]" if hook.matcher else ""
            lines.append(f"{hook.event}{selector}  ({hook.source})")
            lines.append(f"    {hook.command}")
        lines += ["", "No: they are skipped in this run, and the question comes back next time."]
        return "\n".join(lines)

    def listing(self) -> str:
        """Every hook, with its event, matcher, command and file, for ``/hooks``."""
        if not self.user_hooks and not self.project_hooks:
            return "No hooks: declare them under \"hooks\" in .opencode.json or .claude/settings.json (docs/hooks.md)"
        lines = []
        for hook in [*self.user_hooks, *self.project_hooks]:
            state = "" if not hook.project or self.project_trusted else "  (not trusted: skipped)"
            selector = f" [{hook.matcher}]" if hook.matcher else ""
            lines.append(f"{hook.event}{selector}: {hook.command}  ({hook.source}){state}")
        return "\n".join(lines)

    def declared(self, event: str) -> bool:
        return event in self._by_event

    def selected(self, event: str, names: tuple[str, ...] = ()) -> list[Hook]:
        """The hooks of ``event`` whose matcher selects ``names`` (a tool's, a source's)."""
        hooks = self._by_event.get(event)
        if not hooks:
            return []
        return [hook for hook in hooks if not names or matches(hook.matcher, names)]

    async def run(self, event: str, *, session_id: str, names: tuple[str, ...] = (), **fields: Any) -> Outcome:
        """Run the hooks ``event`` selects with its JSON; their Outcome (empty when none)."""
        hooks = self.selected(event, names)
        if not hooks:
            return Outcome(event, [])
        data = payload(event, session_id=session_id, cwd=self.root, **fields)
        return Outcome(event, await run_hooks(hooks, data, self.root))

    def announce(self, session_id: str, lines: Sequence[str]) -> None:
        for line in lines:
            self.bus.publish(HookNotice(session_id, line))
