"""The delete tool (docs/specs/000-delete.md): remove a file, a folder or a symlink, with every deleted
file recorded in history (its last content, then a deleted version) so nothing is lost.

This module only decides *what* goes: it finds the entry (a symlink itself, never its
target), walks a folder without following links, and builds the plan. The change path
(``app.tools.changes``) does the rest: locks, the permission question (every file inside
a folder is a subject, so a deny rule on ``*.go`` cannot be dodged by deleting the
folder), removal with rollback, and history recorded only after the removal succeeded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from app.core.errors import OutsideWorkspaceError, ToolError
from app.permission import PermissionPreview
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.changes import AppliedFile, Change, ChangeSet, Snapshot, apply_changes
from app.tools.descriptions import tool_description
from app.tools.reading import special_kind
from app.workspace import Workspace
from app.workspace.textio import is_binary

Kind = Literal["file", "directory", "empty_directory", "symlink"]
_NOT_KEPT = "which this tool does not remove: history cannot keep it, so its deletion could not be taken back"
"""Why a FIFO, socket or device is never deleted (and reading a FIFO would block)."""
_LISTED_ENTRIES = 50
"""How many deleted entries the model's result names one by one."""


class DeleteParams(ToolParams):
    path: str = Field(
        description="The file, directory or symlink to delete: relative to the workspace root, "
        "or absolute (inside the workspace)"
    )


@dataclass
class _Tree:
    """A folder's contents, walked without following symlinks, sorted by path."""

    files: list[Path] = field(default_factory=list)
    links: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class _Target:
    """What the call deletes: the entry itself (a symlink is not followed) and its kind."""

    path: Path
    rel: str
    kind: Kind
    tree: _Tree
    link_target: str = ""


def _plural(count: int, noun: str) -> str:
    """Plain digits ("1500 lines"): the result's "N files deleted, M lines removed" is a contract."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _line_count(data: bytes) -> int:
    """Lines as the diff stats count them (a last line without newline counts); a binary
    file, or one that is not UTF-8 past the sniffed start, has none."""
    if not data or is_binary(data):
        return 0
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _walk(workspace: Workspace, folder: Path) -> _Tree:
    tree = _Tree()
    try:
        entries = list(_entries(folder))
    except OSError as err:
        raise ToolError(
            f"Cannot list {workspace.relative(Path(err.filename or folder))}: {err.strerror or err}; "
            "nothing was deleted"
        ) from None
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            tree.links.append(path)
        elif entry.is_dir(follow_symlinks=False):
            tree.folders.append(path)
        elif entry.is_file(follow_symlinks=False):
            tree.files.append(path)
        else:
            raise ToolError(
                f"Cannot delete {workspace.relative(folder)}/: {workspace.relative(path)} is "
                f"{special_kind(entry.stat(follow_symlinks=False).st_mode) or 'no regular file'}, {_NOT_KEPT}; "
                "stop what uses it, or delete the other entries one by one"
            )
    tree.files.sort()
    tree.links.sort()
    tree.folders.sort()
    return tree


def _entries(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry under ``folder``, depth first, never descending into a symlink. A stack
    of listings, not recursion: a tree 1,000 folders deep is as fine as a flat one."""
    pending = [iter(_listing(folder))]
    while pending:
        entry = next(pending[-1], None)
        if entry is None:
            pending.pop()
            continue
        yield entry
        if entry.is_dir(follow_symlinks=False):
            pending.append(iter(_listing(entry.path)))


def _listing(folder: str | Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as scan:
        return list(scan)


def _find_target(ctx: ToolContext, path: str) -> _Target:
    """The entry to delete, checked before anything is asked: inside the workspace (a
    hard limit no rule lifts), not the root, existing."""
    if not path.strip():
        raise ToolError(
            "path is required: give the file or directory to delete, relative to the workspace root"
        )
    ctx.workspace.assert_present()
    try:
        entry = ctx.workspace.lexical(path)
    except OutsideWorkspaceError as err:  # spec 000's wording first, then which path and why
        raise OutsideWorkspaceError(f"Cannot delete files outside the working directory: {err}") from None
    if entry == ctx.workspace.root:
        raise ToolError(
            f"{path} is the workspace root itself, which cannot be deleted: name a file or folder inside it"
        )
    try:
        mode = os.lstat(entry).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(
            f"File or directory does not exist: {path}; nothing was deleted (check the path with ls)"
        ) from None
    except OSError as err:  # a name too long, a folder that cannot be searched
        raise ToolError(f"Cannot delete {path}: {err.strerror or err}; nothing was deleted") from None
    rel = ctx.workspace.relative(entry)
    if stat.S_ISLNK(mode):
        return _Target(entry, rel, "symlink", _Tree(links=[entry]), link_target=os.readlink(entry))
    _refuse_own_data(ctx, entry, rel)
    if stat.S_ISDIR(mode):
        tree = _walk(ctx.workspace, entry)
        return _Target(entry, rel, "directory" if tree.files or tree.links else "empty_directory", tree)
    if stat.S_ISREG(mode):
        return _Target(entry, rel, "file", _Tree(files=[entry]))
    raise ToolError(f"{rel} is {special_kind(mode) or 'no regular file'}, {_NOT_KEPT}")


def _refuse_own_data(ctx: ToolContext, entry: Path, rel: str) -> None:
    """The session database lives in the workspace (data.directory): deleting it, or a
    folder holding it, would lose the very history that makes deletions recoverable."""
    data_dir = ctx.config.data_dir(ctx.workspace.root).resolve()
    if entry.is_relative_to(data_dir) or data_dir.is_relative_to(entry):
        raise ToolError(
            f"{rel} holds opencode's own data (sessions and file history, in {data_dir.name}/), "
            "which this tool never deletes: choose another path"
        )


class _Planner:
    """Builds the change set from the locked snapshot, and keeps the line counts it saw
    so the result reports exactly what the question showed."""

    def __init__(self, ctx: ToolContext, target: _Target) -> None:
        self.ctx = ctx
        self.target = target
        self.lines: dict[str, int] = {}

    def __call__(self, snapshot: Snapshot) -> ChangeSet:
        target, tree = self.target, self.target.tree
        for path in tree.files:
            state = snapshot[path]
            if state.data is None:
                raise ToolError(
                    f"{state.rel} was removed or replaced while the delete was being prepared; "
                    "nothing was deleted: check the path with ls and call delete again"
                )
            self.lines[state.rel] = _line_count(state.data)
        for path in tree.links:
            if snapshot[path].link is None:
                raise ToolError(
                    f"{self.ctx.workspace.relative(path)} is no longer a symlink (it was replaced while the delete was "
                    "being prepared); nothing was deleted: check the path with ls and call delete again"
                )
        changes = [Change(path, None) for path in [*tree.files, *tree.links]]
        if target.kind == "file":
            return ChangeSet(
                changes,
                title=f"Delete {target.rel} ({_plural(self.total_lines, 'line')})",
                ask_subject=target.rel,
            )
        if target.kind == "symlink":
            return ChangeSet(
                changes,
                title=f"Delete symlink {target.rel}",
                ask_subject=target.rel,
                preview=PermissionPreview(
                    "text", f"Remove the symlink {target.rel} -> {target.link_target}; its target is kept."
                ),
            )
        return self._folder_change_set(changes)

    def _folder_change_set(self, changes: list[Change]) -> ChangeSet:
        target, tree, relative = self.target, self.target.tree, self.ctx.workspace.relative
        count, limit = len(tree.files), self.ctx.config.tools.delete.max_files
        over_limit = count > limit
        if target.kind == "empty_directory":
            title = f"Delete empty directory {target.rel}/"
        elif over_limit:
            title = f"Delete {target.rel}/ ({_plural(count, 'file')}, more than the {limit} limit)"
        else:
            title = f"Delete {target.rel}/ ({_plural(count, 'file')}, {_plural(self.total_lines, 'line')})"
        return ChangeSet(
            changes,
            title=title,
            ask_subject=target.rel,
            subjects=[target.rel, *(relative(p) for p in tree.folders)],
            preview=PermissionPreview("files", title, files=list(self.lines.items())),
            # Deepest first, so each folder is empty when its turn comes.
            remove_dirs=[*reversed(tree.folders), target.path],
            person_only=(
                f"{target.rel}/ holds {_plural(count, 'file')}, more than tools.delete.maxFiles ({limit})"
                if over_limit
                else None
            ),
        )

    @property
    def total_lines(self) -> int:
        return sum(self.lines.values())


class DeleteTool(Tool):
    name = "delete"
    params = DeleteParams
    description = tool_description("delete")

    async def run(self, params: DeleteParams, ctx: ToolContext) -> ToolResult:
        target = _find_target(ctx, params.path)
        planner = _Planner(ctx, target)
        applied = await apply_changes(ctx, self.name, [*target.tree.files, *target.tree.links], planner)
        files = [a for a in applied if a.path in planner.lines]  # the links have no lines
        metadata = _metadata(ctx, target, files, planner.lines)
        return ToolResult(_output(target, metadata), metadata, title=target.rel)


def _metadata(
    ctx: ToolContext, target: _Target, deleted: list[AppliedFile], lines: dict[str, int]
) -> dict[str, Any]:
    """What front-ends draw (documented in docs/tools.md, section delete)."""
    return {
        "path": target.rel,
        "kind": target.kind,
        "files": [{"path": a.path, "lines": lines[a.path]} for a in deleted],
        "links": [ctx.workspace.relative(p) for p in target.tree.links],
        "deleted_count": len(deleted),
        "removed_lines": sum(lines.values()),
        "diff": deleted[0].diff if target.kind == "file" else "",
    }


def _output(target: _Target, metadata: dict[str, Any]) -> str:
    """The model's summary: counts first, then which files went."""
    links = metadata["links"]
    if target.kind == "symlink":
        return f"Deleted symlink {target.rel}; the file or folder it pointed to was not touched."
    if target.kind == "empty_directory":
        return f"Deleted empty directory: {target.rel}"
    summary = (
        f"{_plural(metadata['deleted_count'], 'file')} deleted, "
        f"{_plural(metadata['removed_lines'], 'line')} removed"
    )
    if target.kind == "file":
        return f"{summary} ({target.rel})."
    listed = [f"- {f['path']} ({_plural(f['lines'], 'line')})" for f in metadata["files"]]
    listed += [f"- {link} (a symlink: removed, its target not touched)" for link in links]
    if len(listed) > _LISTED_ENTRIES:
        listed[_LISTED_ENTRIES:] = [f"- ... and {len(listed) - _LISTED_ENTRIES} more"]
    return "\n".join([f"{summary} ({target.rel}/):", *listed])
