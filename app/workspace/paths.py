"""Path resolution and the workspace boundary.

Every tool turns the model's path into a real location here, so the boundary is checked
in one place: on the canonical path (`..` and symlinks resolved), which is where a read
or write would actually land. A symlink inside the tree that points outside is outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.errors import OutsideWorkspaceError, ToolError


class Workspace:
    """The project directory the assistant may touch. `root` is stored canonical, so a
    workspace opened through a symlink compares equal to its resolved paths."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()

    def resolve(self, path: str | Path) -> Path:
        """The canonical absolute path (missing components are fine); raises
        OutsideWorkspaceError when it lands outside the root."""
        canonical = self._absolute(path).resolve()
        self._check_inside(path, canonical)
        return canonical

    def resolve_for_write(self, path: str | Path) -> Path:
        """Like `resolve`, for writes and deletes: also refuses the root itself, which no
        tool may overwrite or remove."""
        canonical = self.resolve(path)
        if canonical == self.root:
            raise ToolError(
                f"{path} is the workspace root {self.root} itself: name a file or folder inside it"
            )
        return canonical

    def lexical(self, path: str | Path) -> Path:
        """Where the directory entry itself lives, WITHOUT following a final symlink: the
        parent folders are canonicalised, the last name is kept. The delete tool removes a
        symlink, never its target, so it needs this location. Raises OutsideWorkspaceError
        when the `..`-collapsed path or the entry's real parent is outside the root."""
        absolute = self._absolute(path)
        self._check_inside(path, Path(os.path.normpath(absolute)))
        entry = _entry_location(absolute)
        self._check_inside(path, entry)
        return entry

    def relative(self, abs_path: Path) -> str:
        """The POSIX path relative to the root ("." for the root itself)."""
        if not self._contains(abs_path):
            raise OutsideWorkspaceError(
                f"{abs_path} is outside the workspace {self.root}: use a path inside it"
            )
        return abs_path.relative_to(self.root).as_posix()

    def subject(self, path: str | Path, *, follow_symlinks: bool = True) -> str:
        """What permission rules are matched against: the normalised workspace-relative
        POSIX path ("./tmp/../main.go" -> "main.go"), or the absolute POSIX path for a path
        outside. Symlinks are followed, so a rule on "tmp/*" cannot be used to write a file
        elsewhere through a link; pass follow_symlinks=False when the link itself is the
        object (deleting a symlink)."""
        absolute = self._absolute(path)
        location = absolute.resolve() if follow_symlinks else _entry_location(absolute)
        if self._contains(location):
            return self.relative(location)
        return location.as_posix()

    def is_inside(self, path: str | Path) -> bool:
        """Whether the canonical path is the root or below it."""
        return self._contains(self._absolute(path).resolve())

    def _absolute(self, path: str | Path) -> Path:
        """Expand "~" and join a relative path to the root; nothing is resolved yet."""
        expanded = Path(path).expanduser()
        return expanded if expanded.is_absolute() else self.root / expanded

    def _contains(self, absolute: Path) -> bool:
        return absolute.is_relative_to(self.root)

    def _check_inside(self, given: str | Path, absolute: Path) -> None:
        if not self._contains(absolute):
            raise OutsideWorkspaceError(f"{given} is outside the workspace {self.root}: use a path inside it")


def _entry_location(absolute: Path) -> Path:
    """Parent folders canonicalised, the last name kept as is (a symlink is not followed)."""
    if absolute.name in ("", ".."):  # the filesystem root, or a path ending in "..": no name to keep
        return absolute.resolve()
    return absolute.parent.resolve() / absolute.name
