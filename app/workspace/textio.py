"""Text files in and out, byte for byte.

Tools work on text with "\\n" line endings; the file on disk keeps what it had: a UTF-8
BOM, CRLF line endings, a missing final newline, its permission bits. `read_text_file`
records those, `TextFile.render` puts them back, `write_atomic` replaces the file so a
crash or a full disk never leaves it half written.

Mixed line endings: `render` writes every line with the file's majority ending (ties go
to "\\n"), so only uniformly-ended files round-trip exactly. A tool that must keep mixed
endings line by line (the patch tool) works on `TextFile.raw` itself.
"""

from __future__ import annotations

import codecs
import os
import secrets
import stat
import sys
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.errors import BinaryFileError

Newline = Literal["\n", "\r\n"]

_SNIFF_BYTES = 8192
_TEMP_PREFIX = ".opencode-tmp-"
_TEMP_NAME_TAIL = 25
"""Characters of the file's name a temp name ends with (at most 100 bytes of UTF-8): the
temp name stays under the 255-byte limit however long the file's own name is."""


def is_binary(data: bytes) -> bool:
    """True for data the tools must not treat as text: a NUL byte in the first 8 KiB, or
    a first 8 KiB that is not UTF-8 (a multi-byte character cut at the 8 KiB edge is
    fine). Other encodings (Latin-1, UTF-16) count as binary: we could not write them
    back unchanged."""
    sample = data[:_SNIFF_BYTES]
    if b"\0" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=len(data) <= _SNIFF_BYTES)
    except UnicodeDecodeError:
        return True
    return False


@dataclass(frozen=True)
class TextFile:
    """A text file's content with LF endings, and what `render` needs to restore it."""

    text: str
    bom: bool
    newline: Newline
    final_newline: bool
    mode: int | None
    raw: bytes

    @classmethod
    def new(cls, text: str) -> TextFile:
        """A file that does not exist yet: LF endings, no BOM, default mode."""
        text = text.replace("\r\n", "\n")
        return cls(text, bom=False, newline="\n", final_newline=text.endswith("\n"), mode=None, raw=b"")

    def render(self, text: str) -> bytes:
        """`text` (any "\\r\\n" first treated as "\\n") encoded as this file is: its line
        ending, its BOM. The final newline is whatever `text` has: callers decide."""
        text = text.replace("\r\n", "\n")
        if self.newline == "\r\n":
            text = text.replace("\n", "\r\n")
        data = text.encode("utf-8")
        return codecs.BOM_UTF8 + data if self.bom else data


def read_text_file(path: Path) -> TextFile:
    """Read a UTF-8 text file; raises BinaryFileError for anything else."""
    return decode_text(path.read_bytes(), path, mode=stat.S_IMODE(path.stat().st_mode))


def decode_text(raw: bytes, path: Path, mode: int | None = None) -> TextFile:
    """Decode bytes already read from `path` (the change path reads each file once, under
    its lock); raises BinaryFileError for anything that is not UTF-8 text."""
    bom = raw.startswith(codecs.BOM_UTF8)
    body = raw[len(codecs.BOM_UTF8) :] if bom else raw
    if is_binary(body):
        raise _not_text(path)
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError:  # invalid UTF-8 past the sniffed first 8 KiB
        raise _not_text(path) from None
    crlf = decoded.count("\r\n")
    newline: Newline = "\r\n" if crlf > decoded.count("\n") - crlf else "\n"
    text = decoded.replace("\r\n", "\n")
    return TextFile(text=text, bom=bom, newline=newline, final_newline=text.endswith("\n"), mode=mode, raw=raw)


def _not_text(path: Path) -> BinaryFileError:
    return BinaryFileError(
        f"{path.name} is a binary file (or not UTF-8 text): only UTF-8 text files can be read or edited"
    )


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` all at once: a temp file in the same folder is written,
    synced and renamed over it, so readers see the old or the new file, never a part.
    Permission bits: `mode` if given, else the existing file's, else 0o644 less the umask.
    Missing parent folders are created. `path` should be canonical: a symlink at `path`
    would be replaced by a regular file. On failure the old file is left untouched."""
    temp = _write_temp(path, data, mode, sync=True)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_path(path.parent)


def stage_atomic(path: Path, data: bytes, mode: int | None = None) -> Path:
    """The first half of `write_atomic` for a batch of files: `data` in a temp file
    beside `path` (same folders created, same mode rule), neither synced nor renamed.
    The caller syncs the temp files (`sync_paths`), renames each over its path with
    `os.replace`, then syncs their folders: two syncs for the whole batch instead of two
    fsyncs per file, which on a 500-file patch is most of the time spent."""
    return _write_temp(path, data, mode, sync=False)


_FSYNC_EACH_UP_TO = 8
_SYNC_ALL_UNWRITTEN_LIMIT = 64 << 20
_FSYNC_THREADS = 8


def sync_paths(paths: Collection[Path], *, sync_all_limit: int = _SYNC_ALL_UNWRITTEN_LIMIT) -> None:
    """Make these files or folders durable (a folder: its entries, i.e. renames).

    A few are fsynced one by one. For more, one `os.sync()` is far cheaper than an fsync
    each (each fsync pays for its own journal commit), but it
    flushes every file of the machine: when the page cache holds more than
    `sync_all_limit` bytes not yet written (a build writing gigabytes), waiting for all
    of it could take seconds, so the paths are then fsynced from several threads at once
    (ext4 joins concurrent fsyncs into shared journal commits)."""
    if len(paths) <= _FSYNC_EACH_UP_TO:
        for path in paths:
            _fsync_path(path)
    elif _unwritten_bytes() <= sync_all_limit:
        os.sync()
    else:
        with ThreadPoolExecutor(_FSYNC_THREADS, thread_name_prefix="opencode-fsync") as pool:
            for _ in pool.map(_fsync_path, paths):
                pass


def _unwritten_bytes() -> int:
    """Bytes in the page cache waiting to be written (Linux: Dirty + Writeback of
    /proc/meminfo); elsewhere unknown, taken as too many to flush them all."""
    try:
        with open("/proc/meminfo", "rb") as meminfo:
            lines = meminfo.read().splitlines()
    except OSError:
        return sys.maxsize
    return sum(int(line.split()[1]) * 1024 for line in lines if line.startswith((b"Dirty:", b"Writeback:")))


def _write_temp(path: Path, data: bytes, mode: int | None, *, sync: bool) -> Path:
    """A new temp file beside `path` holding `data`. Its folder is assumed to exist and
    made only when it does not: a batch's files are mostly in existing folders, and each
    check would cost a system call per file."""
    if mode is None:
        mode = _mode_of(path)
    try:
        return _fill_temp(path, data, mode, sync=sync)
    except FileNotFoundError:
        if path.parent.is_dir():
            raise
    make_folders(path.parent)
    return _fill_temp(path, data, mode, sync=sync)


def make_folders(folder: Path) -> None:
    """``folder`` and the missing folders above it, top down, one ``mkdir`` each: what
    ``Path.mkdir(parents=True)`` does, without its recursion per level (a file 1,000
    folders deep, such as a revert of a deleted deep tree, ended in RecursionError)."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            each.mkdir()
        except FileExistsError:
            if not each.is_dir():  # a file where a folder must be: the write fails as it would have
                raise


def _fill_temp(path: Path, data: bytes, mode: int | None, *, sync: bool) -> Path:
    temp = path.with_name(f"{_TEMP_PREFIX}{secrets.token_hex(6)}-{path.name[-_TEMP_NAME_TAIL:]}")
    # os.open applies the umask to 0o644; an explicit or inherited mode is set exactly below.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            if sync:
                os.fsync(handle.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _mode_of(path: Path) -> int | None:
    """The permission bits of the file at `path`, None when there is none."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _fsync_path(path: Path) -> None:
    """fsync by path; on a folder it makes renames in it durable (POSIX keeps them in
    the directory entry)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
