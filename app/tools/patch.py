"""The patch tool: ``edit.patch`` of docs/specs/002-patch.md, exposed to models as ``patch``.

Parsing and placing hunks are the pure functions of ``app.tools.text.patch``; this
module turns the patch's paths into locked workspace files, lets the planner read them
from the change path's snapshot, and hands the final state of every file to
``apply_changes`` (permission, atomic writes with rollback, history, records).

Every path is known before anything is read (``patch_targets``), so all of them, move
destinations included, are locked together, and every hunk of every file is placed
before the first byte is written: a patch that fails anywhere changes nothing.

The result is spec 002's JSON as text: ``{"ok": true, "summary": "A 1, M 2, D 0, R 0"}``
(sections that add, modify, delete and rename a file; plus
``"lsp_errors": {path: [...]}`` when language servers report errors, and ``"notes"``
when a hunk's added lines were re-indented to the file's level), and every
failure is a ``ToolError`` whose one-line message is ``{"ok": false, "error": ...}``.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import Field

from app.core.diff import Region
from app.core.errors import ToolError
from app.permission.effects import Effect
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.changes import AppliedFile, Change, ChangeSet, Snapshot, apply_changes
from app.tools.descriptions import tool_description
from app.tools.diagnostics import lsp_error_lines
from app.tools.text.patch import (
    DeleteFile,
    FileOp,
    Patch,
    PatchError,
    UpdateFile,
    parse_patch,
    patch_targets,
    plan_patch,
)
from app.workspace import Workspace, is_binary


class PatchParams(ToolParams):
    patch: str = Field(
        description="The whole patch text, from '*** Begin Patch' to '*** End Patch'."
    )
    workspace_root: str | None = Field(
        default=None,
        description="A folder inside the workspace that the patch's relative paths start from "
        "(default: the workspace root).",
    )
    dry_run: bool = Field(default=False, description="Check the patch and summarise it without writing anything.")
    allow_delete: bool = Field(default=False, description="Must be true for '*** Delete File:' sections.")
    allow_move: bool = Field(default=True, description="Set false to refuse '*** Move to:' renames.")


def _failure(err: ToolError) -> ToolError:
    """The same error (kind kept) with spec 002's JSON as its one-line message."""
    return type(err)(json.dumps({"ok": False, "error": str(err)}, ensure_ascii=False))


class PatchTool(Tool):
    name = "patch"
    params = PatchParams
    description = tool_description("patch")

    def parse(self, arguments: str | dict[str, Any] | None) -> ToolParams:
        try:
            return super().parse(arguments)
        except ToolError as err:
            raise _failure(err) from None

    async def run(self, params: PatchParams, ctx: ToolContext) -> ToolResult:
        try:
            return await _apply(params, ctx)
        except ToolError as err:
            raise _failure(err) from None


async def _apply(params: PatchParams, ctx: ToolContext) -> ToolResult:
    patch = parse_patch(params.patch)
    targets = patch_targets(patch, allow_delete=params.allow_delete, allow_move=params.allow_move)
    base = _base_dir(ctx.workspace, params.workspace_root, patch.workdir)
    files = _resolve_all(ctx.workspace, base, patch, targets)
    planner = _Planner(ctx, patch, files, allow_delete=params.allow_delete, allow_move=params.allow_move)
    # An update reads the file to place its hunks (and its errors would show what is there).
    updated = [files[path] for section, (path, _) in zip(patch.sections, targets, strict=True) if isinstance(section, UpdateFile)]
    applied = await apply_changes(ctx, "patch", list(files.values()), planner, reads=updated, dry_run=params.dry_run)
    answer: dict[str, Any] = {"ok": True, "summary": planner.summary}
    if planner.notes:
        answer["notes"] = planner.notes
    if not params.dry_run and (errors := await lsp_error_lines(ctx, [a.path for a in applied if not a.deleted])):
        answer["lsp_errors"] = errors  # spec 001 step 10, kept inside spec 002's JSON
    return ToolResult(
        output=json.dumps(answer, ensure_ascii=False),
        metadata=_metadata(ctx.workspace, applied, planner.moved_from, params.dry_run),
        title=_clip(planner.listing),
    )


def _base_dir(workspace: Workspace, workspace_root: str | None, workdir: str | None) -> Path:
    """The folder the patch's paths are relative to: ``workspace_root`` (default: the
    root), then, from there, the folder of a ``cd <dir> && apply_patch`` wrapper."""
    base = workspace.root
    if workspace_root is not None:
        base = _folder(workspace, base, workspace_root, "workspace_root")
    if workdir is not None:
        base = _folder(workspace, base, workdir, "cd")
    return base


def _folder(workspace: Workspace, base: Path, path: str, name: str) -> Path:
    """``path`` (relative to ``base``, or absolute) as an existing folder in the workspace;
    ``name`` says which argument gave it."""
    try:
        folder = workspace.resolve(path if base == workspace.root else base / path)
    except ToolError as err:
        raise ToolError(f"{name}: {err}") from None
    if not folder.is_dir():
        raise ToolError(f"{name} {path} is not a folder; pass an existing folder inside the workspace")
    return folder


def _resolve_all(
    workspace: Workspace, base: Path, patch: Patch, targets: list[tuple[str, str | None]]
) -> dict[str, Path]:
    """Each path of the patch (relative to ``base``) to its canonical location, checked
    on disk: a symlink leading outside the workspace is refused here."""
    files: dict[str, Path] = {}
    owner: dict[Path, str] = {}
    for section, (path, new_path) in zip(patch.sections, targets, strict=True):
        if (isinstance(section, DeleteFile) or new_path is not None) and _is_symlink(base / path):
            # Resolving would delete or move the link's target, not the link.
            raise PatchError(
                f"{section.title}: {path} is a symbolic link; the patch tool does not delete or move links "
                "(use the delete tool, or patch the file it points to)"
            )
        for rel in (path, new_path):
            if rel is None or rel in files:
                continue
            canonical = _located(workspace, base, rel, section.title)
            if canonical in owner:
                raise PatchError(
                    f"{section.title}: {rel} and {owner[canonical]} are the same file (through a symlink); "
                    "name each file by one path"
                )
            files[rel], owner[canonical] = canonical, rel
    return files


def _is_symlink(path: Path) -> bool:
    """Whether ``path`` is a symbolic link; False for a path the OS refuses (a name over
    255 bytes), which ``_located`` then reports, where Path.is_symlink raises."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _located(workspace: Workspace, base: Path, rel: str, title: str) -> Path:
    """``rel``'s canonical location inside the workspace, asked of the OS once, so a path
    it refuses (a name too long, a symbolic link loop, a folder that cannot be searched)
    is a clear error before anything is locked or read."""
    try:  # named as the patch names it when its paths are relative to the root
        canonical = workspace.resolve_for_write(rel if base == workspace.root else base / rel)
    except ToolError as err:
        raise type(err)(f"{title}: {err}") from None
    try:
        os.lstat(canonical)
    except (FileNotFoundError, NotADirectoryError):
        pass  # a file still to create, or under a file (refused when planning)
    except OSError as err:
        raise PatchError(f"{title}: {rel}: {err.strerror or err}; check the path") from None
    return canonical


class _Planner:
    """The plan given to ``apply_changes``: plans the patch over the locked snapshot and
    keeps what the result needs (the summary, the files by section, where moved files
    came from)."""

    def __init__(
        self, ctx: ToolContext, patch: Patch, files: dict[str, Path], *, allow_delete: bool, allow_move: bool
    ) -> None:
        self.ctx = ctx
        self.patch = patch
        self.files = files
        self.allow_delete = allow_delete
        self.allow_move = allow_move
        self.summary = ""
        self.listing = ""
        self.notes: list[str] = []
        self.moved_from: dict[Path, Path] = {}

    def __call__(self, snapshot: Snapshot) -> ChangeSet:
        def read(rel: str) -> bytes | None:
            state = snapshot[self.files[rel]]
            if state.data is None:
                self._refuse_non_file(rel, state.path)
            return state.data

        plan = plan_patch(self.patch, read, allow_delete=self.allow_delete, allow_move=self.allow_move)
        _refuse_non_text(plan.ops)
        self.summary, self.listing = plan.summary(), plan.listing()
        self.notes = [f"{op.path}, {note}" for op in plan.ops for note in op.notes]
        final = self._final_states(plan.ops)
        regions = self._regions(plan.ops)
        relative = self.ctx.workspace.relative
        effects = [
            Effect("delete" if path in final and final[path] is None else "write", relative(path))
            for path in self.files.values()
        ]
        return ChangeSet(
            # A file that ends as it began (a no-op hunk, added then deleted) is not touched.
            changes=[
                # A moved file keeps its mode (an executable stays one), as mv keeps it.
                Change(path, data, regions=regions[path], mode=self._mode_from(snapshot, path))
                for path, data in final.items()
                if data != snapshot[path].data
            ],
            title=f"Patch: {_clip(self.listing)}",
            remove_dirs=self._emptied_folders(final),
            # Every Add/Update/Move target is judged as a write (edit rules too), every Delete
            # File and Move source as a delete (delete rules too): allow_delete is the model's
            # own flag, not the user's.
            ask_subject=self._ask_subject(effects),
        )

    def _emptied_folders(self, final: dict[Path, bytes | None]) -> list[Path]:
        """The folders the patch leaves empty (it deletes or moves away all they hold, and
        the folders inside them emptied so), deepest first: removed after their last file,
        as git leaves no empty folder behind. Never the workspace root."""
        root = self.ctx.workspace.root
        gone = {path for path, data in final.items() if data is None}
        kept = {parent for path, data in final.items() if data is not None for parent in path.parents}
        pending = {path.parent for path in gone}
        emptied: set[Path] = set()
        while pending:
            folder = max(pending, key=lambda path: len(path.parts))  # deepest first
            pending.discard(folder)
            if folder in kept or root not in folder.parents:
                continue
            try:
                entries = {Path(entry.path) for entry in os.scandir(folder)}
            except OSError:
                continue
            if entries <= gone | emptied:
                emptied.add(folder)
                pending.add(folder.parent)
        return sorted(emptied, key=lambda path: len(path.parts), reverse=True)

    def _mode_from(self, snapshot: Snapshot, path: Path) -> int | None:
        """The permission bits a move's source had, for its destination; None otherwise."""
        source = self.moved_from.get(path)
        return None if source is None else snapshot[source].mode

    def _refuse_non_file(self, rel: str, path: Path) -> None:
        """Where no file was found, one must be possible: not a folder, and not under a
        "folder" that is really a file (the write would fail with a puzzling OS error)."""
        if path.is_dir():
            raise PatchError(f"{rel} is a folder; the patch tool changes files only")
        for parent in path.parents:
            if parent.exists():  # the nearest existing one must be a folder
                if not parent.is_dir():
                    raise PatchError(
                        f"{rel}: {self.ctx.workspace.relative(parent)} is a file, not a folder, "
                        f"so {rel} cannot be in it; choose another path"
                    )
                return

    def _final_states(self, ops: tuple[FileOp, ...]) -> dict[Path, bytes | None]:
        """What each file holds after the whole patch (sections may touch a file twice)."""
        final: dict[Path, bytes | None] = {}
        for op in ops:
            path = self.files[op.path]
            if op.kind in ("delete", "move"):
                final[path] = None
            if op.new_path is None:
                if op.new_bytes is not None:
                    final[path] = op.new_bytes
                continue
            destination = self.files[op.new_path]
            final[destination] = op.new_bytes
            source = self.moved_from.pop(path, path)
            if source != destination:
                self.moved_from[destination] = source
        return final

    def _regions(self, ops: tuple[FileOp, ...]) -> dict[Path, tuple[Region, ...] | None]:
        """Each file's changed line ranges (for its diff), known when a single update
        section made its whole change; None for any other file."""
        regions: dict[Path, tuple[Region, ...] | None] = {}
        for op in ops:
            for rel in (op.path, op.new_path):
                if rel is not None:
                    path = self.files[rel]
                    regions[path] = op.regions if op.kind == "update" and path not in regions else None
        return regions

    def _ask_subject(self, effects: list[Effect]) -> str:
        """The path the one question is about: the first one whose effect neither the rules
        nor an answer for this session allow (a combined string could be matched by an
        allow rule it should not; the question names what is new in it)."""
        permissions, agent, session_id = self.ctx.permissions, self.ctx.agent, self.ctx.session_id

        def settled(effect: Effect) -> bool:
            if permissions.evaluate("patch", effect.target, agent, session_id=session_id).action == "allow":
                return True
            return permissions.answered_for_session(session_id, "patch", effect) == "allow"

        return next((effect.target for effect in effects if not settled(effect)), effects[0].target)


def _refuse_non_text(ops: tuple[FileOp, ...]) -> None:
    """Hunks are placed on lines of text; a binary or non-UTF-8 file could not be stored
    in history as it is, so it is refused rather than patched blind."""
    for op in ops:
        if op.kind in ("update", "move") and not _is_utf8_text(op.old_bytes or b""):
            raise PatchError(
                f"Update File {op.path}: not UTF-8 text (binary or another encoding); "
                "the patch tool changes UTF-8 text files only"
            )


def _is_utf8_text(data: bytes) -> bool:
    if is_binary(data):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _metadata(
    workspace: Workspace, applied: list[AppliedFile], moved_from: dict[Path, Path], dry_run: bool
) -> dict[str, Any]:
    """For front-ends: the combined diff, totals, and one entry per file changed."""
    sources = {workspace.relative(new): workspace.relative(old) for new, old in moved_from.items()}
    return {
        "diff": "".join(item.diff for item in applied),
        "additions": sum(item.additions for item in applied),
        "deletions": sum(item.deletions for item in applied),
        "dry_run": dry_run,
        "files": [
            {
                "path": item.path,
                "additions": item.additions,
                "deletions": item.deletions,
                "deleted": item.deleted,
                "created": item.created,
                "moved_from": sources.get(item.path),
            }
            for item in applied
        ],
    }
