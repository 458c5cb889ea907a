"""`opencode permission check TOOL SUBJECT`: which action a call would get, and why.

Lexical only: the CLI answers for paths that need not exist, so nothing touches the disk
(at run time the workspace's `subject()` also resolves symlinks).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import get_args

from app.bus import Bus
from app.config import AgentName, Config
from app.core.errors import ConfigError
from app.permission.effects import Effect, EffectKind, Judgement, protected_roots
from app.permission.rules import PATH_TOOLS, READ_ONLY_TOOLS, STRICTNESS, AgentRules, Decision
from app.permission.service import PermissionService


def normalize_subject(path: str) -> str:
    """`./tmp/../main.go` -> `main.go`: drop `.` and empty parts, fold `..` and `//`."""
    normal = posixpath.normpath(path)
    # POSIX lets normpath keep exactly two leading slashes; for us they mean one.
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def _path_subject(workspace_root: Path, path: str) -> tuple[str, str]:
    """(subject, absolute): workspace-relative when inside the root, else the absolute path.
    A leading `~` is the home directory, as the tools read it."""
    path = os.path.expanduser(path)
    root = normalize_subject(workspace_root.as_posix())
    absolute = normalize_subject(path if path.startswith("/") else f"{root}/{path}")
    if absolute == root:
        return ".", absolute
    if absolute.startswith(root.rstrip("/") + "/"):
        return absolute[len(root.rstrip("/")) + 1 :], absolute
    return absolute, absolute


def check_agent(agent: str, known: Sequence[str] | None = None) -> None:
    """Refuse an agent name no rules can be looked up for: one of ``known`` (the
    workspace's agents, agent files' included), else of the configurable agents."""
    agents = tuple(known) if known is not None else get_args(AgentName)
    if agent not in agents:
        raise ConfigError(f'unknown agent "{agent}": use one of {", ".join(agents)}')


# The effect a change tool's path has (a patch may also delete, which its sections say).
CHANGE_EFFECTS: dict[str, EffectKind] = {
    "write": "write",
    "edit": "write",
    "multiedit": "write",
    "patch": "write",
    "delete": "delete",
}


def explain(
    config: Config,
    workspace_root: Path,
    tool: str,
    subject: str,
    agent: str = "coder",
    agents: Mapping[str, AgentRules] | None = None,
    known: Sequence[str] | None = None,
) -> str:
    """The lines to print: first the verdict, e.g. `deny  (delete rule "*.go")` (the action
    padded to 5, a space, the reason); for a tool that changes files, then one line per
    effect with the rule that decided it, e.g. `  write secrets/key.txt: deny (edit rule "secrets/*")`.
    ``agents``: what agent definitions add to the rules (plan mode, agent files), and
    ``known`` the agent names there are, as the runtime's agent catalog gives them."""
    check_agent(agent, known)
    absolute = None
    if tool in PATH_TOOLS:
        subject, absolute = _path_subject(workspace_root, subject)
    service = PermissionService(config, Bus(), agents=agents)

    def decide(key: str) -> Decision:
        return service.evaluate(key, subject, agent, absolute)

    read = None
    if tool in READ_ONLY_TOOLS and tool in PATH_TOOLS:
        # A read is judged with the tool's key and the `view` key, which judges every read.
        read = service.judge(tool, [Effect("read", subject, absolute)], agent)[0]
        effect_line = f"\n  {read.line()}"
    if tool in PATH_TOOLS and tool != "external_directory" and subject.startswith("/"):
        # As at run time: a path outside the workspace is never changed, and a read there
        # must also pass `external_directory` (the stricter of the two answers decides).
        if read is None:
            return f"{'deny':<5} (outside the workspace: {tool} changes files only inside it)"
        outside = decide("external_directory")
        if STRICTNESS[outside.action] > STRICTNESS[read.action]:
            reason = outside.reason if outside.level == "default" else f"external_directory, {outside.reason}"
            return f"{outside.action:<5} ({reason}){effect_line}"
    if read is not None:
        return f"{read.action:<5} ({_read_reason(tool, read)}){effect_line}"
    if tool in CHANGE_EFFECTS:
        protected = protected_roots(config.data.directory, normalize_subject(workspace_root.as_posix()))
        effect = Effect(CHANGE_EFFECTS[tool], subject, absolute)
        judgement = service.judge(tool, [effect], agent, protected=protected)[0]
        return f"{judgement.action:<5} ({judgement.reason})\n  {judgement.line()}"
    decision = decide(tool)
    return f"{decision.action:<5} ({decision.reason})"


def _read_reason(tool: str, judgement: Judgement) -> str:
    """The rule as the tool's own answers name it (`global rule "*.env"`), or with the key
    named when the `view` rules decided a read by another tool (`view rule "secrets/*"`)."""
    return judgement.decision.reason if judgement.key == tool else judgement.reason
