"""The ls tool: a folder as an indented tree.

The walk is breadth first, so when the 1,000-entry cap cuts the listing it cuts the
deepest levels and the model still sees the shape of the project.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pydantic import Field

from app.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.ignore import SKIPPED_DIRS, Entry, walk
from app.tools.reading import ReadTarget, allowed_by_rules, authorize_read, skipped_dirs, special_entry_kind

MAX_ENTRIES = 1000


class LsParams(ToolParams):
    path: str = Field(
        ".",
        min_length=1,
        description="The folder to list, relative to the workspace root (or absolute). Default: the root.",
    )
    ignore: list[str] = Field(
        [], description='Gitignore-style patterns to leave out, relative to path, e.g. ["*.log", "build/"].'
    )


@dataclass
class _Node:
    """A folder of the tree being drawn."""

    folders: dict[str, _Node] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


class LsTool(Tool):
    name = "ls"
    params = LsParams
    description = tool_description("ls", max_entries=MAX_ENTRIES, skipped_dirs=", ".join(sorted(SKIPPED_DIRS)))
    read_only = True

    async def run(self, params: LsParams, ctx: ToolContext) -> ToolResult:
        target = await authorize_read(ctx, self.name, params.path)
        if not target.path.exists():
            raise ToolError(f"{target.shown} does not exist: list its parent folder, or use glob to find it")
        if not target.path.is_dir():
            raise ToolError(f"{target.shown} is a file, not a folder: use the view tool to read it")
        entries, cut = await asyncio.to_thread(_collect, ctx, target, params.ignore)
        output = render_tree(target.shown, target.rel(target.path), entries)
        if cut:
            output += (
                f"\n\n(Listing cut at {MAX_ENTRIES} entries: the folder holds more. "
                "List a subfolder, add ignore patterns, or use glob to find specific files)"
            )
        return ToolResult(
            output=output,
            metadata={"path": target.shown, "count": len(entries), "truncated": cut},
            title=target.shown,
        )


def _collect(ctx: ToolContext, target: ReadTarget, ignore: list[str]) -> tuple[list[Entry], bool]:
    """Up to MAX_ENTRIES entries, and whether more were left out."""
    allowed = allowed_by_rules(ctx, LsTool.name, target)
    entries: list[Entry] = []
    for entry in walk(target.path, target.root, extra_ignore=ignore, skip=skipped_dirs(ctx, target)):
        if not allowed(target.show(entry.rel)):
            continue
        if len(entries) == MAX_ENTRIES:
            return entries, True
        entries.append(entry)
    return entries, False


def render_tree(shown: str, start_rel: str, entries: list[Entry]) -> str:
    """The header line (the folder) then its entries, folders first, each level sorted."""
    top = _Node()
    skip = len(start_rel) + 1 if start_rel else 0
    for entry in entries:
        *parents, name = entry.rel[skip:].split("/")
        node = top
        for parent in parents:
            node = node.folders.setdefault(parent, _Node())
        if entry.is_dir:
            node.folders.setdefault(name, _Node())
        elif (kind := special_entry_kind(entry.dir_entry)) is not None:
            node.files.append(f"{name} ({kind}, which no tool reads)")
        else:
            node.files.append(name)
    lines = [shown.rstrip("/") + "/" if shown != "." else "./"]
    _draw(top, 1, lines)
    if not entries:
        lines.append("  (empty folder)")
    return "\n".join(lines)


def _draw(top: _Node, depth: int, lines: list[str]) -> None:
    """Each folder's line followed by what it holds, then the files, each level sorted.
    A stack, not recursion: a tree 1,000 folders deep is drawn like a flat one."""
    pending = [(top, depth, iter(sorted(top.folders)))]
    while pending:
        node, level, folders = pending[-1]
        name = next(folders, None)
        if name is None:
            pending.pop()
            lines.extend(f"{'  ' * level}{file}" for file in sorted(node.files))
            continue
        lines.append(f"{'  ' * level}{name}/")
        inner = node.folders[name]
        pending.append((inner, level + 1, iter(sorted(inner.folders))))
