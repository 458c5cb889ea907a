"""The one way a tool changes files (ARCHITECTURE.md, "one way to change a file").

A tool describes what it wants as a *plan*: a function from a snapshot of the current
files to a ``ChangeSet``. ``apply_changes`` then does the whole dance, in this order:
take the path locks, read the files, check freshness, run the plan, ask permission
(every effect judged, one question asked), write atomically (rolling back files
already written if a later write fails) while recording the history versions in a
transaction that commits only once every file is written, update the file records, and
let history publish ``FileVersionCreated`` on that commit. Tools never repeat it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path

from app.diff import Region, unified_diff, unified_diff_regions
from app.errors import PermissionDeniedError, ToolError
from app.permission import PermissionPreview
from app.permission.effects import Effect, protected_roots
from app.store.models import RecordedChange
from app.tools.base import ToolContext
from app.workspace.textio import TextFile, decode_text, is_binary, stage_atomic, sync_paths, write_atomic

Undo = Callable[[], object]


@dataclass(frozen=True)
class FileState:
    """A file as the change path found it, under its lock. ``data`` None: it did not exist."""

    path: Path
    rel: str
    data: bytes | None
    mode: int | None = None
    """Its permission bits, when it is a regular file."""

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
    """One file's new state. ``data`` None deletes it. ``is_link`` removes a symlink itself.
    ``regions``: line ranges of the old and new text that hold every change, when the
    tool knows them (a patch does), so the diff looks only there; None: diff it all."""

    path: Path
    data: bytes | None
    is_link: bool = False
    regions: tuple[Region, ...] | None = None


@dataclass
class ChangeSet:
    """What a plan returns: the changes, and how to ask the user about them.

    Every changed file is judged as a write or delete effect; ``subjects`` are entries
    removed besides them (a deleted folder and the folders inside it), judged as deletes
    too. ``ask_subject`` is the one question asked and remembered.
    ``person_only`` says why only a person may approve the change (a delete past
    tools.delete.maxFiles): asked even when every rule allows, refused headless (--yes too).
    """

    changes: list[Change]
    title: str
    ask_subject: str
    subjects: list[str] = field(default_factory=list)
    preview: PermissionPreview | None = None
    remove_dirs: list[Path] = field(default_factory=list)
    """Folders emptied by ``changes``, to remove after them, deepest first."""
    person_only: str | None = None


@dataclass(frozen=True)
class AppliedFile:
    """One file after the change: what front-ends show and history stores. The diff and
    its stats are computed on first use: a 5,000-file delete or a change nobody is asked
    about should not pay for diffs no one reads."""

    path: str
    before: str
    after: str
    deleted: bool
    created: bool
    before_data: bytes | None = None
    after_data: bytes | None = None
    """Raw bytes of non-text content (``before``/``after`` then hold a placeholder)."""
    regions: tuple[Region, ...] | None = None
    """Where ``before`` and ``after`` differ, if known (``Change.regions``)."""

    @cached_property
    def diff(self) -> str:
        if self.regions is None:
            return unified_diff(self.before, self.after, self.path)
        return unified_diff_regions(self.before, self.after, self.path, self.regions)

    @cached_property
    def additions(self) -> int:
        return counted_changes(self.diff)[0]

    @cached_property
    def deletions(self) -> int:
        return counted_changes(self.diff)[1]


def _history_content(data: bytes | None) -> tuple[str, bytes | None]:
    """(text, raw bytes) as history keeps them: UTF-8 text as itself (BOM and CRLF kept,
    so a revert restores its bytes) with no bytes; other
    content as a "(binary file, N bytes)" placeholder plus its exact bytes, so a delete
    or a patch never loses it (docs/specs/000-delete.md) and a revert can put it back."""
    if data is None:
        return "", None
    if not is_binary(data):
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError:  # invalid UTF-8 past the sniffed first 8 KiB
            pass
    return f"(binary file, {len(data)} bytes)", data


def _read_state(ctx: ToolContext, path: Path) -> FileState:
    """One lstat tells what is there: only a regular file has bytes to read (a symlink,
    a folder, a fifo, or nothing at all: no data)."""
    rel = ctx.workspace.relative(path)
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return FileState(path, rel, None)
    if not stat.S_ISREG(mode):
        return FileState(path, rel, None)
    return FileState(path, rel, path.read_bytes(), stat.S_IMODE(mode))


async def apply_changes(
    ctx: ToolContext,
    tool: str,
    paths: Sequence[Path],
    plan: Callable[[Snapshot], ChangeSet],
    *,
    require_read: Iterable[Path] = (),
    dry_run: bool = False,
    confirmed: bool = False,
) -> list[AppliedFile]:
    """Run ``plan`` under the locks of ``paths`` and commit its changes (see module doc).

    ``require_read`` lists the paths that must have been read in this session and be
    unchanged since (write over an existing file, edit, multiedit). ``confirmed``: a
    person already approved this very change (the sidebar's revert asks its own yes/no
    question): rules that deny still refuse it, and nobody is asked again. Tools never
    pass it.
    """
    async with ctx.records.lock_many(paths):
        states = {path: _read_state(ctx, path) for path in paths}
        for path in require_read:
            if states[path].exists:
                ctx.records.assert_fresh(ctx.session_id, path)
        change_set = plan(Snapshot(states))
        _refuse_unwritable(states, change_set)
        applied = [_describe(ctx, states.get(c.path) or _read_state(ctx, c.path), c) for c in change_set.changes]
        if dry_run or not (change_set.changes or change_set.remove_dirs):
            return applied  # nothing would change: nothing to ask, write or record
        await _authorize(ctx, tool, change_set, applied, confirmed)
        await asyncio.to_thread(_commit, ctx, change_set, states, applied)
        return applied


def _refuse_unwritable(states: dict[Path, FileState], change_set: ChangeSet) -> None:
    """A file the OS would not let us write in place is not rewritten: the atomic rename
    would replace it all the same. So a 0444 file is refused as an in-place write
    (OpenCode's, Codex's, an editor's) is refused, and written where that would succeed
    (as root). Checked before anyone is asked, for every tool. Removing such a file stays
    possible, as with ``rm``: deletes are the delete rules' business."""
    for change in change_set.changes:
        state = states.get(change.path)
        if change.data is None or state is None or state.mode is None:
            continue
        if not os.access(state.path, os.W_OK):
            raise ToolError(
                f"{state.rel} is not writable (mode {state.mode:04o}): nothing was changed; "
                "make it writable first if it should change"
            )


def _describe(ctx: ToolContext, state: FileState, change: Change) -> AppliedFile:
    before, before_data = _history_content(state.data)
    after, after_data = _history_content(change.data)
    return AppliedFile(
        path=state.rel,
        before=before,
        after=after,
        deleted=change.data is None,
        created=not state.exists and change.data is not None,
        before_data=before_data,
        after_data=after_data,
        # Regions number text lines: a placeholder for binary content has none of them.
        regions=change.regions if before_data is None and after_data is None else None,
    )


def counted_changes(diff: str) -> tuple[int, int]:
    """``diff_stats`` read off the unified diff already made (app.diff guarantees they
    agree), instead of matching the lines a second time. Every line after the first
    starts after a newline: "+"/"-" lines are the changes, less the "+++" header."""
    if not diff:
        return 0, 0
    return diff.count("\n+") - 1, diff.count("\n-")


async def _authorize(
    ctx: ToolContext, tool: str, change_set: ChangeSet, applied: list[AppliedFile], confirmed: bool
) -> None:
    """Judge every effect (each file written or deleted, each folder removed) with the
    tool's key and its group's (app.permission.effects): one deny refuses the change,
    otherwise one question covers everything that asks."""
    effects = [Effect("delete" if item.deleted else "write", item.path) for item in applied]
    effects += [Effect("delete", subject) for subject in change_set.subjects]
    # Protected paths guard against the agent; a change a person confirmed is theirs.
    protected = () if confirmed else protected_roots(ctx.config.data.directory, ctx.workspace.root.as_posix())
    # Earlier answers are left to the question below, which announces an allow it gives.
    judgements = ctx.permissions.judge(
        tool, effects, ctx.agent, session_id=ctx.session_id, protected=protected, remembered=False
    )
    if denied := [j for j in judgements if j.action == "deny"]:
        first = denied[0]
        same = [j.effect.target for j in denied if (j.effect.kind, j.reason) == (first.effect.kind, first.reason)]
        shown = ", ".join(same[:10]) + (f" and {len(same) - 10} more" if len(same) > 10 else "")
        raise PermissionDeniedError(
            f"Permission denied: the rules forbid {first.effect.kind} on {shown} ({first.reason}); nothing was changed"
        )
    asks = any(j.action == "ask" for j in judgements)
    if confirmed or (change_set.person_only is None and not asks):
        return

    def diff_preview() -> PermissionPreview:
        return PermissionPreview(kind="diff", text="\n".join(a.diff for a in applied if a.diff))

    # One question for all subjects: it must be asked even when the rules allow
    # ask_subject itself but another subject (a file inside the folder, a deleted file
    # under the delete rules) asks.
    await ctx.permissions.check(
        ctx.session_id, tool, change_set.ask_subject, ctx.agent, change_set.title,
        change_set.preview or diff_preview,
        ask_anyway=asks, person_only=change_set.person_only,
    )


def _commit(
    ctx: ToolContext, change_set: ChangeSet, states: dict[Path, FileState], applied: list[AppliedFile]
) -> None:
    """Write the files and record their history as one unit, the two at once: a worker
    thread writes while this one inserts the versions into a transaction opened first (a
    database held by another process fails before any file changes) and committed only
    once every file is written. So history records only what happened (spec 000): a
    failed write rolls the rows back, unpublished; a failed insert or commit undoes the
    writes. FileVersionCreated events follow the commit. Runs in a worker thread: the
    database stays held meanwhile, so nothing else can slip into the transaction."""
    recorded = [
        RecordedChange(
            item.path, item.before, item.after, item.deleted, item.before_data, item.after_data, item.created
        )
        for change, item in zip(change_set.changes, applied, strict=True)
        if not change.is_link
    ]
    writing: Future[list[Undo]] | None = None
    with ThreadPoolExecutor(1, thread_name_prefix="opencode-write") as writer:
        try:
            with ctx.history.batch():
                writing = writer.submit(_write_all, ctx, change_set, states)
                ctx.history.record_changes(ctx.session_id, recorded)
                _make_diffs(applied)
                writing.result()
        except BaseException:
            if writing is not None and writing.exception() is None:  # waits for the writer
                _roll_back(writing.result())
            raise
    ctx.records.record_changes(ctx.session_id, [change.path for change in change_set.changes])


def _make_diffs(applied: list[AppliedFile]) -> None:
    """The diffs of the files written, made while the writer waits for the disk: the
    result shows them, and afterwards they would only add to the wait. A deleted file's
    diff is left for whoever reads it (a 5,000-file delete shows counts, not diffs)."""
    for item in applied:
        if not item.deleted:
            item.diff  # noqa: B018  (cached_property: computed and kept)


def _write_all(ctx: ToolContext, change_set: ChangeSet, states: dict[Path, FileState]) -> list[Undo]:
    """Write every change, then remove the emptied folders; if a step fails, undo the
    steps already done (files back with their bytes and mode, symlinks and folders made
    again), then raise. Returns the undo steps, for a caller whose own part fails later."""
    undo: list[Undo] = []
    # Every new content is staged and synced first, all at once (see stage_atomic), so
    # a failure there changes nothing and a big change waits for the disk twice, not per file.
    staged: dict[Path, Path] = {}
    try:
        for change in change_set.changes:
            if change.data is not None:
                staged[change.path] = stage_atomic(change.path, change.data)
        sync_paths(list(staged.values()))
        _perform(
            [
                partial(_change_one, change, _previous(states, change), staged)
                for change in change_set.changes
            ],
            undo,
        )
        for directory in change_set.remove_dirs:
            mode = stat.S_IMODE(directory.stat().st_mode)
            # rmdir, not rmtree: a folder holding anything the plan did not list (a file
            # created meanwhile) must fail the change, not lose that file unrecorded.
            directory.rmdir()
            undo.append(partial(directory.mkdir, mode))
        touched = {path.parent for path in [*(c.path for c in change_set.changes), *change_set.remove_dirs]}
        sync_paths(touched - set(change_set.remove_dirs))  # a removed folder has nothing left to sync
    except OSError as err:
        for temp in staged.values():
            temp.unlink(missing_ok=True)
        _roll_back(undo)
        raise ToolError(
            f"Could not change {ctx.workspace.relative(Path(err.filename or change_set.ask_subject))}: "
            f"{err.strerror or err}; nothing was changed"
        ) from None
    return undo


_PARALLEL_FROM = 16
"""Fewer steps than this run one after the other: threads would cost more than they save."""
_STEP_THREADS = 8


def _perform(steps: list[Callable[[], Undo]], undo: list[Undo]) -> None:
    """Run every step, adding the undo each returns to ``undo``; after a failure no
    further step starts, and a failure is raised once the running ones finish.
    Many steps are shared among a few threads: replacing or deleting a file whose blocks
    are on disk waits for the disk to free them (with ext4's ``discard`` option, a
    noticeable wait per file), and those waits overlap."""
    if len(steps) < _PARALLEL_FROM:
        for step in steps:
            undo.append(step())
        return
    failed = threading.Event()

    def run_share(share: list[Callable[[], Undo]]) -> None:
        for step in share:
            if failed.is_set():
                return
            try:
                undo.append(step())
            except BaseException:
                failed.set()
                raise

    with ThreadPoolExecutor(_STEP_THREADS, thread_name_prefix="opencode-change") as pool:
        shares = [pool.submit(run_share, steps[n::_STEP_THREADS]) for n in range(_STEP_THREADS)]
    for share in shares:
        if (error := share.exception()) is not None:
            raise error


def _change_one(change: Change, previous: bytes | None, staged: dict[Path, Path]) -> Undo:
    """Put one change on disk (new content is already staged, with the old file's mode,
    which its undo therefore keeps); returns its undo."""
    if change.data is None:
        return _remove(change, previous)
    os.replace(staged[change.path], change.path)
    del staged[change.path]
    if previous is None:
        return partial(change.path.unlink, missing_ok=True)
    return partial(write_atomic, change.path, previous)


def _remove(change: Change, previous: bytes | None) -> Undo:
    """Remove one file, symlink or folder; returns how to put it back."""
    if change.is_link:
        target = os.readlink(change.path)
        os.unlink(change.path)
        return partial(os.symlink, target, change.path)
    info = os.stat(change.path)
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(change.path)
    else:
        os.unlink(change.path)
    if previous is None:
        return _nothing
    return partial(write_atomic, change.path, previous, stat.S_IMODE(info.st_mode))


def _nothing() -> None:
    """The undo of removing what had no content to put back (a folder, as before)."""


def _roll_back(undo: list[Undo]) -> None:
    for step in reversed(undo):
        step()


def _previous(states: dict[Path, FileState], change: Change) -> bytes | None:
    """What ``change`` replaces, as read under the lock (None: nothing, or not read)."""
    state = states.get(change.path)
    return None if state is None else state.data
