"""Notice files changed outside the agent, and tell the front-ends.

Staleness itself needs no watcher: `FileRecords.assert_fresh` compares stat fingerprints,
so an edit of a file changed behind our back is refused with "read it again" anyway. The
watcher adds the news: a `FileChangedOnDisk` event as soon as it happens, so the sidebar
and the TUI can refresh without waiting for the model's next edit.

Cost: `watchfiles.awatch` (Rust `notify`, inotify on Linux) waits in a worker thread that
wakes every `step_ms` only to check the stop flag; nothing scans the tree while idle.
Bursts (a git checkout) arrive grouped by watchfiles' debounce and are coalesced here to
one verdict per path, judged from the disk as it is now, not from the raw event kinds.

What is watched: each folder of the workspace but the ignored ones (a `.venv`,
`node_modules`, `.git`, the data directory), one watch per folder, listed by a walk in a
thread. notify's own recursive watch would walk every folder, dependencies included,
holding the interpreter (the UI stalls a quarter of a second for a checkout with a
virtualenv, seconds with a large `node_modules`). A folder made later is watched from the
batch that reports it: the watch starts again over the new list of folders, and the
files seen so far are judged once, for what changed while no watch was set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from app.bus import Bus
from app.workspace.events import ChangeKind, FileChangedOnDisk
from app.workspace.file_records import FileRecord, FileRecords, Fingerprint
from app.workspace.paths import Workspace

if TYPE_CHECKING:
    from watchfiles import Change

log = logging.getLogger(__name__)

# Never reported, even for a file a session read. watchfiles' DefaultFilter already skips
# these and more (.hg, .tox, .mypy_cache ...) plus editor swap files; named here so the
# promise is visible and survives a change of its defaults.
IGNORED_DIRS = (".git", ".venv", "node_modules", "__pycache__")


class WorkspaceWatcher:
    """One per runtime. `ignore_paths` are folders whose changes are noise (the data
    directory: the SQLite database changes on every message)."""

    def __init__(
        self,
        workspace: Workspace,
        records: FileRecords,
        bus: Bus,
        *,
        ignore_paths: Iterable[Path] = (),
        debounce_ms: int = 1600,
        step_ms: int = 100,
    ) -> None:
        self._workspace = workspace
        self._records = records
        self._bus = bus
        # Matched as plain string prefixes: the trailing separator keeps `.opencode` from
        # also hiding `.opencode.json` beside it.
        self._ignore_paths = tuple(os.path.join(Path(p).resolve(), "") for p in ignore_paths)
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        # A threading.Event because the Rust side polls it from the watch thread, and
        # because Runtime.close() may stop us after the event loop is gone.
        self._stop = threading.Event()
        self._task: asyncio.Task[None] | None = None
        self._reported: dict[Path, Fingerprint | None] = {}  # last state announced per path
        self.failure: str | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start watching (a no-op when already running). When this returns the tree is
        watched: the task lets us go on just before awatch's first step, which builds
        its inotify watches before it awaits, so before we run again."""
        if self._task is not None and self._stop.is_set():
            await self.aclose()  # a stop still winding down: let it finish first
        if self.running:
            return
        self._stop.clear()
        self.failure = None
        watching = asyncio.Event()
        self._task = asyncio.create_task(self._run(watching), name="workspace-watcher")
        await watching.wait()

    def stop(self) -> None:
        """Ask the watch thread to end; it notices within one step. Synchronous, so
        `Runtime.close()` can call it from anywhere."""
        self._stop.set()

    async def aclose(self) -> None:
        """Stop and wait until the watch thread has let go of the tree."""
        self.stop()
        if self._task is not None:
            await self._task
            self._task = None

    async def _run(self, watching: asyncio.Event) -> None:
        """Watch until stopped; ``watching`` is set as the first watch begins (or fails)."""
        try:
            # In threads: compiling the filter's patterns, walking the tree and loading
            # what awatch needs take a while.
            wanted = await asyncio.to_thread(self._watch_filter)
            folders = await asyncio.to_thread(self._folders)
            await asyncio.to_thread(_load_watch_support)
            from watchfiles import Change, awatch  # imported by the threads above already

            while not self._stop.is_set():
                until = _WatchEnds(self._stop)
                watching.set()
                async for changes in awatch(
                    *folders,
                    watch_filter=wanted,
                    debounce=self._debounce_ms,
                    step=self._step_ms,
                    stop_event=until,
                    recursive=False,
                ):
                    if any(change == Change.added and os.path.isdir(raw) for change, raw in changes):
                        until.set()  # a new folder: the watch starts again over it
                    for path in sorted({Path(raw) for _, raw in changes}):
                        await self._judge(path)
                if self._stop.is_set():
                    return
                folders = await asyncio.to_thread(self._folders)
                for path in self._records.seen_paths():
                    if wanted(Change.modified, str(path)):
                        await self._judge(path)
        except Exception as error:  # inotify limit reached, root removed: lose the news, not the app
            self.failure = f"file watching stopped: {error}"
            log.warning("%s (edits still refuse stale files)", self.failure)
        finally:
            watching.set()

    def _folders(self) -> list[str]:
        """The workspace's root and every folder below it that is not ignored, without
        following links: the folders to watch. A walk of our own, with a stack: a tree a
        thousand folders deep is no deeper for it."""
        skipped = set(_ignored_names())
        root = str(self._workspace.root)
        found: list[str] = []
        pending = [root]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    pending += [
                        entry.path
                        for entry in entries
                        if entry.name not in skipped
                        and entry.is_dir(follow_symlinks=False)
                        and not os.path.join(entry.path, "").startswith(self._ignore_paths)
                    ]
            except OSError:
                if folder != root:
                    continue  # gone meanwhile, or not ours to read: no watch for it
                # The root is watched all the same: the watch says why it cannot be.
            found.append(folder)
        return found

    def _watch_filter(self) -> Callable[[Change, str], bool]:
        """DefaultFilter judges every part of the path it is given; it gets only the part
        inside the workspace, so a workspace inside a `node_modules` folder is watched."""
        from watchfiles import DefaultFilter

        default = DefaultFilter(ignore_dirs=_ignored_names())
        root, ignored = os.path.join(self._workspace.root, ""), self._ignore_paths

        def wanted(change: Change, path: str) -> bool:
            return not path.startswith(ignored) and default(change, path.removeprefix(root))

        return wanted

    async def _judge(self, path: Path) -> None:
        """Publish FileChangedOnDisk when a file some session has seen now differs from
        every fingerprint we recorded (matching one means the change was our own write, or
        a session already re-read it)."""
        if not self._records.seen_by(path):
            return  # nobody has seen it: nobody to tell
        async with self._records.lock(path):  # the change path writes and records under it
            seen = self._records.seen_by(path)
            now = Fingerprint.of(path)
        if any(record.fingerprint == now for record in seen.values()):
            self._reported.pop(path, None)
            return
        if path in self._reported and self._reported[path] == now:
            return  # the same state came back in a later batch (attribute events)
        self._reported[path] = now
        self._bus.publish(
            FileChangedOnDisk(self._workspace.relative(path), _change_kind(now, seen), tuple(sorted(seen)))
        )


def _change_kind(now: Fingerprint | None, seen: dict[str, FileRecord]) -> ChangeKind:
    """From what the sessions knew to what is on disk: an editor saving by rename shows
    up as deleted+added events, but for the session the file was modified."""
    if now is None:
        return "deleted"
    if all(record.fingerprint is None for record in seen.values()):
        return "added"
    return "modified"


def _load_watch_support() -> None:
    """What awatch's first step loads if it is not loaded yet: anyio's support for
    asyncio (awatch runs each step through anyio) and ``platform`` (it asks whether it runs
    on WSL, where it polls). Loaded there, they would hold the event loop (the UI) for tens
    of milliseconds; running nothing through anyio here, in a thread, loads them there."""
    import platform  # noqa: F401  (loaded for awatch)

    import anyio

    anyio.run(asyncio.sleep, 0, backend="asyncio")


def _ignored_names() -> tuple[str, ...]:
    """The names of the folders never watched nor reported, wherever they are."""
    from watchfiles import DefaultFilter

    return (*DefaultFilter.ignore_dirs, *IGNORED_DIRS)


class _WatchEnds:
    """What the watch thread asks between steps (``is_set``): has the watcher stopped, or
    has this watch been told to end (``set``: a new folder to watch; awatch sets it too
    when its task is cancelled)?"""

    def __init__(self, stopped: threading.Event) -> None:
        self._stopped = stopped
        self._ended = threading.Event()

    def is_set(self) -> bool:
        return self._stopped.is_set() or self._ended.is_set()

    def set(self) -> None:
        self._ended.set()
