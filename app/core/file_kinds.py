"""What is at a path that is not a regular file, in the words of an error message."""

from __future__ import annotations

import stat

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}
SPECIAL_TYPES = frozenset({stat.S_IFIFO, stat.S_IFSOCK, stat.S_IFCHR, stat.S_IFBLK})
"""The file types no file is read from: opening a FIFO blocks until someone writes, a
socket cannot be opened, and /dev/zero or /dev/urandom never end."""


def kind_of(mode: int) -> str:
    """"a directory", "a FIFO", "a socket", "a character device" or "a block device" by
    the file type in ``mode``; "a special file" for any other."""
    return _KINDS.get(stat.S_IFMT(mode), "a special file")
