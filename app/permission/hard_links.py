"""The other names of a file: a hard link (`ln secrets/key.txt x`) is the same file under
a second name, so a read the rules deny by one name is denied by every name.

Only files with more than one link are looked up, by one walk of the workspace (git's own
folder and opencode's data folder left out) made the first time such a file is met in a
call, and at most ``MAX_ENTRIES`` entries long: beyond, the file is refused rather than
read with names unchecked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

MAX_ENTRIES = 200_000
_SKIPPED = frozenset({".git"})


class HardLinks:
    """The names inside ``root`` of each file with several links, found when first asked."""

    def __init__(self, root: Path, skipped: tuple[str, ...] = ()) -> None:
        self._root = root.as_posix().rstrip("/")
        self._skipped = {f"{self._root}/{name}" for name in skipped}
        self._names: dict[tuple[int, int], list[str]] | None = None
        self._complete = False

    def other_names(self, path: str | Path) -> list[str] | None:
        """The workspace-relative names of ``path``'s file besides its own ([] for a file
        with one link); None when the workspace is too big to know them all."""
        try:
            info = os.stat(path)
        except OSError:
            return []
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
            return []
        names = self._index()
        if names is None:
            return None
        own = os.path.realpath(path)
        return [name for name in names.get((info.st_dev, info.st_ino), []) if f"{self._root}/{name}" != own]

    def _index(self) -> dict[tuple[int, int], list[str]] | None:
        if self._names is None:
            self._names, self._complete = _walk(self._root, self._skipped)
        return self._names if self._complete else None


def _walk(root: str, skipped: set[str]) -> tuple[dict[tuple[int, int], list[str]], bool]:
    """Every file with several links under ``root``, by (device, inode), and whether the
    walk saw everything."""
    found: dict[tuple[int, int], list[str]] = {}
    seen = 0
    for here, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in _SKIPPED and f"{here}/{name}" not in skipped]
        for name in files:
            seen += 1
            if seen > MAX_ENTRIES:
                return found, False
            try:
                info = os.lstat(f"{here}/{name}")
            except OSError:
                continue
            if info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
                found.setdefault((info.st_dev, info.st_ino), []).append(f"{here}/{name}"[len(root) + 1 :])
    return found, True


def denied_name(links: HardLinks, path: str | Path, denied: Callable[[str], bool]) -> str | None:
    """The first other name of ``path``'s file that ``denied`` holds (or a note that they
    cannot all be known), None when no other name is denied."""
    names = links.other_names(path)
    if names is None:
        return "(its other names: too many files to look through)"
    return next((name for name in names if denied(name)), None)
