"""How a bash command runs once judged: in the sandbox (app.sandbox) or outside it, and
whether anyone is asked. The bash tool follows this plan; `opencode permission check
bash` prints it, so the two never disagree.

- A deny the judge sees refuses the command, sandbox or not.
- With a sandbox, a command the judge asks about only because it cannot know what the
  program does (`python -c`, a script, an unknown program) runs sandboxed with what the
  rules say of what can be seen: no question when they allow it, --yes included,
  because the kernel holds the file and network rules. Not while `bash` (or `*`) has a
  deny: the kernel cannot tell which program a command rule names.
- A command that needs more than the sandbox gives (a write the judge sees outside it,
  or the model asking with `sandbox: false`) is asked as "run outside the sandbox?":
  only a person may approve it, each time, never --yes.
- Without a sandbox, the judge alone decides, as it always has; ``sandbox.required``
  refuses bash instead.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from app.config import Config
from app.permission.rules import Action
from app.permission.shell.judge import CommandJudge, Verdict, one_line
from app.sandbox.mechanisms import Availability, detect
from app.sandbox.policy import SandboxPolicy, build_policy
from app.sandbox.runner import session_tmpdir

ENFORCED_KEYS = frozenset({"view", "edit", "write", "delete", "external_directory"})
"""Keys whose deny rules an unknown program cannot break in the sandbox: the policy holds
view, edit, write and delete denies (app.sandbox.policy), and nothing outside the
workspace can be written there (an `external_directory` deny never made an unknown
program a person's question: reading outside is judged only where a command names it)."""
OUTSIDE_SCOPE = "outside the sandbox"
"""The scope of a question about running outside: no answer about a sandboxed run covers it."""


@dataclass(frozen=True)
class BashPlan:
    """``action`` and ``why`` as the verdict's; ``person_only`` why only a person may
    approve it; ``policy`` the sandbox it runs in (None: outside)."""

    action: Action
    why: str
    refusal: str | None = None
    person_only: str | None = None
    policy: SandboxPolicy | None = None
    availability: Availability | None = None
    scope: str = ""

    def sandbox_line(self) -> str:
        """How it runs, for `permission check`: the mechanism and the policy in short."""
        availability, policy = self.availability, self.policy
        if policy is None or availability is None:
            return "sandbox: runs outside it, if a person approves"
        network = "on" if policy.network else "off"
        return (
            f"sandbox: runs under {availability.label} (writes: workspace, $TMPDIR"
            f"{''.join(', ' + policy.shown(w) for w in policy.writable)}; "
            f"{len(policy.carves)} paths carved out; network {network})"
        )


def plan(
    judge: CommandJudge,
    verdict: Verdict,
    command: str,
    config: Config,
    session_id: str,
    *,
    sandbox: bool = True,
    availability: Availability | None = None,
) -> BashPlan:
    """The plan for ``command`` judged ``verdict``. ``sandbox``: False when the model asks
    to run it outside."""
    availability = availability or detect(config.sandbox.mechanism)
    if verdict.refusal is not None:
        return BashPlan("deny", verdict.why, verdict.refusal, availability=availability)
    if availability.mechanism is None:
        if config.sandbox.required:
            return BashPlan(
                "deny",
                "no sandbox and sandbox.required is set",
                f"bash: no sandbox can run it ({availability.why}) and sandbox.required is set, so nothing was run: "
                "ask the user to install bubblewrap or unset sandbox.required",
                availability=availability,
            )
        return BashPlan(verdict.action, verdict.why, person_only=judge.person_only(verdict), availability=availability)
    policy = command_policy(judge, command, config, session_id)
    beyond = "the model asked to run it outside the sandbox" if not sandbox else _beyond(policy, verdict)
    if beyond is not None:
        return BashPlan(
            "ask", beyond, person_only=f"{beyond}: run it outside the sandbox?", availability=availability, scope=OUTSIDE_SCOPE
        )
    if verdict.unknown and _enforced(judge):
        why = f"{verdict.why}; it runs in the sandbox, which holds the deny rules"
        return BashPlan(verdict.ruled, why, policy=policy, availability=availability)
    return BashPlan(verdict.action, verdict.why, person_only=judge.person_only(verdict), policy=policy, availability=availability)


def command_policy(judge: CommandJudge, command: str, config: Config, session_id: str) -> SandboxPolicy:
    """The sandbox's policy for this command: the network is on when ``sandbox.network``
    is, or when a `network` rule allows every part of it."""
    parts = judge.parse(command).parts
    network = bool(parts) and all(judge.evaluate("network", part.text).action == "allow" for part in parts)
    return build_policy(
        config,
        judge.permissions,
        judge.workspace.root.as_posix(),
        judge.agent,
        judge.session_id,
        session_tmpdir(session_id),
        network=network,
        confirm=lambda key, subject, absolute: judge.evaluate(key, subject, absolute).action == "deny",
    )


def _beyond(policy: SandboxPolicy, verdict: Verdict) -> str | None:
    """What the judge sees the command reach beyond the sandbox: a change outside what it
    lets commands write, a read of what it hides (that the rules allow, or it would have
    been refused)."""
    for effect in verdict.effects:
        path = posixpath.normpath(effect.absolute or posixpath.join(policy.workspace, os.path.expanduser(effect.target)))
        if effect.kind in ("write", "delete") and not policy.writable_at(path):
            return f"it would {effect.kind} {one_line(effect.target, 80)}, which the sandbox does not let it {effect.kind}"
        carve = policy.carve_for(path) if effect.kind == "read" else None
        if carve is not None and carve.kind == "hidden":
            return f"it would read {one_line(effect.target, 80)}, which the sandbox hides ({carve.reason})"
    return None


def _enforced(judge: CommandJudge) -> bool:
    """Whether the sandbox holds every deny rule an unknown program could break."""
    denying = judge.permissions.keys_with(judge.agent, judge.session_id, "deny")
    return denying is not None and denying <= ENFORCED_KEYS
