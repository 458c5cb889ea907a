"""What every whole-file tool (write, edit, multiedit) shares: resolving `filePath`,
refusing directories and text no file can hold, turning new text into a file that keeps
its BOM and line endings, and the result metadata front-ends draw."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from app.core.errors import ToolError
from app.tools.base import ToolContext
from app.tools.changes import AppliedFile, FileState
from app.workspace.textio import TextFile, decode_text

BOM = "\ufeff"

FilePath = Annotated[
    str,
    Field(description="The file's path: relative to the workspace root, or absolute (inside the workspace)"),
]


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
    """Refuse what a text file cannot hold, before anything is asked or written: a NUL
    character would make the file binary to every tool afterwards (a lone surrogate is
    refused with the arguments, app/tools/base.py)."""
    if "\0" in text:
        raise ToolError(f"{name} contains a NUL character: only text files can be written; remove it")


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
