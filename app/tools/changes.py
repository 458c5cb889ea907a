"""The one way a tool changes files (ARCHITECTURE.md, "one way to change a file").

A tool describes what it wants as a *plan*: a function from a snapshot of the current
files to a ``ChangeSet``. ``apply_changes`` then does the whole dance, in this order:
take the path locks and the workspace lock shared with other opencode processes, read
the files, check freshness, run the plan, ask permission (every effect judged, one
question asked; the workspace lock is let go while a person answers, and the files are
read again after), write the change set ahead to the journal (what every entry was, and
the history versions, one transaction), change the files (temp file + rename), mark the
change set done, update the file records, and publish ``FileVersionCreated``. A failure
while the files change puts every entry back as the journal has it; a crash leaves the
change set pending, and the next start rolls it back (app/workspace/recovery.py).

Every file operation goes through ``Beneath``: paths are walked from the workspace root's
descriptor without following symlinks, so a folder swapped for a link to the outside
after the path was checked fails the change instead of redirecting it. Tools never
repeat any of this.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import NamedTuple, TypeVar

from app.core.diff import Region, unified_diff, unified_diff_regions
from app.core.errors import PermissionDeniedError, StaleFileError, ToolError, shown_if_not_utf8
from app.core.shelter import sheltered
from app.permission import PermissionPreview
from app.permission.effects import Effect, Judgement, protected_roots
from app.permission.hook_decision import current_hook_decision
from app.store.journal import Before, Begun
from app.store.models import RecordedChange
from app.tools.base import ToolContext
from app.tools.reading import refuse_denied_reads, special_kind
from app.workspace.beneath import Beneath, file_operation, new_file_mode
from app.workspace.recovery import restore
from app.workspace.textio import TextFile, decode_text, is_binary, sync_paths

T = TypeVar("T")


class FileState(NamedTuple):
    """A file as the change path found it, under its lock. ``data`` None: it did not exist."""

    path: Path
    rel: str
    data: bytes | None
    mode: int | None = None
    """Its permission bits, when it is a regular file."""
    special: str | None = None
    """What is there instead of a regular file when no tool may change it: "a FIFO",
    "a socket", "a character device" or "a block device" (app.tools.reading.special_kind)."""
    link: str | None = None
    """The target, when a symlink is there (``data`` is then None)."""

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

    def __iter__(self) -> Iterator[FileState]:
        return iter(self._states.values())


class Change(NamedTuple):
    """One path's new state: a regular file holding ``data`` (``mode``: its permission
    bits; None keeps an existing file's, and a new file gets the default), a symlink to
    ``link``, or, when both are None, nothing (a file or a symlink itself removed).
    ``regions``: line ranges of the old and new text that hold every change, when the
    tool knows them (a patch does), so the diff looks only there; None: diff it all."""

    path: Path
    data: bytes | None
    regions: tuple[Region, ...] | None = None
    mode: int | None = None
    link: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What a plan returns: the changes, and how to ask the user about them.

    Every changed file is judged as a write or delete effect; ``subjects`` are entries
    removed besides them (a deleted folder and the folders inside it), judged as deletes
    too. ``ask_subject`` is what the one question is about; an answer for the session
    answers each effect the question covers (every file and folder), not the subject.
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


@dataclass(frozen=True)  # no slots: cached_property keeps its values in __dict__
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
    before_mode: int | None = None
    after_mode: int | None = None
    """Permission bits before and after (None: no regular file, or a new file's default)."""
    before_link: str | None = None
    after_link: str | None = None
    """The symlink's target, when the entry was or becomes one (its content is then "")."""

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


def _read_state(ctx: ToolContext, fs: Beneath, path: Path) -> FileState:
    """Only a regular file has bytes to read (a symlink, a folder, a fifo, or nothing at
    all: no data); it is opened without following a symlink anywhere on its path."""
    rel = ctx.workspace.relative(path)
    _refuse_unrecordable(rel)
    found = fs.read(rel)
    if found is not None:
        return FileState(path, rel, *found)
    info = fs.lstat(rel)
    if info is None:
        return FileState(path, rel, None)
    if stat.S_ISLNK(info.st_mode):
        return FileState(path, rel, None, link=fs.readlink(rel))
    return FileState(path, rel, None, special=special_kind(info.st_mode))


def _refuse_unrecordable(rel: str) -> None:
    """History keys files by their path as text: a name that is not UTF-8 (bytes Python
    carries as surrogates) cannot be recorded, so the change could not be taken back."""
    if (shown := shown_if_not_utf8(rel)) is not None:
        raise ToolError(
            f"The name {shown} is not UTF-8 text, which the session's history cannot record: nothing was "
            "changed; use a UTF-8 name (renaming the file first, if it exists)"
        )


# Bidirectional controls: they reorder what follows them on screen (`a\u202etxt.exe` shows
# as `aexe.txt`).
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _refuse_misleading_names(states: dict[Path, FileState], change_set: ChangeSet) -> None:
    """A new file is not given a name that shows as another one: a control character (a
    line break, a carriage return, an escape sequence, DEL) or a bidirectional control
    would make the sidebar, a question or a terminal show something else than the file
    being created (`secrets/x\rnotes.txt` prints as `notes.txt`). Files that already have
    such a name can still be changed."""
    for change in change_set.changes:
        state = states[change.path]
        if state.exists or state.link is not None or (change.data is None and change.link is None):
            continue
        odd = next((c for c in state.rel if unicodedata.category(c) == "Cc" or c in _BIDI_CONTROLS), None)
        if odd is not None:
            raise ToolError(
                f"The name {state.rel!r} holds the control character U+{ord(odd):04X}, which shows as something "
                "else in a terminal or the file list: nothing was changed; choose a name without it"
            )


def _refuse_special(tool: str, states: Iterable[FileState]) -> None:
    """A FIFO, socket or device is not a file to write over or to remove: its content
    cannot be recorded, so the change could never be seen or taken back (and the rename
    would silently replace it with a regular file)."""
    for state in states:
        if state.special is not None:
            raise ToolError(
                f"{state.rel} is {state.special}, not a regular file: {tool} changes regular files only, "
                "so nothing was changed; choose another path"
            )


async def apply_changes(
    ctx: ToolContext,
    tool: str,
    paths: Sequence[Path],
    plan: Callable[[Snapshot], ChangeSet],
    *,
    require_read: Iterable[Path] = (),
    reads: Iterable[Path] = (),
    dry_run: bool = False,
    confirmed: bool = False,
) -> list[AppliedFile]:
    """Run ``plan`` under the locks of ``paths`` and commit its changes (see module doc).

    ``require_read`` lists the paths that must have been read in this session and be
    unchanged since (write over an existing file, edit, multiedit). ``reads`` lists the
    paths whose content the plan reads to make the change (an edit, a patch's update):
    one the rules forbid reading refuses the call before the plan runs. ``confirmed``: a
    person already approved this very change (the sidebar's revert asks its own yes/no
    question): rules that deny still refuse it, and nobody is asked again. Tools never
    pass it.
    """
    ctx.workspace.assert_present()  # before the lock, whose file would make the folder again
    async with ctx.records.lock_many(paths), ctx.workspace_lock.holding() as holding:
        with Beneath(ctx.workspace.root) as fs:
            states = {path: _read_state(ctx, fs, path) for path in paths}
            _refuse_special(tool, states.values())
            refuse_denied_reads(ctx, tool, [states[path].rel for path in reads if states[path].exists])
            for path in require_read:
                if states[path].exists:
                    ctx.records.assert_fresh(ctx.session_id, path)
            change_set = plan(Snapshot(states))
            _refuse_unwritable(fs, states, change_set)
            for change in change_set.changes:
                if change.path not in states:
                    states[change.path] = state = _read_state(ctx, fs, change.path)
                    _refuse_special(tool, [state])
            _refuse_misleading_names(states, change_set)
            applied = [_describe(states[c.path], c) for c in change_set.changes]
            if dry_run or not (change_set.changes or change_set.remove_dirs):
                return applied  # nothing would change: nothing to ask, write or record
            judgements = _judged(ctx, tool, change_set, applied, confirmed)
            if _asks_a_person(ctx, change_set, judgements, confirmed):
                # Nobody waits on the workspace lock while a person reads the question;
                # what changed meanwhile is found by reading the files again.
                await holding.released_while(_authorize(ctx, tool, change_set, applied, judgements, confirmed))
                _refuse_changed_since(ctx, fs, states)
            else:
                await _authorize(ctx, tool, change_set, applied, judgements, confirmed)
            await sheltered(asyncio.to_thread(partial(_commit, ctx, fs, change_set, states, applied)))
            return applied


async def record_found(ctx: ToolContext, rels: Sequence[str]) -> list[str]:
    """Record what the files ``rels`` (workspace-relative, each changed by this session
    already) hold now when it differs from the session's latest version of them: a hook
    run after a tool (a formatter) rewrote them. Nothing is written: the new content is
    recorded as a version of its own, under the same locks as any change, so the sidebar,
    undo of the turn and `opencode changes` see it. Returns the paths recorded."""
    paths = [ctx.workspace.lexical(rel) for rel in rels]
    async with ctx.records.lock_many(paths), ctx.workspace_lock.holding():
        with Beneath(ctx.workspace.root) as fs:
            found = [_found_change(ctx, _read_state(ctx, fs, path)) for path in paths]
            changes = [change for change in found if change is not None]
            if changes:
                ctx.history.record_changes(ctx.session_id, changes)
                ctx.records.record_changes(ctx.session_id, [ctx.workspace.lexical(c.path) for c in changes])
    return [change.path for change in changes]


def _found_change(ctx: ToolContext, state: FileState) -> RecordedChange | None:
    """The change from the session's latest version of the file to what is on disk, or
    None when they are the same (or the session has no version of it)."""
    latest = ctx.history.get_by_path_and_session(state.rel, ctx.session_id)
    if latest is None or state.special is not None:
        return None
    after, after_data = _history_content(state.data)
    deleted = state.data is None and state.link is None
    if (latest.content, latest.data, latest.deleted, latest.link) == (after, after_data, deleted, state.link):
        return None
    return RecordedChange(
        state.rel, latest.content, after, deleted, latest.data, after_data, latest.deleted,
        latest.mode, state.mode, latest.link, state.link,
    )  # fmt: skip


def _refuse_unwritable(fs: Beneath, states: dict[Path, FileState], change_set: ChangeSet) -> None:
    """A file the OS would not let us write in place is not rewritten: the atomic rename
    would replace it all the same. So a 0444 file is refused as an in-place write
    (OpenCode's, Codex's, an editor's) is refused, and written where that would succeed
    (as root). Checked before anyone is asked, for every tool. Removing such a file stays
    possible, as with ``rm``: deletes are the delete rules' business."""
    for change in change_set.changes:
        state = states.get(change.path)
        if change.data is None or state is None or state.mode is None:
            continue
        if not fs.writable(state.rel):
            raise ToolError(
                f"{state.rel} is not writable (mode {state.mode:04o}): nothing was changed; "
                "make it writable first if it should change"
            )


def _refuse_changed_since(ctx: ToolContext, fs: Beneath, states: dict[Path, FileState]) -> None:
    """After the workspace lock was let go (a person was asked), every file must still be
    what the plan was made from: another process may have written it meanwhile."""
    for state in states.values():
        now = _read_state(ctx, fs, state.path)
        if (now.data, now.mode, now.link) != (state.data, state.mode, state.link):
            raise StaleFileError(
                f"{state.rel} changed while the permission question was open (another process or an "
                "editor wrote it): nothing was changed; read it again with the view tool and redo the change"
            )


def _describe(state: FileState, change: Change) -> AppliedFile:
    before, before_data = _history_content(state.data)
    after, after_data = _history_content(change.data)
    deleted = change.data is None and change.link is None
    return AppliedFile(
        path=state.rel,
        before=before,
        after=after,
        deleted=deleted,
        created=not deleted and state.data is None and state.link is None,
        before_data=before_data,
        after_data=after_data,
        # Regions number text lines: a placeholder for binary content has none of them.
        regions=change.regions if before_data is None and after_data is None else None,
        before_mode=state.mode,
        after_mode=_written_mode(state, change),
        before_link=state.link,
        after_link=change.link,
    )


def _written_mode(state: FileState, change: Change) -> int | None:
    """The permission bits the change gives a file it writes: those it names, else the
    file's own (a rewrite keeps them), else a new file's; None when it writes no file."""
    if change.data is None:
        return None
    return change.mode if change.mode is not None else state.mode if state.mode is not None else new_file_mode()


def counted_changes(diff: str) -> tuple[int, int]:
    """``diff_stats`` read off the unified diff already made (app.core.diff guarantees they
    agree), instead of matching the lines a second time. Every line after the first
    starts after a newline: "+"/"-" lines are the changes, less the "+++" header."""
    if not diff:
        return 0, 0
    return diff.count("\n+") - 1, diff.count("\n-")


def _judged(
    ctx: ToolContext, tool: str, change_set: ChangeSet, applied: list[AppliedFile], confirmed: bool
) -> list[Judgement]:
    """Judge every effect (each file written or deleted, each folder removed) with the
    tool's key and its group's (app.permission.effects); raises PermissionDeniedError
    when one is denied (nothing is asked then)."""
    effects = [Effect("delete" if item.deleted else "write", item.path) for item in applied]
    effects += [Effect("delete", subject) for subject in change_set.subjects]
    # Protected paths guard against the agent; a change a person confirmed is theirs.
    protected = () if confirmed else protected_roots(ctx.config.data.directory, ctx.workspace.root.as_posix())
    # Earlier answers are left to the question below, which announces an allow it gives.
    judgements = ctx.permissions.judge(tool, effects, ctx.agent, session_id=ctx.session_id, protected=protected)
    if denied := [j for j in judgements if j.action == "deny"]:
        first = denied[0]
        same = [j.effect.target for j in denied if (j.effect.kind, j.reason) == (first.effect.kind, first.reason)]
        shown = ", ".join(same[:10]) + (f" and {len(same) - 10} more" if len(same) > 10 else "")
        raise PermissionDeniedError(
            f"Permission denied: the rules forbid {first.effect.kind} on {shown} ({first.reason}); nothing was changed"
        )
    return judgements


def _asks_a_person(ctx: ToolContext, change_set: ChangeSet, judgements: list[Judgement], confirmed: bool) -> bool:
    """Whether the permission step may wait for a person (only an interactive policy
    asks anyone): then the workspace lock is let go meanwhile."""
    if confirmed or ctx.permissions.policy != "interactive":
        return False
    return change_set.person_only is not None or _asks(judgements)


def _asks(judgements: list[Judgement]) -> bool:
    """Whether the change needs a question: an effect the rules ask about, or a PreToolUse
    hook that asks for this call (app/permission/hook_decision.py)."""
    return any(j.action == "ask" for j in judgements) or current_hook_decision() == "ask"


async def _authorize(
    ctx: ToolContext,
    tool: str,
    change_set: ChangeSet,
    applied: list[AppliedFile],
    judgements: list[Judgement],
    confirmed: bool,
) -> None:
    """One question covers everything that asks (nothing is asked when the rules allow
    every effect, or a person already confirmed this change)."""
    asks = _asks(judgements)
    if confirmed:
        return
    if change_set.person_only is None and not asks:
        ctx.permissions.announce_granted(ctx.session_id, tool, change_set.ask_subject)
        return

    def diff_preview() -> PermissionPreview:
        return PermissionPreview(kind="diff", text="\n".join(a.diff for a in applied if a.diff))

    # One question for all subjects: it must be asked even when the rules allow
    # ask_subject itself but another subject (a file inside the folder, a deleted file
    # under the delete rules) asks. It covers every effect: an answer for the session
    # answers each, and no other.
    await ctx.permissions.check(
        ctx.session_id, tool, change_set.ask_subject, ctx.agent, change_set.title,
        change_set.preview or diff_preview,
        ask_anyway=asks, person_only=change_set.person_only, effects=[j.effect for j in judgements],
    )


def _commit(
    ctx: ToolContext, fs: Beneath, change_set: ChangeSet, states: dict[Path, FileState], applied: list[AppliedFile]
) -> None:
    """Write ahead, change the files, then mark the change set done (see module doc).
    Runs in a worker thread, under the workspace lock. The diffs of the files written are
    made meanwhile, while another thread waits for the database and the disk."""
    entries = _befores(fs, change_set, states)
    recorded = [
        RecordedChange(
            item.path, item.before, item.after, item.deleted, item.before_data, item.after_data, item.created,
            item.before_mode, item.after_mode, item.before_link, item.after_link,
        )
        for item in applied
    ]  # fmt: skip
    with ThreadPoolExecutor(1, thread_name_prefix="opencode-write") as writer:
        writing = writer.submit(_write_ahead_and_change, ctx, fs, change_set, states, entries, recorded)
        _make_diffs(applied)
    try:
        begun = writing.result()
    except OSError as err:
        raise ToolError(
            f"Could not change {err.filename or change_set.ask_subject}: {err.strerror or err}; nothing was changed"
        ) from None
    try:
        file_operation()  # the crash seam's last step: every file changed, the change set not yet done
        ctx.journal.finish(begun)
    except BaseException:
        _undo(ctx, fs, begun.id, entries)
        raise
    ctx.records.record_changes(ctx.session_id, [change.path for change in change_set.changes])


def _write_ahead_and_change(
    ctx: ToolContext,
    fs: Beneath,
    change_set: ChangeSet,
    states: dict[Path, FileState],
    entries: list[Before],
    recorded: list[RecordedChange],
) -> Begun:
    """The journal first, then the files; a failure on the way puts every entry back."""
    begun = ctx.journal.begin(str(ctx.workspace.root), ctx.session_id, change_set.title, entries, recorded)
    try:
        _write_all(fs, change_set, states)
    except BaseException:
        _undo(ctx, fs, begun.id, entries)
        raise
    return begun


def _befores(fs: Beneath, change_set: ChangeSet, states: dict[Path, FileState]) -> list[Before]:
    """What the journal records before the change: each file's bytes and mode, a
    symlink's target, a removed folder's mode, or that nothing was there (a folder the
    change will make for a new file too, so that undoing it removes the folder)."""
    entries = []
    missing_folders: dict[str, None] = {}
    for change in change_set.changes:
        state = states[change.path]
        if state.link is not None:
            entries.append(Before(state.rel, "link", os.fsencode(state.link)))
        elif state.data is not None:
            entries.append(Before(state.rel, "file", state.data, state.mode))
        else:
            entries.append(Before(state.rel, "absent"))
        folder = state.rel.rpartition("/")[0]
        while (change.data is not None or change.link is not None) and folder and fs.lstat(folder) is None:
            missing_folders[folder] = None
            folder = folder.rpartition("/")[0]
    for directory in change_set.remove_dirs:
        rel = fs.relative(directory)
        info = fs.lstat(rel)
        entries.append(Before(rel, "dir", mode=None if info is None else stat.S_IMODE(info.st_mode)))
    taken = {entry.path for entry in entries}
    entries += [Before(folder, "absent") for folder in missing_folders if folder not in taken]
    return entries


def _undo(ctx: ToolContext, fs: Beneath, change_set: int, entries: list[Before]) -> None:
    """Put every entry back and drop the change set. If even that fails, the change set
    stays pending in the journal and the next start rolls it back."""
    try:
        restore(fs, entries)
    except (OSError, ToolError):
        return
    ctx.journal.abandon(change_set)


def _make_diffs(applied: list[AppliedFile]) -> None:
    """The diffs of the files written, made while the writer waits for the disk: the
    result shows them, and afterwards they would only add to the wait. A deleted file's
    diff is left for whoever reads it (a 5,000-file delete shows counts, not diffs)."""
    for item in applied:
        if not item.deleted:
            item.diff  # noqa: B018  (cached_property: computed and kept)


def _write_all(fs: Beneath, change_set: ChangeSet, states: dict[Path, FileState]) -> None:
    """Write every change, then remove the emptied folders. Every new content is staged
    and synced first, all at once, so a big change waits for the disk twice, not per
    file. An OSError names the workspace-relative path it happened on."""
    staged: dict[str, str] = {}
    for change in change_set.changes:
        if change.data is not None:
            state = states[change.path]
            staged[state.rel] = _on(state.rel, fs.stage, state.rel, change.data, _written_mode(state, change))
    sync_paths(list(staged.values()), fsync_one=fs.fsync)
    for change in change_set.changes:
        if change.link is not None:  # nothing to sync: a symlink's target is in its folder's entry
            rel = states[change.path].rel
            staged[rel] = _on(rel, fs.stage_link, rel, change.link)
    _perform([partial(_change_one, fs, states[change.path].rel, change, staged) for change in change_set.changes])
    removed = [fs.relative(directory) for directory in change_set.remove_dirs]
    for rel in removed:
        # rmdir, not a recursive removal: a folder holding anything the plan did not list
        # (a file created meanwhile) must fail the change, not lose that file unrecorded.
        _on(rel, fs.rmdir, rel)
    gone = set(removed)
    fs.sync_folders(rel for rel in [*(s.rel for s in states.values()), *removed] if rel.rpartition("/")[0] not in gone)


def _on(rel: str, operation: Callable[..., T], *args: object) -> T:
    """``operation(*args)``, with an OSError naming ``rel`` (the *at calls only know a name)."""
    try:
        return operation(*args)
    except OSError as err:
        raise OSError(err.errno, err.strerror, rel) from None


_PARALLEL_FROM = 16
"""Fewer steps than this run one after the other: threads would cost more than they save."""
_STEP_THREADS = 8


def _perform(steps: list[Callable[[], None]]) -> None:
    """Run every step; after a failure no further step starts, and a failure is raised
    once the running ones finish. Many steps are shared among a few threads: replacing or
    deleting a file whose blocks are on disk waits for the disk to free them (with ext4's
    ``discard`` option, a noticeable wait per file), and those waits overlap."""
    if len(steps) < _PARALLEL_FROM:
        for step in steps:
            step()
        return
    failed = threading.Event()

    def run_share(share: list[Callable[[], None]]) -> None:
        for step in share:
            if failed.is_set():
                return
            try:
                step()
            except BaseException:
                failed.set()
                raise

    with ThreadPoolExecutor(_STEP_THREADS, thread_name_prefix="opencode-change") as pool:
        shares = [pool.submit(run_share, steps[n::_STEP_THREADS]) for n in range(_STEP_THREADS)]
    for share in shares:
        if (error := share.exception()) is not None:
            raise error


def _change_one(fs: Beneath, rel: str, change: Change, staged: dict[str, str]) -> None:
    """Put one change on disk: rename its staged content or symlink over it (the temp
    file has the mode the change names, else the old file's), or remove it (a symlink
    itself, never its target)."""
    if rel not in staged:
        _on(rel, fs.unlink, rel)
    else:
        _on(rel, fs.replace, staged[rel], rel)
