"""Text files in and out, byte for byte.

Tools work on text with "\\n" line endings; the file on disk keeps what it had: a UTF-8
BOM, CRLF line endings, a missing final newline, its permission bits. `read_text_file`
records those, `TextFile.render` puts them back; the change path writes the bytes
(`Beneath.stage`, a temp file then renamed over) so a crash or a full disk never leaves
a file half written.

Mixed line endings: `render` writes every line with the file's majority ending (ties go
to "\\n"), so only uniformly-ended files round-trip exactly. A tool that must keep mixed
endings line by line (the patch tool) works on `TextFile.raw` itself.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar, overload

from app.core.errors import BinaryFileError

Newline = Literal["\n", "\r\n"]
P = TypeVar("P")

_SNIFF_BYTES = 8192


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


class TextFile(NamedTuple):
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


def _fsync_path(path: Path) -> None:
    """fsync by path; on a folder it makes renames in it durable (POSIX keeps them in
    the directory entry)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_FSYNC_EACH_UP_TO = 8
_SYNC_ALL_UNWRITTEN_LIMIT = 64 << 20
_FSYNC_THREADS = 8


@overload
def sync_paths(paths: Collection[Path], *, sync_all_limit: int = ...) -> None: ...
@overload
def sync_paths(paths: Collection[P], *, fsync_one: Callable[[P], None], sync_all_limit: int = ...) -> None: ...
def sync_paths(
    paths: Collection[Any],
    *,
    fsync_one: Callable[[Any], None] = _fsync_path,
    sync_all_limit: int = _SYNC_ALL_UNWRITTEN_LIMIT,
) -> None:
    """Make these files or folders durable (a folder: its entries, i.e. renames), each
    by ``fsync_one`` (by default it opens a path; the change path passes one that walks
    from the workspace root, ``Beneath.fsync``).

    A few are fsynced one by one. For more, one `os.sync()` is far cheaper than an fsync
    each (each fsync pays for its own journal commit), but it
    flushes every file of the machine: when the page cache holds more than
    `sync_all_limit` bytes not yet written (a build writing gigabytes), waiting for all
    of it could take seconds, so the paths are then fsynced from several threads at once
    (ext4 joins concurrent fsyncs into shared journal commits)."""
    if len(paths) <= _FSYNC_EACH_UP_TO:
        for path in paths:
            fsync_one(path)
    elif _unwritten_bytes() <= sync_all_limit:
        os.sync()
    else:
        with ThreadPoolExecutor(_FSYNC_THREADS, thread_name_prefix="opencode-fsync") as pool:
            for _ in pool.map(fsync_one, paths):
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
