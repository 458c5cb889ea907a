"""Putting entries back as the journal recorded them before a change set.

``restore`` is the one way a change is undone on disk: by the change path when a write
fails midway, and by ``recover`` at start for a change set a crash interrupted. It is
idempotent (an entry already as it was is left alone), so a crash during a recovery is
recovered by the next start. Folders come back first (shallowest first), then files
and symlinks; what the change created is removed; then our temp files in every folder
the change set touched (``.opencode-tmp-*``: staged, not yet renamed); last, the folders
it made for new files, when they are empty.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Sequence
from pathlib import Path

from app.core.errors import ToolError
from app.store.journal import Before, ChangeJournal
from app.workspace.beneath import Beneath
from app.workspace.lock import WorkspaceLock
from app.workspace.textio import sync_paths


def restore(fs: Beneath, entries: Sequence[Before]) -> None:
    """Put ``entries`` back (see the module doc); raises OSError or ToolError for one that
    cannot be, leaving no temp file of ours behind."""
    try:
        _put_all_back(fs, entries)
    finally:  # even when something could not be put back: each start would add a temp file
        for folder in {entry.path.rpartition("/")[0] for entry in entries}:
            for name in fs.temp_names(folder):
                fs.unlink(f"{folder}/{name}" if folder else name, missing_ok=True)
    made = sorted((e.path for e in entries if e.kind == "absent"), key=lambda path: -path.count("/"))
    for rel in made:  # the folders the change made for its new files, deepest first
        now = fs.lstat(rel)
        if now is not None and stat.S_ISDIR(now.st_mode):
            with contextlib.suppress(OSError):  # not empty: something else was put there since
                fs.rmdir(rel)


def _put_all_back(fs: Beneath, entries: Sequence[Before]) -> None:
    folders = sorted((e for e in entries if e.kind == "dir"), key=lambda e: e.path.count("/"))
    for entry in folders:
        if fs.lstat(entry.path) is None:
            fs.mkdir(entry.path, entry.mode if entry.mode is not None else 0o777)
    rewritten = [entry for entry in entries if entry.kind != "dir" and _put_back(fs, entry)]
    # Files are written as the change path writes them: all staged and synced at once,
    # then renamed (over a file or a symlink: never followed), then their folders synced.
    staged = {entry.path: fs.stage(entry.path, entry.data or b"", entry.mode) for entry in rewritten}
    sync_paths(list(staged.values()), fsync_one=fs.fsync)
    for rel, temp in staged.items():
        fs.replace(temp, rel)
    fs.sync_folders(entry.path for entry in entries)


def changed_files(entries: Sequence[Before]) -> int:
    """How many files and symlinks a change set touches: not the folders it removes, nor
    those it makes for its new files (which hold another entry)."""
    folders = {entry.path.rpartition("/")[0] for entry in entries}
    return sum(entry.kind != "dir" and entry.path not in folders for entry in entries)


def _put_back(fs: Beneath, entry: Before) -> bool:
    """Put back a symlink, or remove what the change created; True for a file whose
    content must be written back."""
    now = fs.lstat(entry.path)
    is_dir = now is not None and stat.S_ISDIR(now.st_mode)
    if is_dir and entry.kind in ("file", "link"):
        raise ToolError(
            f"{entry.path} is a folder now, where the change found a file: nothing of it was removed; "
            "move the folder away and the next start puts the file back"
        )
    if entry.kind == "absent":
        if now is not None and not is_dir:  # what the change created
            fs.unlink(entry.path, missing_ok=True)
        return False
    if entry.kind == "link":
        if now is not None and stat.S_ISLNK(now.st_mode) and fs.readlink(entry.path) == entry.link_target:
            return False
        if now is not None and not is_dir:
            fs.unlink(entry.path)
        fs.symlink(entry.link_target, entry.path)
        return False
    return fs.read(entry.path) != (entry.data, entry.mode)


def recover(root: Path, journal: ChangeJournal, lock: WorkspaceLock) -> list[str]:
    """Roll back every change set on this workspace a crash left unfinished; returns one
    line per change set for the front-end to show. Waits for the workspace lock first,
    so a change another process is making right now is left to finish, not undone."""
    if not journal.has_pending(str(root)):
        return []
    lines = []
    with lock.held(), Beneath(root) as fs:
        for change in journal.pending(str(root)):
            count = changed_files(change.entries)
            what = f"an interrupted change ({change.title}; {count} file{'s' * (count != 1)})"
            try:
                restore(fs, change.entries)
            except (OSError, ToolError) as err:
                lines.append(f"Could not roll back {what}: {err}; it stays recorded and is tried again at the next start")
                continue
            journal.abandon(change.id)
            lines.append(f"Rolled back {what}: every file it touched is as it was before it")
    return lines
