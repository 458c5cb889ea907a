"""What each session has read and written, and one lock per file.

Tools refuse to change a file the model has not seen, or one that changed on disk since
it was seen: the model's edit was planned against content that is no longer there.
"Changed" is judged by a stat fingerprint (mtime_ns, size, inode), which catches editors
that save by writing in place and those that rename a new file over the old one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager as AsyncContextManager
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from app.core.errors import StaleFileError
from app.store.seen import SeenFile, SeenFiles
from app.workspace.paths import Workspace


class Fingerprint(NamedTuple):
    mtime_ns: int
    size: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> Fingerprint | None:
        """The file's fingerprint now, or None when it does not exist (nor can: a folder
        on its path became a file)."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(st.st_mtime_ns, st.st_size, st.st_ino)


class FileRecord(NamedTuple):
    """A read or write by one session: what the file looked like then (None: absent)."""

    fingerprint: Fingerprint | None
    at: datetime


class _PathLock:
    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holders and waiters; the entry is dropped when it falls to 0


class FileRecords:
    """One per runtime. Records and locks are keyed by canonical path, so two spellings
    of one file share them. `workspace`, when given, makes error messages show
    workspace-relative paths. `persisted` (the store's SeenFiles), when given, keeps what
    each session has seen across processes; locks stay in memory."""

    def __init__(self, workspace: Workspace | None = None, persisted: SeenFiles | None = None) -> None:
        self._workspace = workspace
        self._persisted = persisted
        self._reads: dict[tuple[str, Path], FileRecord] = {}
        self._writes: dict[tuple[str, Path], FileRecord] = {}
        self._seen: dict[Path, dict[str, FileRecord]] = {}  # per file: each session's later of read and write
        self._locks: dict[Path, _PathLock] = {}

    def record_read(self, session_id: str, path: Path) -> FileRecord:
        return self._record(self._reads, session_id, path)

    def record_write(self, session_id: str, path: Path) -> FileRecord:
        """Also counts as having seen the file: the session knows what it just wrote."""
        return self._record(self._writes, session_id, path)

    def record_changes(self, session_id: str, paths: Iterable[Path]) -> None:
        """After the change path wrote or removed files: written and seen, one stat each
        and one transaction for all (a 5,000-file delete calls this once)."""
        saved = []
        now = datetime.now()
        for canonical in _canonical_many(paths):
            record = FileRecord(Fingerprint.of(canonical), now)
            key = (session_id, canonical)
            self._reads[key] = self._writes[key] = record
            self._seen.setdefault(canonical, {})[session_id] = record
            saved.append((canonical, record))
        self._persist(session_id, saved)

    def last_read(self, session_id: str, path: Path) -> FileRecord | None:
        return self._reads.get((session_id, _canonical(path)))

    def last_write(self, session_id: str, path: Path) -> FileRecord | None:
        return self._writes.get((session_id, _canonical(path)))

    def seen_by(self, path: Path) -> dict[str, FileRecord]:
        """Each session that read or wrote the file, with what it looked like then: the
        watcher tells an outside change from our own writes by these fingerprints."""
        return dict(self._seen.get(_canonical(path), {}))

    def seen_paths(self) -> list[Path]:
        """Every file some session read or wrote in this process."""
        return list(self._seen)

    def assert_fresh(self, session_id: str, path: Path) -> None:
        """Raise StaleFileError unless this session read or wrote the file and it is
        unchanged on disk since the later of the two."""
        seen = self._seen.get(_canonical(path), {}).get(session_id) or self._load(session_id, _canonical(path))
        name = self._display(path)
        if seen is None:
            raise StaleFileError(f"You must read {name} with the view tool before changing it")
        now = Fingerprint.of(path)
        if now == seen.fingerprint:
            return
        when = seen.at.strftime("%H:%M:%S")
        if now is None:
            raise StaleFileError(
                f"{name} was deleted since you last read it (at {when}): check the path, or create it with the write tool"
            )
        raise StaleFileError(
            f"{name} was modified since you last read it (at {when}): read it again with the view tool before editing"
        )

    def lock(self, path: Path) -> AsyncContextManager[None]:
        """Hold the one lock of this file (by canonical path) for a read-modify-write."""
        return self._hold(_canonical(path))

    @asynccontextmanager
    async def _hold(self, key: Path) -> AsyncIterator[None]:
        entry = self._locks.setdefault(key, _PathLock())
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._locks[key]

    @asynccontextmanager
    async def lock_many(self, paths: Iterable[Path]) -> AsyncIterator[None]:
        """Hold several files' locks (a multi-file patch). Taken in the order of their
        canonical paths' text, so two callers with overlapping sets cannot deadlock (the
        text sorts without the part-by-part comparison of Path, which a folder delete of
        thousands of files would otherwise spend most of its locking in)."""
        keys = sorted(set(_canonical_many(paths)), key=str)
        async with AsyncExitStack() as stack:
            for key in keys:
                await stack.enter_async_context(self._hold(key))
            yield

    @property
    def lock_count(self) -> int:
        """Locks currently held or waited for (unused ones are dropped)."""
        return len(self._locks)

    def _record(self, table: dict[tuple[str, Path], FileRecord], session_id: str, path: Path) -> FileRecord:
        record = FileRecord(Fingerprint.of(path), datetime.now())
        key = (session_id, _canonical(path))
        table[key] = record
        self._seen.setdefault(key[1], {})[session_id] = record
        self._persist(session_id, [(key[1], record)])
        return record

    def _persist(self, session_id: str, records: list[tuple[Path, FileRecord]]) -> None:
        if self._persisted is None or not records:
            return
        self._persisted.save(
            session_id,
            ((str(path), _seen_file(record)) for path, record in records),
        )

    def _load(self, session_id: str, key: Path) -> FileRecord | None:
        """What another process of this session recorded, kept in memory from then on."""
        if self._persisted is None or (stored := self._persisted.load(session_id, str(key))) is None:
            return None
        fingerprint = _fingerprint(stored)
        record = FileRecord(fingerprint, datetime.fromtimestamp(stored.seen_at))
        self._seen.setdefault(key, {})[session_id] = record
        return record

    def _display(self, path: Path) -> str:
        canonical = _canonical(path)
        if self._workspace is not None and self._workspace.is_inside(canonical):
            return self._workspace.relative(canonical)
        return str(path)


def _canonical(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _canonical_many(paths: Iterable[Path]) -> list[Path]:
    """`_canonical` of each path, each folder resolved once: a batch's files share a few
    folders, and realpath makes one lstat per component of every path it is given. The
    name is then followed only if it is itself a symlink, as realpath would."""
    folders: dict[str, Path] = {}
    canonical = []
    for path in paths:
        parent, name = os.path.split(path)
        if name in ("", ".", ".."):
            canonical.append(_canonical(path))
            continue
        folder = folders.get(parent)
        if folder is None:
            folder = folders[parent] = _canonical(Path(parent))
        entry = folder / name
        canonical.append(_canonical(entry) if entry.is_symlink() else entry)
    return canonical


def _seen_file(record: FileRecord) -> SeenFile:
    """How a record is stored: a missing file's fingerprint is three NULLs."""
    fingerprint = record.fingerprint
    if fingerprint is None:
        return SeenFile(None, None, None, record.at.timestamp())
    return SeenFile(*fingerprint, record.at.timestamp())


def _fingerprint(stored: SeenFile) -> Fingerprint | None:
    """The stored fingerprint, None where the file did not exist."""
    if stored.mtime_ns is None or stored.size is None or stored.inode is None:
        return None
    return Fingerprint(stored.mtime_ns, stored.size, stored.inode)
