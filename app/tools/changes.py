"""The one way a tool changes files (ARCHITECTURE.md, "one way to change a file").

A tool describes what it wants as a *plan*: a function from a snapshot of the current
files to a ``ChangeSet``. ``apply_changes`` then does the whole dance, in this order:
take the path locks, read the files, check freshness, run the plan, ask permission
(every subject evaluated, one question asked), write atomically (rolling back files
already written if a later write fails), record history versions, update the file
records, and let history publish ``FileVersionCreated``. Tools never repeat it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.diff import diff_stats, unified_diff
from app.errors import PermissionDeniedError, ToolError
from app.permission import PermissionPreview
from app.tools.base import ToolContext
from app.workspace.textio import TextFile, decode_text, is_binary, write_atomic


@dataclass(frozen=True)
class FileState:
    """A file as the change path found it, under its lock. ``data`` None: it did not exist."""

    path: Path
    rel: str
    data: bytes | None

    @property
    def exists(self) -> bool:
        return self.data is not None

    def text_file(self) -> TextFile:
        """The file decoded for editing (an empty new file when absent); raises
        BinaryFileError for binary content."""
        return TextFile.new("") if self.data is None else decode_text(self.data, self.path)


class Snapshot:
    """What the plan sees: the locked files' current bytes, read once."""

    def __init__(self, states: dict[Path, FileState]) -> None:
        self._states = states

    def __getitem__(self, path: Path) -> FileState:
        return self._states[path]

    def __iter__(self):
        return iter(self._states.values())


@dataclass(frozen=True)
class Change:
    """One file's new state. ``data`` None deletes it. ``is_link`` removes a symlink itself."""

    path: Path
    data: bytes | None
    is_link: bool = False


@dataclass
class ChangeSet:
    """What a plan returns: the changes, and how to ask the user about them.

    ``subjects`` are every permission subject to evaluate (a directory delete lists
    each file inside); ``ask_subject`` is the one question asked and remembered.
    """

    changes: list[Change]
    title: str
    ask_subject: str
    subjects: list[str] = field(default_factory=list)
    preview: PermissionPreview | None = None
    remove_dirs: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class AppliedFile:
    """One file after the change: what front-ends show and history stores."""

    path: str
    before: str
    after: str
    deleted: bool
    created: bool
    additions: int
    deletions: int
    diff: str


def decode_for_history(data: bytes | None) -> str:
    """History stores the exact text (BOM and CRLF kept) so a revert restores bytes."""
    if data is None:
        return ""
    if is_binary(data):
        return f"(binary file, {len(data)} bytes)"
    return data.decode("utf-8")


def _read_state(ctx: ToolContext, path: Path) -> FileState:
    rel = ctx.workspace.relative(path)
    if path.is_symlink() or not path.exists():
        return FileState(path, rel, None)
    if path.is_dir():
        return FileState(path, rel, None)
    return FileState(path, rel, path.read_bytes())


async def apply_changes(
    ctx: ToolContext,
    tool: str,
    paths: Sequence[Path],
    plan: Callable[[Snapshot], ChangeSet],
    *,
    require_read: Iterable[Path] = (),
    dry_run: bool = False,
) -> list[AppliedFile]:
    """Run ``plan`` under the locks of ``paths`` and commit its changes (see module doc).

    ``require_read`` lists the paths that must have been read in this session and be
    unchanged since (write over an existing file, edit, multiedit).
    """
    async with ctx.records.lock_many(paths):
        states = {path: _read_state(ctx, path) for path in paths}
        for path in require_read:
            if states[path].exists:
                ctx.records.assert_fresh(ctx.session_id, path)
        change_set = plan(Snapshot(states))
        applied = [_describe(ctx, states.get(c.path) or _read_state(ctx, c.path), c) for c in change_set.changes]
        if dry_run:
            return applied
        await _authorize(ctx, tool, change_set, applied)
        await asyncio.to_thread(_write_all, ctx, change_set, states)
        _record(ctx, change_set, applied)
        return applied


def _describe(ctx: ToolContext, state: FileState, change: Change) -> AppliedFile:
    before = decode_for_history(state.data)
    after = decode_for_history(change.data)
    additions, deletions = diff_stats(before, after)
    return AppliedFile(
        path=state.rel,
        before=before,
        after=after,
        deleted=change.data is None,
        created=not state.exists and change.data is not None,
        additions=additions,
        deletions=deletions,
        diff=unified_diff(before, after, state.rel),
    )


async def _authorize(ctx: ToolContext, tool: str, change_set: ChangeSet, applied: list[AppliedFile]) -> None:
    subjects = change_set.subjects or [a.path for a in applied] or [change_set.ask_subject]
    denied = [s for s in subjects if ctx.permissions.evaluate(tool, s, ctx.agent).action == "deny"]
    if denied:
        shown = ", ".join(denied[:10]) + (f" and {len(denied) - 10} more" if len(denied) > 10 else "")
        raise PermissionDeniedError(
            f"Permission denied: the rules forbid {tool} on {shown}; nothing was changed"
        )
    if all(ctx.permissions.evaluate(tool, s, ctx.agent).action == "allow" for s in subjects):
        return
    preview = change_set.preview or PermissionPreview(
        kind="diff", text="\n".join(a.diff for a in applied if a.diff)
    )
    await ctx.permissions.check(
        ctx.session_id, tool, change_set.ask_subject, ctx.agent, change_set.title, preview
    )


def _write_all(ctx: ToolContext, change_set: ChangeSet, states: dict[Path, FileState]) -> None:
    """Write every change; if one fails, put back the files already changed, then raise."""
    done: list[tuple[Change, bytes | None]] = []
    try:
        for change in change_set.changes:
            previous = states[change.path].data if change.path in states else None
            if change.data is None:
                _remove(change)
            else:
                write_atomic(change.path, change.data)
            done.append((change, previous))
        for directory in change_set.remove_dirs:
            shutil.rmtree(directory)
    except OSError as err:
        for change, previous in reversed(done):
            if previous is not None:
                write_atomic(change.path, previous)
            elif change.data is not None:
                change.path.unlink(missing_ok=True)
        raise ToolError(
            f"Could not change {ctx.workspace.relative(Path(err.filename or change_set.ask_subject))}: "
            f"{err.strerror or err}; nothing was changed"
        ) from None


def _remove(change: Change) -> None:
    if change.is_link or not change.path.is_dir():
        os.unlink(change.path)
    else:
        shutil.rmtree(change.path)


def _record(ctx: ToolContext, change_set: ChangeSet, applied: list[AppliedFile]) -> None:
    """History after the filesystem changed (spec 000: record only what happened)."""
    with ctx.history.batch():
        for change, item in zip(change_set.changes, applied, strict=True):
            if change.is_link:
                continue
            if ctx.history.get_by_path_and_session(item.path, ctx.session_id) is None:
                ctx.history.create(ctx.session_id, item.path, item.before)
            ctx.history.create_version(ctx.session_id, item.path, item.after, deleted=item.deleted)
    for change in change_set.changes:
        ctx.records.record_write(ctx.session_id, change.path)
        ctx.records.record_read(ctx.session_id, change.path)
