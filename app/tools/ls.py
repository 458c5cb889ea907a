"""The ls tool: a folder as an indented tree.

The walk is breadth first, so when the 1,000-entry cap cuts the listing it cuts the
deepest levels and the model still sees the shape of the project. The walk goes on
counting what it left out, up to a ceiling, so the note can say how much more there is.
The drawn text has a cap of its own: a tree 1,000 folders deep indents its last line by
2,000 spaces, so 1,000 entries of it would make a megabyte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import Field

from app.core.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.ignore import SKIPPED_DIRS, Entry, walk
from app.tools.reading import ReadTarget, allowed_by_rules, authorize_read, skipped_dirs, special_entry_kind

MAX_ENTRIES = 1000
MAX_CHARS = 100_000
"""The drawn listing's size, about 25,000 tokens (grep's 100 cut lines stay under 200,000)."""
COUNT_CEILING = 100_000
"""Entries counted beyond the listed ones, to say how many were left out: counting a
folder of 100,000 files costs a fraction of a second; past that the note says "more than"."""


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
    description = tool_description("ls", max_entries=MAX_ENTRIES, max_chars=MAX_CHARS, skipped_dirs=", ".join(sorted(SKIPPED_DIRS)))
    read_only = True

    async def run(self, params: LsParams, ctx: ToolContext) -> ToolResult:
        target = await authorize_read(ctx, self.name, params.path)
        if not target.path.exists():
            raise ToolError(f"{target.shown} does not exist: list its parent folder, or use glob to find it")
        if not target.path.is_dir():
            raise ToolError(f"{target.shown} is a file, not a folder: use the view tool to read it")
        entries, found = await asyncio.to_thread(_collect, ctx, target, params.ignore)
        output, drawn = render_tree(target.shown, target.rel(target.path), entries, MAX_CHARS)
        if drawn < found:
            output += "\n\n" + _cut_note(drawn, found, cut_by_size=drawn < len(entries))
        return ToolResult(
            output=output,
            metadata={"path": target.shown, "count": drawn, "found": found, "truncated": drawn < found},
            title=target.shown,
        )


def _collect(ctx: ToolContext, target: ReadTarget, ignore: list[str]) -> tuple[list[Entry], int]:
    """Up to MAX_ENTRIES entries, and how many the folder holds (the rules' denied ones
    left out), counted up to COUNT_CEILING + 1."""
    allowed = allowed_by_rules(ctx, LsTool.name, target)
    entries: list[Entry] = []
    found = 0
    for entry in walk(target.path, target.root, extra_ignore=ignore, skip=skipped_dirs(ctx, target)):
        if not allowed(target.show(entry.rel)):
            continue
        found += 1
        if found <= MAX_ENTRIES:
            entries.append(entry)
        elif found > COUNT_CEILING:
            break
    return entries, found


def _cut_note(drawn: int, found: int, *, cut_by_size: bool) -> str:
    """What the listing left out, and how to see it."""
    left = f"{found - drawn}" if found <= COUNT_CEILING else f"over {COUNT_CEILING - drawn}"
    if cut_by_size:
        cut = f"{MAX_CHARS} characters, the tree being deep: {drawn} entries shown, {left} left out"
    else:
        cut = f"{MAX_ENTRIES} entries: {left} more left out"
    return f"(Listing cut at {cut}. List a subfolder, add ignore patterns, or use glob to find specific files)"


def render_tree(shown: str, start_rel: str, entries: list[Entry], max_chars: int) -> tuple[str, int]:
    """The header line (the folder) then its entries, folders first, each level sorted;
    drawn until the text would pass ``max_chars``. Returns the text and how many entries
    it shows."""
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
    budget = max_chars - len(lines[0])
    for line in _draw(top, 1):
        budget -= len(line) + 1
        if budget < 0:
            break
        lines.append(line)
    if not entries:
        lines.append("  (empty folder)")
    return "\n".join(lines), len(lines) - 1 if entries else 0


def _draw(top: _Node, depth: int) -> Iterator[str]:
    """Each folder's line followed by what it holds, then the files, each level sorted.
    A stack, not recursion: a tree 1,000 folders deep is drawn like a flat one."""
    pending = [(top, depth, iter(sorted(top.folders)))]
    while pending:
        node, level, folders = pending[-1]
        name = next(folders, None)
        if name is None:
            pending.pop()
            yield from (f"{'  ' * level}{file}" for file in sorted(node.files))
            continue
        yield f"{'  ' * level}{name}/"
        inner = node.folders[name]
        pending.append((inner, level + 1, iter(sorted(inner.folders))))
