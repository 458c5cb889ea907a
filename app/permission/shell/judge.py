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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.bus import Bus
from app.config import Config
from app.core.errors import ToolError
from app.permission import Decision, PermissionService
from app.permission.effects import GROUP_KEYS, OWN_CONFIG, Effect, Judgement, protected_roots
from app.permission.explain import check_agent
from app.permission.rules import STRICTNESS, Action, AgentRules
from app.permission.shell.changed_files import (
    HARMLESS_DEVICES,
    UNKNOWN_PATH,
    FileJudge,
    as_the_shell_sees,
    command_bases,
)
from app.permission.shell.effects import Touch
from app.permission.shell.git_dirs import may_make_git_dir, runs_git, unprotected_git_dir
from app.permission.shell.opaque_programs import command_lines, named_paths
from app.permission.shell.parse import ParsedCommand, SimpleCommand, parse_command
from app.permission.shell.scripts import with_files_run
from app.workspace import Workspace

_UNFOLLOWED_CD = Decision("ask", "a directory change that cannot be followed", None, "default")
_CD_OUT = Decision("ask", "a directory change out of the workspace", None, "default")
_COMPUTED_PATH = Decision("ask", "known only when the command runs", None, "default")
UNKNOWN_GUARDS = ("bash", "view", "edit", "delete")
"""Keys whose deny an unknown program may reach (it may run, read, write or delete
anything): it asks a person, whom --yes does not stand for."""


@dataclass(frozen=True)
class Verdict:
    """``why`` is one line for a person; ``refusal`` the tool's error when denied;
    ``unknown``: an "ask" because what the command runs cannot be known; ``effects``: what
    a question about the command covers (each part it runs, each file and outside path
    it reaches), when it is asked."""

    action: Action
    why: str
    refusal: str | None = None
    unknown: bool = False
    effects: tuple[Effect, ...] = ()
    ruled: Action = "ask"
    """For an unknown command, what the rules give what can be seen of it (its parts, the
    paths it names): a sandbox that enforces the deny rules needs no more (app.permission.shell.sandbox_plan)."""


@dataclass(frozen=True)
class CommandJudge:
    """What judging needs: the rules (with the denies a sub-agent's session inherits, when
    there is a session; answers given for the session answer the question, not a part),
    the workspace the paths are judged against, and the banned programs."""

    permissions: PermissionService
    workspace: Workspace
    agent: str
    banned: list[str]
    session_id: str | None = None
    protected: tuple[str, ...] = OWN_CONFIG
    """Paths the agent never changes unless a rule names them (app.permission.effects)."""
    changed_by_agent: Callable[[str], bool] | None = None
    """Whether a session changed a workspace-relative path (history): code the agent wrote."""

    def parse(self, command: str) -> ParsedCommand:
        """The command's parts, with those of the scripts and programs it runs from files
        (those the `view` rules let be read)."""
        return with_files_run(parse_command(command), self.workspace, self._readable)

    def _readable(self, absolute: str) -> bool:
        """Whether no `view` rule denies reading the file at ``absolute``."""
        ruled = self.permissions.keys_with(self.agent, self.session_id, "deny")
        if ruled is not None and GROUP_KEYS["read"] not in ruled:
            return True
        try:
            subject = self.workspace.subject(absolute)
        except ToolError:
            return False
        return self.evaluate(GROUP_KEYS["read"], subject, absolute).action != "deny"

    def verdict(self, command: str) -> Verdict:
        parsed = self.parse(command)
        if banned := banned_programs(parsed, self.banned):
            names = ", ".join(banned)
            return Verdict(
                "deny",
                f"{names} is banned (tools.bash.bannedCommands)",
                f"bash: {names} is banned (tools.bash.bannedCommands), so nothing was run: "
                "do this another way, or ask the user to change that list in .opencode.json",
            )
        judged = {part.text: self._part_decision(part) for part in parsed.parts}
        decisions = {text: decision for text, (decision, _) in judged.items()}
        for part in parsed.parts:
            decision, subject = judged[part.text]
            if decision.action == "deny":
                shown = f'"{one_line(part.text)}"'
                if subject != part.text:
                    shown += f' (run as "{one_line(part.normal)}")'
                return Verdict(
                    "deny",
                    f"part {shown}: {decision.reason}",
                    f"bash: the permission rules forbid {shown} ({decision.reason}), "
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
        files = self._file_judge().judge(parsed)
        for judgement in files:
            if judgement.action == "deny":
                return Verdict(
                    "deny",
                    f"{judgement.effect}: {judgement.reason}",
                    f"bash: {judgement.effect} is forbidden ({judgement.reason}), so nothing was run: "
                    "leave that out",
                )
        effects = (
            *(Effect("execute", part.text) for part in parsed.parts),
            *(judgement.effect for judgement in files),
            *(Effect("read", path) for path in outside),
        )
        return replace(self._asked_or_allowed(parsed, decisions, outside, files), effects=effects)

    def _asked_or_allowed(
        self, parsed: ParsedCommand, decisions: dict[str, Decision], outside: dict[str, Decision], files: list[Judgement]
    ) -> Verdict:
        """The verdict of a command nothing in it denies: allow when every part, outside
        path and file is allowed, else ask (saying about what)."""
        doubt = self._doubt(parsed, files)
        if doubt is not None:
            known = [j for j in files if j.decision is not UNKNOWN_PATH]
            seen = {key: d for key, d in outside.items() if d not in (_COMPUTED_PATH, _UNFOLLOWED_CD)}
            ruled = self._ruled_verdict(decisions, seen, known).action if parsed.complete else "ask"
            return Verdict("ask", doubt, unknown=True, ruled=ruled)
        return self._ruled_verdict(decisions, outside, files)

    def _doubt(self, parsed: ParsedCommand, files: list[Judgement]) -> str | None:
        """Why what the command runs or reaches cannot be known, or None."""
        if not parsed.complete:
            return "the command could not be parsed for certain"
        if parsed.doubts:
            return f"what it runs cannot be known: {parsed.doubts[0]}"
        if reach := self._opaque_reach(parsed) or self._git_dir_doubt(parsed) or self._agent_code(parsed):
            return reach
        for judgement in files:
            if judgement.decision is UNKNOWN_PATH:
                return f"{judgement.effect}: {judgement.reason}"
        return None

    def _ruled_verdict(
        self, decisions: dict[str, Decision], outside: dict[str, Decision], files: list[Judgement]
    ) -> Verdict:
        """Allow when every part, outside path and file is allowed, else ask (saying about what)."""
        if not decisions:
            return Verdict("ask", "no command to judge")
        for subject, decision in {**decisions, **outside}.items():
            if decision.action != "allow":
                return Verdict("ask", f'"{one_line(subject)}": {decision.reason}')
        for judgement in files:
            if judgement.action != "allow":
                return Verdict("ask", f"{judgement.effect}: {judgement.reason}")
        reasons = sorted({decision.reason for decision in decisions.values()})
        return Verdict("allow", f"every part allowed: {'; '.join(reasons)}")

    def effect_lines(self, command: str) -> list[str]:
        """`execute rm a: deny (global rule "rm *")`, `write out.txt: ...`: every part and
        every file effect with its decision, for a person reading `permission check`."""
        parsed = self.parse(command)
        lines = []
        for part in parsed.parts:
            decision, subject = self._part_decision(part)
            lines.append(f"execute {one_line(subject)}: {decision.action} ({decision.reason})")
        files = self._file_judge().judge(parsed)
        lines += [judgement.line() for judgement in files]
        return list(dict.fromkeys(lines))

    def person_only(self, verdict: Verdict) -> str | None:
        """Why only a person may approve the command, or None: what it runs cannot be
        known and the rules of bash, edit or delete (or `*`) hold a deny it may reach, so
        neither --yes nor a rule allowing the whole string does (the question is asked)."""
        if not verdict.unknown:
            return None
        denying = self.permissions.keys_with(self.agent, self.session_id, "deny")
        keys = ["*"] if denying is None else [key for key in UNKNOWN_GUARDS if key in denying]
        if not keys:
            return None
        named = " and ".join(f'"{key}"' for key in keys)
        return f"{verdict.why}, and it may do what the deny rules under {named} forbid"

    def _file_judge(self) -> FileJudge:
        ruled = self.permissions.keys_with(self.agent, self.session_id)
        denying = self.permissions.keys_with(self.agent, self.session_id, "deny")
        return FileJudge(self.workspace, self.evaluate, self.protected, ruled, denying)

    def _part_decision(self, part: SimpleCommand) -> tuple[Decision, str]:
        """The rules' decision for one part and the subject that gave it, judged as written
        and as run (`\\rm x`, `/bin/rm x` and `r''m x` run `rm x`): a deny of either
        refuses it; otherwise a rule matching the text as written decides, then one
        matching the command as run."""
        written = self.evaluate("bash", part.text)
        if not part.normal or written.action == "deny":
            return written, part.text
        run = self.evaluate("bash", part.normal)
        if run.action == "deny" or (written.level == "default" and not (part.named_elsewhere and run.action == "allow")):
            return run, part.normal
        return written, part.text

    def _opaque_reach(self, parsed: ParsedCommand) -> str | None:
        """What a deny covers among what a program without a table of its own may run or
        change (opaque_programs), said for a person; None when a deny covers nothing."""
        files, bases = None, command_bases(parsed)
        for part in parsed.parts:
            program = part.words[0] if part.words else ""
            for line in command_lines(list(part.words)):
                inner = parse_command(line)
                if banned := banned_programs(inner, self.banned):
                    return f"{program} may run {', '.join(banned)}, which is banned (tools.bash.bannedCommands)"
                for inner_part in inner.parts:
                    decision, subject = self._part_decision(inner_part)
                    if decision.action == "deny":
                        return f'{program} may run "{one_line(subject)}", which {decision.reason} forbids'
            for path in named_paths(list(part.words)):
                files = files or self._file_judge()
                for kind in ("write", "delete"):
                    for judgement in files.judge_touch(Touch(kind, as_the_shell_sees(path)), bases.folders, part.text):
                        if judgement.action == "deny":
                            return f"{program} may {kind} {judgement.effect.target}, which {judgement.reason} forbids"
        return None

    def _agent_code(self, parsed: ParsedCommand) -> str | None:
        """Why a program's code cannot be known: an interpreter or make runs a file the
        agent wrote (`python3 evil.py` after a write of evil.py). Code already in the
        repository is judged by the program's own rule (docs/permissions.md), but code
        the agent wrote is no more known than `python3 -c`; only while a deny could apply,
        so a session with no deny is not asked about every script it runs."""
        if self.changed_by_agent is None or not any(part.code_files for part in parsed.parts):
            return None
        if self.person_only(Verdict("ask", "", unknown=True)) is None:
            return None
        root = self.workspace.root.as_posix()
        folders = command_bases(parsed).folders
        for part in parsed.parts:
            for path in filter(None, part.code_files):
                for base in folders:
                    absolute = posixpath.normpath(posixpath.join(root, base, os.path.expanduser(path)))
                    rel = posixpath.relpath(absolute, root)
                    if not rel.startswith("..") and self.changed_by_agent(rel):
                        return f"{one_line(part.text, 60)} runs {rel}, code the agent wrote, whose effects cannot be known"
        return None

    def _git_dir_doubt(self, parsed: ParsedCommand) -> str | None:
        """Why a git part's settings cannot be known: the repository folder it would use
        is one the agent may have written (git_dirs)."""
        if not any(runs_git(part.words) for part in parsed.parts):
            return None
        folders = command_bases(parsed).folders
        for part in parsed.parts:
            found = unprotected_git_dir(self.workspace.root.as_posix(), folders, part.words, self.protected)
            if found is not None:
                return f"git would read its settings from {found}, a repository folder the agent may have written"
        made = next(
            (t.path for part in parsed.parts if not runs_git(part.words) for t in part.touches if may_make_git_dir(t)),
            None,
        )  # git's own work (init, clone, worktree add) makes a repository git made, not one the agent wrote
        if made is not None:
            return f"git runs after the command writes {made}, which may make a repository folder git reads"
        return None

    def evaluate(self, key: str, subject: str, absolute: str | None = None) -> Decision:
        return self.permissions.evaluate(key, subject, self.agent, absolute, session_id=self.session_id)

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
            for written in (*filter(None, part.paths), *([part.directory] if part.directory else [])):
                path = as_the_shell_sees(written)
                if not path:
                    found[f"the path in {one_line(part.text, 60)}"] = _COMPUTED_PATH
                    continue
                subject = self._outside_subject(path)
                if subject is None:
                    continue
                decision = self.permissions.evaluate(
                    "external_directory", subject, self.agent, absolute=subject, session_id=self.session_id
                )
                if written == part.directory and decision.action == "allow":
                    decision = _CD_OUT
                if subject not in found or STRICTNESS[decision.action] > STRICTNESS[found[subject].action]:
                    found[subject] = decision
        return found

    def _outside_subject(self, path: str) -> str | None:
        """``path`` as the absolute subject `external_directory` rules match, or None
        when it is inside the workspace (symlinks followed) or a harmless device."""
        root = self.workspace.root.as_posix()
        path = os.path.expanduser(path)
        absolute = posixpath.normpath(posixpath.join(root, path))
        if absolute in HARMLESS_DEVICES or absolute.startswith("/dev/fd/"):
            return None
        try:
            subject = self.workspace.subject(path)
        except ToolError:  # a symlink loop, a folder that cannot be searched: judge it as written
            return absolute
        return subject if subject.startswith("/") else None


def explain_command(
    config: Config,
    workspace_root: Path,
    command: str,
    agent: str,
    agents: Mapping[str, AgentRules] | None = None,
    known: Sequence[str] | None = None,
) -> str:
    """`opencode permission check bash COMMAND`: the bash tool's verdict, as `explain` prints a rule's (the action padded to 5, then why), then
    one line per effect: each part it runs and each file it writes or deletes, with the
    decision for it. ``agents`` and ``known`` as for `explain`."""
    check_agent(agent, known)
    workspace = Workspace(workspace_root)
    judge = CommandJudge(
        PermissionService(config, Bus(), agents=agents), workspace, agent, config.tools.bash.banned_commands,
        protected=protected_roots(config.data.directory, workspace.root.as_posix()),
    )
    verdict = judge.verdict(command)
    why = judge.person_only(verdict)
    why = f"{why}: only a person may approve it, --yes does not" if why else verdict.why
    lines = [f"{verdict.action:<5} ({why})", *(f"  {line}" for line in judge.effect_lines(command))]
    from app.permission.shell.sandbox_plan import plan  # it builds on this module

    decided = plan(judge, verdict, command, config, "permission-check")
    if decided.action != verdict.action or decided.person_only != judge.person_only(verdict):
        asked = ": only a person may approve it, --yes does not" if decided.person_only else ""
        lines.append(f"  with the sandbox: {decided.action} ({decided.person_only or decided.why}){asked}")
    if decided.refusal is None and decided.availability is not None and decided.availability.mechanism is not None:
        lines.append(f"  {decided.sandbox_line()}")
    return "\n".join(lines)


def banned_programs(parsed: ParsedCommand, banned: list[str]) -> list[str]:
    """The banned names any part of the command may run, in order, without repeats."""
    banned_set = set(banned)
    found = [name for part in parsed.parts for name in part.programs if name in banned_set]
    return list(dict.fromkeys(found))


def one_line(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
