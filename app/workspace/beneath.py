"""File operations that stay beneath one folder, whatever happens to the path meanwhile.

A path is checked (inside the workspace, allowed by the rules) before anything touches
it, but a folder on it may be swapped for a symlink to the outside between that check
and the write. So every operation here walks the path one name at a time from an open
descriptor of the base folder, opening each folder with ``O_NOFOLLOW | O_DIRECTORY``,
and acts with the ``*at`` calls on the last folder's descriptor: a symlink met on the way
fails the operation (``PathSwappedError``) instead of redirecting it, and a folder
swapped after it was opened is still the folder that was checked.

``Beneath`` keeps the descriptors of the folders it opened until it is closed, so a
batch of files in a few folders opens each folder once. It is safe to share between
threads. Temp files are named ``.opencode-tmp-<random>-<end of the name>``: recovery at
start recognises and removes the ones a crash left behind.

Test seam: the environment variable ``TEST_OPENCODE_CRASH_AT_FILE_OP=N`` ends the
process with SIGKILL just before its Nth file operation (creating a temp file or a
folder, a rename, an unlink, a rmdir, a symlink), so tests can stop a change at every
step and check what the next start recovers.
"""

from __future__ import annotations

import errno
import functools
import itertools
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from app.core.errors import ToolError
from app.workspace.textio import sync_paths

TEMP_PREFIX = ".opencode-tmp-"
_TEMP_NAME_TAIL = 25
"""Characters of the file's name a temp name ends with (at most 100 bytes of UTF-8): the
temp name stays under the 255-byte limit however long the file's own name is."""

_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""O_PATH (Linux): a folder that may be searched but not listed (mode 0711) can still be
walked through; what lists or syncs a folder opens it for reading itself (``_readable``)."""
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""O_NONBLOCK: a FIFO swapped in for a file opens at once (and is then refused by type)
instead of blocking until someone writes to it."""
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

CRASH_VARIABLE = "TEST_OPENCODE_CRASH_AT_FILE_OP"


class PathSwappedError(ToolError):
    """A folder on the path is not a folder any more (a symlink or a file took its place)."""


class _CrashSeam:
    """Counts file operations and kills the process at the one the test variable names."""

    def __init__(self) -> None:
        value = os.environ.get(CRASH_VARIABLE, "")
        self._at = int(value) if value.isdigit() else 0
        self._count = itertools.count(1)

    def step(self) -> None:
        if self._at and next(self._count) == self._at:
            os.kill(os.getpid(), signal.SIGKILL)


_seam = _CrashSeam()


def file_operation() -> None:
    """Called before every change on disk (the test seam's counter)."""
    _seam.step()


def parts_of(rel: str) -> tuple[str, ...]:
    """The names of a base-relative POSIX path; "." and empty names dropped, ".." and an
    absolute path refused."""
    parts = rel.split("/")
    if ".." in parts or rel.startswith("/"):
        raise ValueError(f"{rel!r} is not a path below the base folder")
    if "" in parts or "." in parts:  # the change path's own paths never hold them: one check in C
        return tuple(part for part in parts if part and part != ".")
    return tuple(parts)


class Beneath:
    """Operations on paths relative to ``base`` (a canonical folder), never through a symlink.

    Paths are base-relative POSIX strings ("src/app.py"). Use as a context manager, or
    call ``close``."""

    def __init__(self, base: Path) -> None:
        self.base = Path(base)
        self._lock = threading.Lock()
        self._folders: dict[tuple[str, ...], int] = {(): os.open(self.base, _DIR_FLAGS & ~os.O_NOFOLLOW)}

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def relative(self, path: Path) -> str:
        """The base-relative POSIX path of an absolute ``path`` below the base."""
        return Path(path).relative_to(self.base).as_posix()

    def close(self) -> None:
        with self._lock:
            folders, self._folders = self._folders, {}
        for fd in folders.values():
            os.close(fd)

    # -- folders -----------------------------------------------------------------------

    def folder(self, parts: tuple[str, ...], *, create: bool = False) -> int:
        """The descriptor of the folder at ``parts``, opened name by name without following
        a symlink; missing folders are made when ``create`` (mode 0o777 less the umask).
        Only the folders asked for are kept open: those passed on the way are closed, so
        a file 1,000 folders deep costs one kept descriptor, not 1,000. Raises
        FileNotFoundError for a missing one, PathSwappedError for a symlink or a file
        where a folder should be."""
        with self._lock:
            fd = self._folders.get(parts)
            if fd is not None:
                return fd
            depth = len(parts)
            while parts[:depth] not in self._folders:
                depth -= 1
            fd, passing = self._folders[parts[:depth]], False
            try:
                for end in range(depth + 1, len(parts) + 1):
                    child = self._open_child(fd, parts[:end], create)
                    if passing:
                        os.close(fd)
                    fd, passing = child, True
            except BaseException:
                if passing:
                    os.close(fd)
                raise
            self._folders[parts] = fd
            return fd

    def _open_child(self, parent: int, parts: tuple[str, ...], create: bool) -> int:
        try:
            return self._open_folder(parent, parts)
        except FileNotFoundError:
            if not create:
                raise
            file_operation()
            try:
                os.mkdir(parts[-1], 0o777, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile: opened below like any other
            return self._open_folder(parent, parts)

    def _open_folder(self, parent: int, parts: tuple[str, ...]) -> int:
        try:
            return os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
        except OSError as err:
            if err.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            raise self._swapped(parts) from None

    def _swapped(self, parts: tuple[str, ...]) -> PathSwappedError:
        shown = "/".join(parts)
        return PathSwappedError(
            f"{shown} is no longer a folder (a symlink or a file took its place during the call): "
            "nothing was changed through it; check the path with ls and try again"
        )

    def parent(self, rel: str, *, create: bool = False) -> tuple[int, str]:
        """(descriptor of the folder holding ``rel``, its last name)."""
        parts = parts_of(rel)
        if not parts:
            raise ValueError("the base folder itself has no parent here")
        return self.folder(parts[:-1], create=create), parts[-1]

    # -- looking and reading -------------------------------------------------------------

    def lstat(self, rel: str) -> os.stat_result | None:
        """The entry itself (a symlink not followed); None when there is none: nothing
        there, or no folder on its path (a file, or a symlink, where one should be)."""
        try:
            fd, name = self.parent(rel)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError, PathSwappedError):
            return None

    def read(self, rel: str) -> tuple[bytes, int] | None:
        """(bytes, permission bits) of the regular file at ``rel``; None when there is no
        regular file there (nothing, a folder, a symlink, a FIFO, a socket, a device, no
        folder on its path): it is never opened for reading unless it is one."""
        try:
            fd, name = self.parent(rel)
            handle = os.open(name, _READ_FLAGS, dir_fd=fd)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PathSwappedError):
            return None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENXIO):  # the file itself is a symlink, or a socket
                return None
            raise
        try:
            info = os.fstat(handle)
            if not stat.S_ISREG(info.st_mode):
                return None
            return _read_all(handle, info.st_size), stat.S_IMODE(info.st_mode)
        finally:
            os.close(handle)

    def open_file(self, rel: str) -> int:
        """A descriptor for reading what is at ``rel``, opened without blocking (a FIFO
        opens at once: the caller checks the type on the descriptor before reading).
        Raises FileNotFoundError, or PathSwappedError for a symlink on the way or at the end."""
        fd, name = self.parent(rel)
        try:
            return os.open(name, _READ_FLAGS, dir_fd=fd)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise self._swapped(parts_of(rel)) from None
            raise

    def readlink(self, rel: str) -> str:
        fd, name = self.parent(rel)
        return os.readlink(name, dir_fd=fd)

    def writable(self, rel: str) -> bool:
        """Whether the OS would let us write the file in place (its mode, our user)."""
        fd, name = self.parent(rel)
        return os.access(name, os.W_OK, dir_fd=fd, follow_symlinks=False)

    def temp_names(self, folder_rel: str) -> list[str]:
        """The names of our temp files in a folder (none if it is missing or not a folder)."""
        try:
            fd = self.folder(parts_of(folder_rel))
        except (FileNotFoundError, NotADirectoryError, PathSwappedError):
            return []
        with _readable(fd) as listed:
            return [name for name in os.listdir(listed) if name.startswith(TEMP_PREFIX)]

    # -- changing ------------------------------------------------------------------------

    def stage(self, rel: str, data: bytes, mode: int | None = None, *, sync: bool = False) -> str:
        """``data`` in a new temp file beside ``rel`` (missing folders made); returns the
        temp's base-relative path. Permission bits: ``mode``, else the existing file's,
        else 0o644 less the umask."""
        fd, name = self.parent(rel, create=True)
        if mode is None:
            mode = _mode_at(fd, name)
        temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}-{name[-_TEMP_NAME_TAIL:]}"
        file_operation()
        handle = os.open(temp, _CREATE_FLAGS, 0o644, dir_fd=fd)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                if mode is not None:
                    os.fchmod(out.fileno(), mode)
                if sync:
                    os.fsync(out.fileno())
        except BaseException:
            os.unlink(temp, dir_fd=fd)
            raise
        return _sibling(rel, temp)

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target`` (a file, or a symlink itself: never followed)."""
        source_fd, source_name = self.parent(source)
        target_fd, target_name = self.parent(target, create=True)
        file_operation()
        os.replace(source_name, target_name, src_dir_fd=source_fd, dst_dir_fd=target_fd)

    def unlink(self, rel: str, *, missing_ok: bool = False) -> None:
        """Remove a file or a symlink itself."""
        try:
            fd, name = self.parent(rel)
            file_operation()
            os.unlink(name, dir_fd=fd)
        except (FileNotFoundError, NotADirectoryError):
            if not missing_ok:
                raise

    def rmdir(self, rel: str) -> None:
        """Remove an empty folder (a folder holding anything fails: nothing unrecorded is lost)."""
        fd, name = self.parent(rel)
        parts = parts_of(rel)
        file_operation()
        os.rmdir(name, dir_fd=fd)
        with self._lock:
            for key in [key for key in self._folders if key[: len(parts)] == parts]:
                os.close(self._folders.pop(key))

    def mkdir(self, rel: str, mode: int = 0o777) -> None:
        fd, name = self.parent(rel, create=True)
        file_operation()
        os.mkdir(name, mode, dir_fd=fd)

    def symlink(self, target: str, rel: str) -> None:
        fd, name = self.parent(rel, create=True)
        file_operation()
        os.symlink(target, name, dir_fd=fd)

    def stage_link(self, rel: str, target: str) -> str:
        """A symlink to ``target`` under a temp name beside ``rel`` (as ``stage`` does for
        a file), for ``replace`` to put in place at once; returns the temp's base-relative path."""
        temp = _sibling(rel, f"{TEMP_PREFIX}{secrets.token_hex(6)}-{rel.rpartition('/')[2][-_TEMP_NAME_TAIL:]}")
        self.symlink(target, temp)
        return temp

    def fsync(self, rel: str) -> None:
        """Make the file at ``rel`` durable (opened without following a symlink)."""
        fd, name = self.parent(rel)
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)

    def sync_folders(self, rels: Iterable[str]) -> None:
        """Make durable the folders holding these paths (their renames and removals), each
        once, as ``sync_paths`` does (a few fsyncs, or one sync); a folder gone meanwhile
        has nothing left to sync."""
        sync_paths({rel.rpartition("/")[0] for rel in rels}, fsync_one=self._fsync_folder)

    def _fsync_folder(self, rel: str) -> None:
        try:
            with _readable(self.folder(parts_of(rel))) as folder:
                os.fsync(folder)
        except (FileNotFoundError, NotADirectoryError, PathSwappedError):
            pass


@contextmanager
def _readable(folder: int) -> Iterator[int]:
    """The folder held by ``folder`` (maybe an O_PATH descriptor) opened for reading."""
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
    try:
        yield fd
    finally:
        os.close(fd)


def _read_all(fd: int, size_hint: int) -> bytes:
    chunks = []
    remaining = max(size_hint, 0) + 1  # one byte more: a file that grew is read to its end
    while chunk := os.read(fd, max(remaining, 1 << 16)):
        chunks.append(chunk)
        remaining = 1 << 20
    return b"".join(chunks)


@functools.cache
def new_file_mode() -> int | None:
    """The permission bits ``stage`` gives a new file: 0o644 less the umask, read once
    from /proc/self/status (Linux), since asking os.umask changes it for every thread
    meanwhile; None where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o644 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return None


def _mode_at(fd: int, name: str) -> int | None:
    """The permission bits of the regular file ``name`` in folder ``fd``, None if there is none."""
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def _sibling(rel: str, name: str) -> str:
    head = rel.rpartition("/")[0]
    return f"{head}/{name}" if head else name
