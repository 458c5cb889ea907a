"""The patch format of docs/specs/002-patch.md as pure functions: ``parse_patch`` then ``plan_patch``.

``plan_patch`` reads through a callback and writes nothing: it checks every path and
places every hunk of every file before it returns, so a patch that fails anywhere
changes nothing (Codex, by contrast, keeps the files it wrote before the failure).
The tool layer applies the returned ``FileOp``s through the workspace's one write path.

Sections apply in patch order over a virtual tree, so a later section sees what an
earlier one did (a file added then updated, updated twice, moved then updated).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from app.core.diff import Region
from app.tools.text.patch_match import FileText, apply_edits, locate_hunks
from app.tools.text.patch_parse import (
    AddFile,
    DeleteFile,
    Hunk,
    HunkLine,
    Patch,
    PatchError,
    Section,
    UpdateFile,
    parse_patch,
)

__all__ = [
    "AddFile",
    "DeleteFile",
    "FileOp",
    "Hunk",
    "HunkLine",
    "Patch",
    "PatchError",
    "PatchPlan",
    "UpdateFile",
    "parse_patch",
    "patch_targets",
    "plan_patch",
]

_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]|\\\\")

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True, slots=True)
class FileOp:
    """One file change, with the bytes before and after.

    ``path`` is the file the section names, ``new_path`` the destination of a move.
    ``old_bytes`` is what ``path`` held before (None for an add of a new file);
    ``new_bytes`` is what the written path holds after (None for a delete).
    ``existed`` says whether the written path (``new_path`` for a move) already held a
    file: an Add File over an existing file overwrites it like Codex, and the tool
    records that as a new version of the existing file.
    ``regions`` (updates and moves) are the line ranges of the old and new text that
    hold every change, for ``app.core.diff.unified_diff_regions``; None when that diff's
    line numbers would differ from ours (a BOM, a lone "\\r" line ending).
    ``notes`` say which hunks had their added lines re-indented to the file.
    """

    kind: Literal["add", "update", "delete", "move"]
    path: str
    new_path: str | None
    old_bytes: bytes | None
    new_bytes: bytes | None
    existed: bool
    regions: tuple[Region, ...] | None = field(default=None, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def letter(self) -> str:
        return _LETTERS[self.kind]

    def label(self) -> str:
        """``A path``, ``M path``, ``D path`` or ``R path -> new_path``."""
        if self.kind == "move":
            return f"R {self.path} -> {self.new_path}"
        return f"{self.letter} {self.path}"


_LETTERS = {"add": "A", "update": "M", "delete": "D", "move": "R"}


@dataclass(frozen=True, slots=True)
class PatchPlan:
    ops: tuple[FileOp, ...]

    def summary(self) -> str:
        """Spec 002's ``A x, M y, D z, R w``: how many sections add, update (modify),
        delete and move (rename) a file, always all four, e.g. ``A 1, M 2, D 0, R 1``."""
        letters = [op.letter for op in self.ops]
        return ", ".join(f"{letter} {letters.count(letter)}" for letter in "AMDR")

    def listing(self) -> str:
        """One entry per section in patch order, for people (titles, the question), e.g.
        ``A docs/notes.txt, M README.md, D tmp/old.txt, R src/old.swift -> src/new.swift``."""
        return ", ".join(op.label() for op in self.ops)


def plan_patch(
    patch: Patch, read: Reader, *, allow_delete: bool = False, allow_move: bool = True
) -> PatchPlan:
    """Validate the whole patch against the files ``read(rel_path)`` returns (None: no
    such file) and return the final bytes of every change; raises ``PatchError``.

    Paths and permissions are checked for every section before any file is read, so
    the cheap refusals come first and do not depend on file contents."""
    targets = patch_targets(patch, allow_delete=allow_delete, allow_move=allow_move)
    tree = _Tree(read)
    return PatchPlan(
        tuple(
            _plan(section, path, new_path, tree)
            for section, (path, new_path) in zip(patch.sections, targets, strict=True)
        )
    )


def patch_targets(
    patch: Patch, *, allow_delete: bool = False, allow_move: bool = True
) -> list[tuple[str, str | None]]:
    """Each section's (path, move destination or None), normalised and checked without
    reading anything: the tool needs every path up front to lock them all together.
    Raises ``PatchError`` for an absolute path, a path leaving the root, or a delete or
    move that is not allowed."""
    return [_checked_paths(section, allow_delete, allow_move) for section in patch.sections]


class _Tree:
    """The workspace as the patch sees it so far: earlier sections' results over ``read``."""

    def __init__(self, read: Reader) -> None:
        self._read = read
        self._changed: dict[str, bytes | None] = {}

    def get(self, path: str) -> bytes | None:
        return self._changed[path] if path in self._changed else self._read(path)

    def set(self, path: str, data: bytes | None) -> None:
        self._changed[path] = data


def _checked_paths(section: Section, allow_delete: bool, allow_move: bool) -> tuple[str, str | None]:
    """(path, destination or None), normalised; a move onto itself is a plain update."""
    path = _relative(section.path, section.title)
    if isinstance(section, DeleteFile) and not allow_delete:
        raise PatchError(f"{section.title}: deleting files is disabled; set allow_delete: true")
    if not isinstance(section, UpdateFile) or section.move_to is None:
        return path, None
    new_path = _relative(section.move_to, section.title)
    if new_path == path:
        return path, None
    if not allow_move:
        raise PatchError(
            f"{section.title}: moving files is disabled (Move to: {section.move_to}); "
            "set allow_move: true or drop the *** Move to: line"
        )
    return path, new_path


def _relative(raw: str, title: str) -> str:
    """The lexically normalised POSIX path; the tool still checks symlinks on disk."""
    if "\0" in raw:
        raise PatchError(f"{title}: the path contains a NUL character, which no file name can hold")
    if raw.startswith("/") or _WINDOWS_ABSOLUTE.match(raw):
        raise PatchError(
            f"{title}: absolute paths are not allowed: {raw}; use a path relative to the workspace"
        )
    path = posixpath.normpath(raw)
    if path == ".." or path.startswith("../"):
        raise PatchError(f"{title}: the path leaves the workspace: {raw}; use a path inside the workspace")
    if path == ".":
        raise PatchError(f"{title}: the path names the workspace itself: {raw}; name a file inside it")
    return path


def _plan(section: Section, path: str, new_path: str | None, tree: _Tree) -> FileOp:
    old = tree.get(path)
    if isinstance(section, AddFile):
        new = "".join(line + "\n" for line in section.lines).encode("utf-8")
        tree.set(path, new)
        return FileOp("add", path, None, old, new, existed=old is not None)
    if old is None:
        hint = "use *** Add File: to create it" if isinstance(section, UpdateFile) else "check the path"
        raise PatchError(f"{section.title}: file not found; {hint}")
    if isinstance(section, DeleteFile):
        tree.set(path, None)
        return FileOp("delete", path, None, old, None, existed=True)
    new, regions, notes = _updated(old, section.hunks, section.title)
    if new_path is None:
        tree.set(path, new)
        return FileOp("update", path, None, old, new, existed=True, regions=regions, notes=notes)
    existed = tree.get(new_path) is not None
    tree.set(path, None)
    tree.set(new_path, new)
    return FileOp("move", path, new_path, old, new, existed=existed, regions=regions, notes=notes)


def _updated(
    old: bytes, hunks: tuple[Hunk, ...], title: str
) -> tuple[bytes, tuple[Region, ...] | None, tuple[str, ...]]:
    file = FileText.decode(old)
    new, regions, notes = apply_edits(file, locate_hunks(file, hunks, title))
    return new, tuple(regions) if file.numbered_like_diffs else None, tuple(notes)
