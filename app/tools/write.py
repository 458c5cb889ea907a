"""The write tool: create a file, or replace an existing file's whole content.

Also home of the small pieces every whole-file tool (write, edit, multiedit) shares:
resolving `filePath`, refusing directories, turning new text into bytes that keep the
file's BOM and line endings, and the result metadata front-ends draw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from app.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.changes import AppliedFile, Change, ChangeSet, FileState, Snapshot, apply_changes
from app.tools.diagnostics import with_lsp_errors
from app.workspace.textio import TextFile, decode_text

BOM = "\ufeff"

DESCRIPTION = """Create a file, or replace an existing file's whole content.

WHEN TO USE
- Creating a new file.
- Rewriting most of an existing file. For a change to part of a file, use edit (one
  change) or multiedit (several changes): they are shorter and cannot lose other lines.

HOW TO USE
- filePath: the file's path, relative to the workspace root or absolute (inside it).
- content: the complete new content of the file.
- Missing parent folders are created.

LIMITATIONS
- An existing file must have been read with view in this session, and not changed on
  disk since; otherwise the call fails and asks you to read it again.
- Text files only (UTF-8): binary files and directories are refused.
- Paths outside the workspace are refused.

TIPS
- An existing file keeps its line endings (CRLF stays CRLF), its UTF-8 BOM and its
  permission bits: write content with plain "\\n" line endings.
- The result shows how many lines were added and removed: check it matches your intent.
"""

FilePath = Annotated[
    str,
    Field(description="The file's path: relative to the workspace root, or absolute (inside the workspace)"),
]


class WriteParams(ToolParams):
    filePath: FilePath
    content: str = Field(description="The complete content to write to the file")


def target_path(ctx: ToolContext, file_path: str) -> Path:
    """The canonical path a whole-file tool will change (symlinks followed, so the
    boundary is checked where the bytes land); refuses a path no file can be at."""
    if not file_path.strip():
        raise ToolError("filePath is required: give the path of the file, relative to the workspace root")
    if file_path.endswith("/"):  # the path would quietly lose the slash and write a file there
        raise ToolError(f"filePath {file_path} ends with '/', so it names a folder: give the path of a file")
    path = ctx.workspace.resolve_for_write(file_path)
    try:
        path.lstat()
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        blocker = next(parent for parent in path.parents if parent.exists())
        raise ToolError(
            f"Cannot use {file_path}: {ctx.workspace.relative(blocker)} is a file, not a folder; "
            "choose another path"
        ) from None
    except OSError as err:  # a name too long, no permission to look
        raise ToolError(f"Cannot use {file_path}: {err.strerror or err}; choose another path") from None
    return path


def refuse_directory(state: FileState) -> None:
    if state.path.is_dir():
        raise ToolError(f"Path is a directory, not a file: {state.rel}; give the path of a file")


def require_text(name: str, text: str) -> None:
    """Refuse what a text file cannot hold, before anything is asked or written: a lone
    surrogate (JSON can carry "\\ud800") has no UTF-8 encoding, and a NUL character
    would make the file binary to every tool afterwards."""
    if "\0" in text:
        raise ToolError(f"{name} contains a NUL character: only text files can be written; remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ToolError(
            f"{name} contains an unpaired surrogate (character {err.start}): send valid Unicode text"
        ) from None


def new_text_file(state: FileState, content: str) -> TextFile:
    """A file about to be created takes its line endings and BOM from `content` itself
    (mixed endings become the majority one, as for any file we render)."""
    return decode_text(content.encode("utf-8"), state.path)


def unchanged_metadata(rel: str) -> dict[str, Any]:
    """change_metadata for a call that found the file already as asked: nothing written."""
    return {"path": rel, "diff": "", "additions": 0, "deletions": 0}


def change_metadata(applied: AppliedFile) -> dict[str, Any]:
    """What front-ends draw for a one-file change (documented in docs/tools.md)."""
    return {
        "path": applied.path,
        "diff": applied.diff,
        "additions": applied.additions,
        "deletions": applied.deletions,
    }


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


class WriteTool(Tool):
    name = "write"
    params = WriteParams
    description = DESCRIPTION

    async def run(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = target_path(ctx, params.filePath)
        require_text("content", params.content)

        def plan(snapshot: Snapshot) -> ChangeSet:
            state = snapshot[path]
            refuse_directory(state)
            if state.exists:
                existing = state.text_file()
                # The file's BOM is kept by render: one sent in content too would double it.
                content = params.content.removeprefix(BOM) if existing.bom else params.content
                data = existing.render(content)
            else:
                created = new_text_file(state, params.content)
                data = created.render(created.text)
            unchanged = data == state.data  # nothing to ask, write or record
            changes = [] if unchanged else [Change(path, data)]
            return ChangeSet(changes, title=f"Write {state.rel}", ask_subject=state.rel)

        applied_files = await apply_changes(ctx, self.name, [path], plan, require_read=[path])
        if not applied_files:
            rel = ctx.workspace.relative(path)
            output = f"{rel} already has exactly this content: nothing was written."
            return ToolResult(output, {**unchanged_metadata(rel), "created": False})
        [applied] = applied_files
        if applied.created:
            lines = _line_count(applied.after)
            output = f"Created {applied.path} ({lines} line{'' if lines == 1 else 's'})."
        else:
            output = f"Wrote {applied.path}: +{applied.additions} -{applied.deletions} lines."
        result = ToolResult(output, {**change_metadata(applied), "created": applied.created}, title=applied.path)
        return await with_lsp_errors(ctx, result, path)
