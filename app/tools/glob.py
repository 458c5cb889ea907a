"""The glob tool: files whose path matches a pattern, newest first.

Fast on big trees by walking as little as possible: the pattern's leading literal folders
(`src/app` in `src/app/**/*.py`) become the starting point, a pattern without `**` bounds
the depth, and ignored folders are pruned, never entered.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import PurePosixPath

from pydantic import Field

from app.core.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.ignore import glob_to_regex, walk
from app.tools.reading import ReadTarget, allowed_by_rules, authorize_read, skipped_dirs, special_entry_kind

MAX_RESULTS = 100
_WILDCARDS = re.compile(r"[*?\[{\\]")


class GlobParams(ToolParams):
    pattern: str = Field(
        min_length=1, description='The glob to match, relative to path, e.g. "**/*.py" or "src/**/test_*.py".'
    )
    path: str = Field(
        ".",
        min_length=1,
        description="The folder to search, relative to the workspace root (or absolute). Default: the root.",
    )


class GlobTool(Tool):
    name = "glob"
    params = GlobParams
    description = tool_description("glob", max_results=MAX_RESULTS)
    read_only = True

    async def run(self, params: GlobParams, ctx: ToolContext) -> ToolResult:
        pattern = _checked_pattern(params.pattern)
        target = await authorize_read(ctx, self.name, params.path)
        if not target.path.exists():
            raise ToolError(f"path {target.shown} does not exist: give a folder that exists (ls shows them)")
        if not target.path.is_dir():
            raise ToolError(f"path {target.shown} is a file, not a folder: give the folder to search in path")
        found, special = await asyncio.to_thread(find_files, ctx, target, pattern)
        truncated = len(found) > MAX_RESULTS
        output = "\n".join(path for _mtime, path in found[:MAX_RESULTS])
        if not found:
            output = f"No files found matching {pattern} in {target.shown}"
        if special:
            output += (
                f"\n\n(Left out {len(special)} matching pipes, sockets or devices, which no tool reads: "
                f"{', '.join(special[:5])}{', ...' if len(special) > 5 else ''})"
            )
        if truncated:
            output += (
                f"\n\n(Showing the {MAX_RESULTS} newest of {len(found)} matching files. "
                "Use a more specific pattern or path to see the others)"
            )
        return ToolResult(
            output=output,
            metadata={"path": target.shown, "count": len(found), "truncated": truncated},
            title=f"{pattern} in {target.shown}",
        )


def _checked_pattern(pattern: str) -> str:
    """The pattern, relative and without "./"; refuses what cannot be meant as a glob below path."""
    if pattern.startswith(("/", "~")):
        raise ToolError(
            f"glob pattern {pattern} is absolute: give the folder in path and a relative pattern, e.g. "
            'path "/abs/folder" and pattern "**/*.py"'
        )
    parts = PurePosixPath(pattern).parts
    if ".." in parts:
        raise ToolError(f'glob pattern {pattern} contains "..": put the folder to search in path instead')
    return "/".join(part for part in pattern.split("/") if part != ".") or pattern


def find_files(ctx: ToolContext, target: ReadTarget, pattern: str) -> tuple[list[tuple[int, str]], list[str]]:
    """Every matching file as (mtime_ns, shown path), newest first (then by path), and
    the matching pipes, sockets and devices (or links to one) left out, by path."""
    segments = pattern.split("/")
    literal = 0
    while literal < len(segments) - 1 and not _WILDCARDS.search(segments[literal]):
        literal += 1
    skipped = skipped_dirs(ctx, target)
    if not _reachable(target, segments[:literal], skipped):
        return [], []
    start = target.path.joinpath(*segments[:literal])
    rest = "/".join(segments[literal:])
    try:
        regex = re.compile(glob_to_regex(rest), re.DOTALL)
    except ValueError as err:
        raise ToolError(f"invalid glob pattern: {err}: close the brace or escape it as \\{{") from None
    bounded = "**" not in rest and "{" not in rest
    max_depth = rest.count("/") + 1 if bounded else None
    allowed = allowed_by_rules(ctx, GlobTool.name, target)
    start_rel = target.rel(start)
    skip = len(start_rel) + 1 if start_rel else 0
    found, special = [], []
    for entry in walk(start, target.root, skip=skipped, max_depth=max_depth):
        if entry.is_dir or not regex.fullmatch(entry.rel[skip:]):
            continue
        shown = target.show(entry.rel)
        if not allowed(shown):
            continue
        if special_entry_kind(entry.dir_entry) is not None:
            special.append(shown)
            continue
        try:
            found.append((entry.dir_entry.stat(follow_symlinks=False).st_mtime_ns, shown))
        except OSError:  # removed since the folder was listed
            continue
    found.sort(key=lambda item: (-item[0], item[1]))
    return found, sorted(special)


def _reachable(target: ReadTarget, folders: list[str], skipped: list[str]) -> bool:
    """Whether a walk of the target would enter ``folders`` (the pattern's literal start),
    one below the other: real folders, not links, and not skipped or ignored, so that
    `build/*.py` finds what `b*/*.py` finds."""
    folder = target.path
    for name in folders:
        entries = walk(folder, target.root, skip=skipped, max_depth=1)
        if not any(entry.name == name and entry.is_dir for entry in entries):
            return False
        folder = folder / name
    return True
