"""Path resolution and the workspace boundary.

Every tool turns the model's path into a real location here, so the boundary is checked
in one place: on the canonical path (`..` and symlinks resolved), which is where a read
or write would actually land. A symlink inside the tree that points outside is outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.errors import OutsideWorkspaceError, ToolError


class Workspace:
    """The project directory the assistant may touch. `root` is stored canonical, so a
    workspace opened through a symlink compares equal to its resolved paths."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self._root_text = str(self.root)
        self._below = self._root_text if self._root_text.endswith("/") else f"{self._root_text}/"
        """What the text of every path below the root starts with."""
        self._identity = _identity(self.root)

    def assert_present(self) -> None:
        """Raise ToolError when the root is no longer the folder this workspace opened
        (removed, or another made in its place): a change there would land outside the
        project, and its record in a database that went with the folder."""
        if self._identity is not None and _identity(self.root) != self._identity:
            raise ToolError(
                f"The workspace {self.root} was removed or replaced while opencode ran, so no tool can work "
                "in it (nothing was read, changed or run): start opencode again in an existing folder"
            )

    def resolve(self, path: str | Path) -> Path:
        """The canonical absolute path (missing components are fine); raises
        OutsideWorkspaceError when it lands outside the root."""
        canonical = _canonical(self._absolute(path), path)
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
        entry = _entry_location(absolute, path)
        self._check_inside(path, entry)
        return entry

    def relative(self, abs_path: Path) -> str:
        """The POSIX path relative to the root ("." for the root itself)."""
        rel = self._relative_text(abs_path)
        if rel is None:
            raise OutsideWorkspaceError(
                f"{abs_path} is outside the workspace {self.root}: use a path inside it"
            )
        return rel

    def subject(self, path: str | Path, *, follow_symlinks: bool = True) -> str:
        """What permission rules are matched against: the normalised workspace-relative
        POSIX path ("./tmp/../main.go" -> "main.go"), or the absolute POSIX path for a path
        outside. Symlinks are followed, so a rule on "tmp/*" cannot be used to write a file
        elsewhere through a link; pass follow_symlinks=False when the link itself is the
        object (deleting a symlink)."""
        absolute = self._absolute(path)
        location = _canonical(absolute, path) if follow_symlinks else _entry_location(absolute, path)
        if self._contains(location):
            return self.relative(location)
        return location.as_posix()

    def is_inside(self, path: str | Path) -> bool:
        """Whether the canonical path is the root or below it."""
        return self._contains(_canonical(self._absolute(path), path))

    def _absolute(self, path: str | Path) -> Path:
        """Expand "~" and join a relative path to the root; nothing is resolved yet.
        A NUL character is refused here, for every tool: no file name can hold one."""
        if "\0" in str(path):
            raise ToolError(f"The path {str(path)!r} contains a NUL character, which no file name can hold: remove it")
        # `~name` of no user stays as written, as the shell leaves it (pathlib would raise).
        expanded = Path(os.path.expanduser(path))
        return expanded if expanded.is_absolute() else self.root / expanded

    def _contains(self, absolute: Path) -> bool:
        return self._relative_text(absolute) is not None

    def _relative_text(self, absolute: Path) -> str | None:
        """The root-relative POSIX text of ``absolute``, None when it is not the root or
        below it. What ``relative_to`` answers, on the path's text: a Path's text is
        already normal (one "/" between names, none at the end), so a path is below the
        root when its text starts with the root's and a "/", and the change path asks
        this for every file it touches. Only a root of "/" needs one more look: "//x"
        is a path of its own to POSIX, not "/x"."""
        text = str(absolute)
        if text == self._root_text:
            return "."
        if text.startswith(self._below) and not (self._below == "/" and text.startswith("//")):
            return text[len(self._below) :]
        return None

    def _check_inside(self, given: str | Path, absolute: Path) -> None:
        if not self._contains(absolute):
            raise OutsideWorkspaceError(f"{given} is outside the workspace {self.root}: use a path inside it")


def _entry_location(absolute: Path, given: str | Path) -> Path:
    """Parent folders canonicalised, the last name kept as is (a symlink is not followed)."""
    if absolute.name in ("", ".."):  # the filesystem root, or a path ending in "..": no name to keep
        return _canonical(absolute, given)
    return _canonical(absolute.parent, given) / absolute.name


def _canonical(absolute: Path, given: str | Path) -> Path:
    """``absolute.resolve()``, with what the OS refuses on the way as a one-line error."""
    try:
        return absolute.resolve()
    except RuntimeError:  # pathlib's report of a symlink loop
        raise ToolError(f"{given} goes through a loop of symbolic links: fix or remove the link") from None
    except OSError as err:  # a folder that cannot be searched, a name too long
        raise ToolError(f"{given} cannot be used: {err.strerror or err}; check the path") from None


def _identity(folder: Path) -> tuple[int, int] | None:
    """(device, inode) of ``folder``, None when there is none to stat."""
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return info.st_dev, info.st_ino
