"""How the bash tool judges a command before running it, apart from the running.

One verdict for the whole command: banned programs and denied parts refuse it; it runs
unasked only when it parsed and every part, and every path outside the workspace it
names, is allowed; anything else is one question. The bash tool asks that question;
`opencode permission check bash COMMAND` prints the same verdict, so the two never
disagree about a compound command (`"git *": "allow"` matches `git log; rm -rf src`
as a whole, which decides nothing).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from app.bus import Bus
from app.config import Config
from app.errors import ToolError
from app.permission import Decision, PermissionService
from app.permission.explain import check_agent
from app.permission.rules import STRICTNESS, Action
from app.tools.shell_parse import ParsedCommand, parse_command
from app.workspace import Workspace

_UNFOLLOWED_CD = Decision("ask", "a directory change that cannot be followed", None, "default")
_CD_OUT = Decision("ask", "a directory change out of the workspace", None, "default")
_COMPUTED_PATH = Decision("ask", "known only when the command runs", None, "default")
# Devices a command may name without touching anything outside the workspace.
_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
)


@dataclass(frozen=True)
class Verdict:
    """``why`` is one line for a person; ``refusal`` the tool's error when denied."""

    action: Action
    why: str
    refusal: str | None = None


@dataclass(frozen=True)
class CommandJudge:
    """What judging needs: the rules (with a session's earlier answers when there is a
    session), the workspace the paths are judged against, and the banned programs."""

    permissions: PermissionService
    workspace: Workspace
    agent: str
    banned: list[str]
    session_id: str | None = None

    def verdict(self, command: str) -> Verdict:
        parsed = parse_command(command)
        if banned := banned_programs(parsed, self.banned):
            names = ", ".join(banned)
            return Verdict(
                "deny",
                f"{names} is banned (tools.bash.bannedCommands)",
                f"bash: {names} is banned (tools.bash.bannedCommands), so nothing was run: "
                "do this another way, or ask the user to change that list in .opencode.json",
            )
        decisions = {
            part.text: self.permissions.evaluate("bash", part.text, self.agent, session_id=self.session_id)
            for part in parsed.parts
        }
        for part, decision in decisions.items():
            if decision.action == "deny":
                return Verdict(
                    "deny",
                    f'part "{one_line(part)}": {decision.reason}',
                    f'bash: the permission rules forbid "{one_line(part)}" ({decision.reason}), '
                    "so nothing was run: leave that part out",
                )
        outside = self.outside_paths(parsed)
        for path, decision in outside.items():
            if decision.action == "deny":
                return Verdict(
                    "deny",
                    f"{path}, outside the workspace: external_directory, {decision.reason}",
                    f"bash: the permission rules forbid touching {path}, outside the workspace "
                    f"(external_directory, {decision.reason}), so nothing was run: leave that path out",
                )
        if not parsed.complete:
            return Verdict("ask", "the command could not be parsed for certain")
        if not decisions:
            return Verdict("ask", "no command to judge")
        for subject, decision in {**decisions, **outside}.items():
            if decision.action != "allow":
                return Verdict("ask", f'"{one_line(subject)}": {decision.reason}')
        reasons = sorted({decision.reason for decision in decisions.values()})
        return Verdict("allow", f"every part allowed: {'; '.join(reasons)}")

    def outside_paths(self, parsed: ParsedCommand) -> dict[str, Decision]:
        """The `external_directory` decision for each path outside the workspace the
        command names (a file command's operand, a redirection target, where a `cd`
        goes), keyed by the absolute path. A `cd` out of the workspace, or one whose
        target cannot be known, is at least asked about: the relative paths after it
        are judged from the root. So is a path computed at run time (`> $HOME/x`)."""
        found: dict[str, Decision] = {}
        for part in parsed.parts:
            if part.directory == "":
                found[f"(where {one_line(part.text, 60)} goes)"] = _UNFOLLOWED_CD
            if "" in part.paths:
                found[f"the path in {one_line(part.text, 60)}"] = _COMPUTED_PATH
            for path in (*filter(None, part.paths), *([part.directory] if part.directory else [])):
                subject = self._outside_subject(path)
                if subject is None:
                    continue
                decision = self.permissions.evaluate(
                    "external_directory", subject, self.agent, absolute=subject, session_id=self.session_id
                )
                if path == part.directory and decision.action == "allow":
                    decision = _CD_OUT
                if subject not in found or STRICTNESS[decision.action] > STRICTNESS[found[subject].action]:
                    found[subject] = decision
        return found

    def _outside_subject(self, path: str) -> str | None:
        """``path`` as the absolute subject `external_directory` rules match, or None
        when it is inside the workspace (symlinks followed) or a harmless device."""
        root = self.workspace.root.as_posix()
        absolute = posixpath.normpath(posixpath.join(root, os.path.expanduser(path)))
        if absolute in _HARMLESS_DEVICES or absolute.startswith("/dev/fd/"):
            return None
        try:
            subject = self.workspace.subject(path)
        except ToolError:  # a symlink loop, a folder that cannot be searched: judge it as written
            return absolute
        return subject if subject.startswith("/") else None


def explain_command(config: Config, workspace_root: Path, command: str, agent: str) -> str:
    """`opencode permission check bash COMMAND`: the bash tool's verdict, with no session's
    earlier answers, as `explain` prints a rule's: the action padded to 5, then why."""
    check_agent(agent)
    judge = CommandJudge(
        PermissionService(config, Bus()), Workspace(workspace_root), agent, config.tools.bash.banned_commands
    )
    verdict = judge.verdict(command)
    return f"{verdict.action:<5} ({verdict.why})"


def banned_programs(parsed: ParsedCommand, banned: list[str]) -> list[str]:
    """The banned names any part of the command may run, in order, without repeats."""
    banned_set = set(banned)
    found = [name for part in parsed.parts for name in part.programs if name in banned_set]
    return list(dict.fromkeys(found))


def one_line(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
