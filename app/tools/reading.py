"""What the read-only tools (view, ls, glob, grep) share: turning the model's path into a
checked target, the permission filter on what they show, and the cut of long lines.

A path inside the workspace needs the tool's own permission (allowed by default) and the
`view` key's, which judges every read whatever tool makes it (app.permission.effects). A
path outside also needs `external_directory` (asked by default), checked first, so
nothing outside is even probed before the user agreed. The one exception: view reads
the folder of a skill the session loaded (``ToolContext.readable_folders``) unasked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from app.core.errors import PermissionDeniedError, ToolError
from app.core.file_kinds import SPECIAL_TYPES, kind_of
from app.permission import PermissionPreview
from app.permission.effects import GROUP_KEYS, Effect, Judgement, judge
from app.permission.hard_links import HardLinks, denied_name
from app.tools.base import ToolContext

MAX_LINE_CHARS = 2000


def special_kind(mode: int) -> str | None:
    """What a file of this mode is when no reading tool may open it ("a FIFO", "a
    socket", a device), else None. Opening a FIFO blocks until someone writes,
    a socket cannot be opened, and /dev/zero or /dev/urandom never end."""
    return kind_of(mode) if stat.S_IFMT(mode) in SPECIAL_TYPES else None


def special_kind_at(path: str | Path) -> str | None:
    """``special_kind`` of what ``path`` leads to (links followed); None when nothing does."""
    try:
        return special_kind(os.stat(path).st_mode)
    except OSError:
        return None


def special_entry_kind(entry: os.DirEntry[str]) -> str | None:
    """``special_kind`` of a listed entry or of what it links to. Free for files and
    folders, whose type the listing already gave; one stat for a link or anything else."""
    if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
        return None
    return special_kind_at(entry.path)


def cut_line(line: str) -> str:
    """A line as shown to the model: very long lines (minified code, data) are cut."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line) - MAX_LINE_CHARS} more characters]"


class ReadTarget(NamedTuple):
    """A checked path. ``shown`` names it in outputs and is the permission subject:
    workspace-relative inside (the model can pass it straight to another tool), absolute
    outside. ``root`` is what found paths are relative to, and where gitignore files
    start: the workspace root inside; outside, the folder searched (a file's folder).
    (A NamedTuple: a frozen dataclass compiles its methods at every start of every command.)"""

    path: Path
    shown: str
    inside: bool
    root: Path

    def show(self, rel: str) -> str:
        """How outputs name a path given relative to ``root``."""
        return rel if self.inside else f"{self.root.as_posix().rstrip('/')}/{rel}"

    def rel(self, path: Path) -> str:
        """``path`` (at or below ``root``) relative to ``root``; "" for the root itself."""
        return "" if path == self.root else path.relative_to(self.root).as_posix()


async def authorize_read(ctx: ToolContext, tool: str, path: str) -> ReadTarget:
    """Resolve ``path`` (symlinks followed, so a link cannot lead outside unnoticed) and
    check the permissions; raises PermissionDeniedError when refused."""
    ctx.workspace.assert_present()
    subject = ctx.workspace.subject(path)
    inside = not Path(subject).is_absolute()
    absolute = ctx.workspace.root / subject  # relative inside, absolute outside: canonical either way
    _refuse_unreachable(subject, absolute)
    if not inside and not (tool == "view" and any(absolute.is_relative_to(f) for f in ctx.readable_folders)):
        await ctx.permissions.check(
            ctx.session_id,
            "external_directory",
            subject,
            ctx.agent,
            f"{tool} outside the workspace: {subject}",
            PermissionPreview(
                "text",
                f"The {tool} tool wants to read {subject}, outside the workspace {ctx.workspace.root}.",
            ),
            absolute=subject,
            scope=tool,  # allowing ls to list a folder is not allowing grep to read every file in it
        )
    judged = read_judge(ctx, tool)
    judgement = judged(subject, absolute.as_posix()) if judged is not None else None
    if judgement is not None and judgement.action == "deny":
        raise PermissionDeniedError(f"{tool} {subject}: denied by {_read_reason(tool, judgement)}")
    # The question goes under the key whose rule asks: an answer "for this session" to a
    # `view` rule's question then holds for every tool's read of that path.
    asked = judgement.key if judgement is not None and judgement.action == "ask" else tool
    await ctx.permissions.check(
        ctx.session_id,
        asked,
        subject,
        ctx.agent,
        f"{tool} {subject}",
        PermissionPreview("text", f"The {tool} tool wants to read {subject}."),
        absolute=absolute.as_posix(),
    )
    if inside and judged is not None:
        _refuse_a_denied_other_name(ctx, tool, subject, absolute, judged)
    root = ctx.workspace.root if inside else absolute if absolute.is_dir() else absolute.parent
    return ReadTarget(absolute, subject, inside, root)


def _refuse_unreachable(subject: str, absolute: Path) -> None:
    """A path the system cannot look at (a name over 255 bytes, a folder without search
    permission) is one line before anyone is asked; one that does not exist is left to the
    tool, which says what to do instead."""
    try:
        os.stat(absolute)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as err:
        raise ToolError(f"{subject} cannot be read: {err.strerror or err}; check the path") from None


def refuse_denied_reads(ctx: ToolContext, tool: str, subjects: list[str]) -> None:
    """Refuse a change tool's call (edit, patch) that reads a file the rules forbid
    reading, by any of its names, before it looks at the file: its errors ("context not
    found") and its diff would show the file to the model. ``subjects`` are
    workspace-relative. Judged by the `view` rules alone: the tool's own rules are about
    what it changes."""
    judged = read_judge(ctx, GROUP_KEYS["read"], "deny")
    if judged is None:
        return
    for subject in subjects:
        absolute = ctx.workspace.root / subject
        judgement = judged(subject, absolute.as_posix())
        if judgement.action == "deny":
            raise PermissionDeniedError(
                f"{tool} {subject}: reading it is denied by {_read_reason(tool, judgement)}; nothing was changed"
            )
        _refuse_a_denied_other_name(ctx, tool, subject, absolute, judged)


def _refuse_a_denied_other_name(
    ctx: ToolContext, tool: str, subject: str, absolute: Path, judged: ReadJudge
) -> None:
    """A hard link is the same file under another name: refuse it when a rule denies
    reading the file by any of its names."""
    reasons: dict[str, str] = {}
    root = ctx.workspace.root.as_posix().rstrip("/")

    def denied(name: str) -> bool:
        judgement = judged(name, f"{root}/{name}")
        reasons[name] = _read_reason(tool, judgement)
        return judgement.action == "deny"

    name = denied_name(_links(ctx), absolute, denied)
    if name is not None:
        why = f"denied by {reasons[name]}" if name in reasons else "its other names cannot all be checked"
        raise PermissionDeniedError(f"{tool} {subject}: it is the same file as {name} (a hard link), {why}")


def _links(ctx: ToolContext) -> HardLinks:
    """The hard links of the workspace, opencode's data folder left out."""
    data_dir = ctx.config.data_dir(ctx.workspace.root).resolve()
    inside = data_dir.is_relative_to(ctx.workspace.root) and data_dir != ctx.workspace.root
    return HardLinks(ctx.workspace.root, (data_dir.relative_to(ctx.workspace.root).as_posix(),) if inside else ())


def skipped_dirs(ctx: ToolContext, target: ReadTarget) -> list[str]:
    """Root-relative folders a search below the target must not enter: the runtime's
    database folder, which is ours, not the project's."""
    data_dir = ctx.config.data_dir(ctx.workspace.root).resolve()
    if data_dir != target.path and data_dir.is_relative_to(target.path):
        return [target.rel(data_dir)]
    return []


def allowed_by_rules(ctx: ToolContext, tool: str, target: ReadTarget) -> Callable[[str], bool]:
    """A filter on the paths a search shows: a file whose read the rules deny (the tool's
    own or the `view` rules, which judge every read) is left out, so a grep of the whole
    workspace does not show the `.env` that `"*.env": "deny"` guards. A search of a folder
    outside that holds the workspace (`grep x ..`) judges the files of the workspace by
    their workspace-relative names, as a search inside does."""
    judged = read_judge(ctx, tool, "deny")
    if judged is None:  # the common case: skip evaluating every path found
        return lambda _shown: True
    workspace_root = ctx.workspace.root.as_posix().rstrip("/")
    links = _links(ctx)

    def denied(subject: str) -> bool:
        absolute = subject if subject.startswith("/") else f"{workspace_root}/{subject}"
        return judged(subject, absolute).action == "deny"

    def allowed(shown: str) -> bool:
        subject = shown if target.inside else _subject_of(ctx, shown)
        if denied(subject):
            return False
        # a hard link's other names
        return subject.startswith("/") or denied_name(links, f"{workspace_root}/{subject}", denied) is None

    return allowed


def _subject_of(ctx: ToolContext, absolute: str) -> str:
    """The rules' subject for a path found outside: workspace-relative when it is (or
    leads by a symlink) inside the workspace, else the absolute path."""
    try:
        return ctx.workspace.subject(absolute)
    except ToolError:  # a symlink loop, a folder that cannot be searched: judged as found
        return absolute


ReadJudge = Callable[[str, str], Judgement]
"""(subject, absolute) -> the judgement of reading it (app.permission.effects)."""


def read_judge(ctx: ToolContext, tool: str, *actions: str) -> ReadJudge | None:
    """How a read by ``tool`` is judged: with the tool's own key and the `view` key,
    which covers every read (the stricter wins, a deny of either refuses). None when
    neither key holds a rule (one of ``actions``, when given) in the agent's, its
    ancestors' (a sub-agent inherits their denies) or the global rules, nor does `*`:
    then the tool's own check is all."""
    ruled = ctx.permissions.keys_with(ctx.agent, ctx.session_id, *actions)
    if ruled is not None and tool not in ruled and GROUP_KEYS["read"] not in ruled:
        return None
    evaluate = ctx.permissions.evaluator(ctx.agent, session_id=ctx.session_id)

    def judged(subject: str, absolute: str) -> Judgement:
        return judge(evaluate, tool, Effect("read", subject, absolute), ())

    return judged


def _read_reason(tool: str, judgement: Judgement) -> str:
    """The rule that decided, as the tool's own messages give it (`global rule "*.env"`),
    or naming the `view` key when its rules decided for another tool."""
    if judgement.key == tool:
        return judgement.decision.reason
    return f"{judgement.reason}, which judges every read"
