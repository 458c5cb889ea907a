"""The grep tool: lines matching a regular expression, grouped by file.

ripgrep does the search when it can be found (the `ripgrep` package installs `rg` beside
the Python interpreter; otherwise PATH): it walks and searches in parallel and is what
makes a 50,000-file tree take a fraction of a second. A pure-Python search over the same
walker as ls and glob stands in when rg is missing, or when tools.grep.backend is python.
Both see the same files: .gitignore, .ignore and .rgignore files within the workspace
respected (see app/tools/ignore.py), hidden files searched, SKIPPED_DIRS and
the database folder left out, symbolic links not followed, binary files skipped.

Files are ordered newest first (by modification time, then path), as in OpenCode: the
file the user is working on is most likely the one the model is after.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from app.core.errors import ToolError
from app.core.shelter import sheltered
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.ignore import SKIPPED_DIRS, glob_to_regex, rules_above, walk
from app.tools.reading import (
    ReadTarget,
    allowed_by_rules,
    authorize_read,
    cut_line,
    skipped_dirs,
    special_kind_at,
)

MAX_MATCHES = 100
MATCH_CEILING = 10_000  # a search stops here: the model only ever sees MAX_MATCHES anyway
BACKENDS = ("auto", "rg", "python")


class GrepParams(ToolParams):
    pattern: str = Field(
        min_length=1, description='The regular expression to search for, e.g. "def main" or "log.*Error".'
    )
    path: str = Field(
        ".",
        min_length=1,
        description="The folder or file to search, relative to the workspace root (or absolute). Default: the root.",
    )
    include: str | None = Field(
        None, description='Only files whose name matches this glob, e.g. "*.py" or "*.{ts,tsx}".'
    )


@dataclass
class FileMatches:
    path: Path  # absolute, for the modification time
    lines: list[tuple[int, str]] = field(default_factory=list)  # (line number, cut text), at most MAX_MATCHES
    count: int = 0  # every match in the file, shown or not


@dataclass
class Search:
    """One search's question and what it found so far (the backends fill ``files``)."""

    target: ReadTarget
    pattern: str
    include: str | None
    skip: list[str]
    allowed: Callable[[str], bool]
    files: dict[str, FileMatches] = field(default_factory=dict)
    total: int = 0

    def add(self, shown: str, path: Path, line: int, text: str) -> bool:
        """Record a match; False once MATCH_CEILING is reached (the search should stop)."""
        found = self.files.get(shown)
        if found is None:
            found = self.files[shown] = FileMatches(path)
        if len(found.lines) < MAX_MATCHES:
            found.lines.append((line, cut_line(text)))
        found.count += 1
        self.total += 1
        return self.total < MATCH_CEILING

    def discard(self, shown: str) -> None:
        """Forget a file's matches: it turned out to be binary."""
        found = self.files.pop(shown, None)
        if found is not None:
            self.total -= found.count

    @property
    def stopped(self) -> bool:
        return self.total >= MATCH_CEILING


class GrepTool(Tool):
    name = "grep"
    params = GrepParams
    description = tool_description("grep", max_matches=MAX_MATCHES, skipped_dirs=", ".join(sorted(SKIPPED_DIRS)))
    read_only = True

    def __init__(self, backend: str | None = None) -> None:
        """``backend``: "rg", "python", or None/"auto" (then the config's tools.grep.backend
        decides, else rg when it can be found, else python)."""
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"unknown grep backend {backend!r}: use one of {', '.join(BACKENDS)}")
        self.backend = backend

    async def run(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        if _asks_for_a_line_break(params.pattern):
            raise _spans_lines(params.pattern)
        include = _checked_include(params.include)
        target = await authorize_read(ctx, self.name, params.path)
        if not target.path.exists():
            raise ToolError(
                f"path {target.shown} does not exist: give a folder or file that exists (ls shows them)"
            )
        if (kind := special_kind_at(target.path)) is not None:
            raise ToolError(f"path {target.shown} is {kind}, not a file or folder: grep searches files only")
        search = Search(
            target,
            params.pattern,
            include,
            skipped_dirs(ctx, target),
            allowed_by_rules(ctx, self.name, target),
        )
        rg = self._ripgrep(ctx.config.tools.grep.backend)
        if rg is not None:
            await search_with_ripgrep(rg, search)
        else:
            await asyncio.to_thread(search_with_python, search)
        return render(search)

    def _ripgrep(self, configured: str) -> str | None:
        """The rg binary to use, or None for the Python search."""
        choice = self.backend or configured
        if choice == "python":
            return None
        rg = find_ripgrep()
        if rg is None and choice == "rg":
            raise ToolError(
                'ripgrep (rg) was not found: install the ripgrep package, or set tools.grep.backend to "python"'
            )
        return rg


def find_ripgrep() -> str | None:
    """rg beside the interpreter first (where `pip install ripgrep` puts it), then on PATH."""
    return shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")


def _asks_for_a_line_break(pattern: str) -> bool:
    """Whether the pattern holds a newline, or `\\n` outside a [class]: a search line by
    line never matches it (rg refuses it; the Python search would find nothing)."""
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\n" or (char == "\\" and not in_class and pattern[i + 1 : i + 2] == "n"):
            return True
        if char == "\\":
            i += 1  # the escaped character is not a class bracket
        elif char == "[" and not in_class:
            in_class = True
            i += pattern.startswith("^", i + 1)
            i += pattern.startswith("]", i + 1)  # a "]" first is a member, not the end
        elif char == "]":
            in_class = False
        i += 1
    return False


def _spans_lines(pattern: str) -> ToolError:
    return ToolError(
        f"invalid regular expression {pattern!r}: it asks for a line break, but grep matches one line "
        "at a time: search for text within one line (or view the file around a match)"
    )


def _checked_include(include: str | None) -> str | None:
    """A file-name glob; a leading "**/" is dropped (it adds nothing to a name match)."""
    if include is None or not include.strip():
        return None
    include = include.strip()
    while include.startswith("**/"):
        include = include[3:]
    if "/" in include:
        raise ToolError(
            f'include "{include}" names folders, but it matches file names only (e.g. "*.py"): put the folder in path'
        )
    try:
        glob_to_regex(include)
    except ValueError as err:
        raise ToolError(f"invalid include glob: {err}: close the brace or escape it as \\{{") from None
    return include


async def search_with_ripgrep(rg: str, search: Search) -> None:
    """Run rg at the root (so its globs and our ignore rules anchor there) and stream its output."""
    target = search.target
    start = target.rel(target.path)
    command = [
        rg, "--no-config", "--no-messages", "--color=never", "--no-heading", "--with-filename",
        "--line-number", "--null", "--crlf", "--hidden", "--no-require-git", "--no-ignore-global",
        "--no-ignore-parent",
        *(f"--glob=!{name}/" for name in sorted(SKIPPED_DIRS)),
        *(f"--glob=!/{rel}/" for rel in search.skip),
    ]  # fmt: skip
    if search.include is not None:
        # A file type, not --glob: rg lets a --glob match override .gitignore, a type does not.
        command += [f"--type-add=include:{search.include}", "--type=include"]
    folder = start if target.path.is_dir() else ""  # a file named explicitly is searched whatever the rules
    with _rules_above_file(target.root, folder) as ignore_file:
        if ignore_file is not None:
            command.append(f"--ignore-file={ignore_file}")
        command += ["--regexp", search.pattern, "--", start or "."]
        await _run_ripgrep(command, search)


@contextmanager
def _rules_above_file(root: Path, start_rel: str) -> Iterator[str | None]:
    """A file holding the ignore rules of the folders from the root down to the searched
    one, or None when there are none. --no-ignore-parent keeps rg from reading ignore
    files above the workspace (a `*` in a home-folder .gitignore hid everything), and with
    them those above a searched subfolder, which the walker of ls and glob does apply."""
    lines = rules_above(root, start_rel)
    if not lines:
        yield None
        return
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="opencode-grep-") as rules:
        rules.write("\n".join(lines) + "\n")
        rules.flush()
        yield rules.name


async def _run_ripgrep(command: list[str], search: Search) -> None:
    """Run rg at the root and read its matches into the search, killing rg at the ceiling."""
    process = await sheltered(
        asyncio.create_subprocess_exec(
            *command, cwd=search.target.root, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        ),
        _kill,
    )
    assert process.stdout is not None and process.stderr is not None, "both are pipes"
    errors = asyncio.ensure_future(process.stderr.read())
    finished = False
    try:
        await _read_matches(process.stdout, search)
        finished = not search.stopped
    finally:
        if not finished and process.returncode is None:  # stopped at the ceiling, or cancelled
            process.kill()
        await process.wait()
    stderr = (await errors).decode("utf-8", "replace")
    if process.returncode == 2 and not search.files:
        raise _ripgrep_error(search.pattern, stderr)


async def _kill(process: asyncio.subprocess.Process) -> None:
    process.kill()
    await process.wait()


async def _read_matches(stdout: asyncio.StreamReader, search: Search) -> None:
    """Parse rg's lines (the file name, a NUL byte, then LINE:TEXT) into the search, until
    the output ends or the search reaches its ceiling.

    rg judges a file binary only when it reaches a NUL byte: matches printed before it stay
    printed, followed by a note (`NAME: WARNING: stopped searching binary file after match
    ...`). The Python search skips such a file whole, and so does this, on seeing the note."""
    files: dict[bytes, tuple[str, Path, bool]] = {}  # rg's name -> (shown, absolute, allowed)
    name = b""
    async for line in _lines(stdout):
        if name and line.startswith(name + b": ") and _BINARY_NOTE.match(line, len(name) + 2):
            search.discard(files[name][0])
            continue
        name, nul, rest = line.partition(b"\0")
        if not nul:  # another note
            name = b""
            continue
        if name not in files:
            rel = name.decode("utf-8", "surrogateescape").removeprefix("./")
            shown = search.target.show(rel)
            files[name] = (shown, search.target.root / rel, search.allowed(shown))
        shown, path, allowed = files[name]
        number, _, raw_text = rest.partition(b":")
        text = raw_text.decode("utf-8", "replace").removesuffix("\r")
        if allowed and not search.add(shown, path, int(number), text):
            return


_BINARY_NOTE = re.compile(
    rb"(?:WARNING: stopped searching binary file after match|binary file matches) \(found "
)


async def _lines(stream: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Lines of any length (StreamReader.readline refuses lines over its buffer limit), in
    linear time: a 20 MB minified line arrives in hundreds of chunks."""
    pending = bytearray()
    while chunk := await stream.read(1 << 16):
        if b"\n" not in chunk:
            pending += chunk
            continue
        *lines, rest = chunk.split(b"\n")
        if pending:
            lines[0] = bytes(pending + lines[0])
        pending = bytearray(rest)
        for line in lines:
            yield line
    if pending:
        yield bytes(pending)


def _ripgrep_error(pattern: str, stderr: str) -> ToolError:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if any('the literal "\\n" is not allowed' in line for line in lines):
        return _spans_lines(pattern)
    if any("regex parse error" in line for line in lines):
        detail = next(
            (line.removeprefix("error: ") for line in lines if line.startswith("error:")), "not valid"
        )
        return _invalid_regex(pattern, detail)
    return ToolError(
        f"grep failed: {lines[0] if lines else 'ripgrep exited with an error'}: check the path and pattern"
    )


def _invalid_regex(pattern: str, detail: str) -> ToolError:
    return ToolError(
        f"invalid regular expression {pattern!r}: {detail}; fix it, or escape special characters "
        "such as ( [ { . * + ? with a backslash to match them literally"
    )


def search_with_python(search: Search) -> None:
    """The same search without rg: the shared walker, line by line with `re`."""
    try:
        regex = re.compile(search.pattern)
    except re.error as err:
        raise _invalid_regex(search.pattern, str(err)) from None
    target = search.target
    candidates: Iterable[tuple[str, Path]]
    if target.path.is_file():  # a file named explicitly is searched whatever its name
        candidates = [(target.shown, target.path)]
    else:
        name_regex = re.compile(glob_to_regex(search.include), re.DOTALL) if search.include else None
        candidates = (
            (target.show(entry.rel), Path(entry.dir_entry.path))
            for entry in walk(target.path, target.root, skip=search.skip)
            if entry.dir_entry.is_file(follow_symlinks=False)  # no links, pipes or devices
            and (name_regex is None or name_regex.fullmatch(entry.name))
        )
    for shown, path in candidates:
        if search.allowed(shown) and not _search_file(search, regex, shown, path):
            return


def _search_file(search: Search, regex: re.Pattern[str], shown: str, path: Path) -> bool:
    """Add one file's matches; False when the search must stop."""
    try:
        lines = _text_lines(path.read_bytes())
    except OSError:  # unreadable, or removed since the walk listed it
        return True
    for number, line in enumerate(lines or (), start=1):
        if regex.search(line) and not search.add(shown, path, number, line):
            return False
    return True


def _text_lines(data: bytes) -> list[str] | None:
    """A file's lines as rg (with --crlf) reads them, without their `\\n` or `\\r\\n`; None for
    a binary file (a NUL byte). A UTF-16 byte order mark means UTF-16 text (rg transcodes
    it), a UTF-8 one is not part of the first line, and a final newline ends the last line
    rather than starting an empty one."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", "replace")
    elif b"\0" in data:
        return None
    else:
        text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8", "replace")
    if "\0" in text:  # a NUL character in UTF-16 text
        return None
    *ended, last = text.split("\n")
    lines = [line.removesuffix("\r") for line in ended]
    return [*lines, last] if last else lines


def render(search: Search) -> ToolResult:
    """Files newest first, each with its matching lines, cut after MAX_MATCHES lines."""
    target = search.target
    where = f"in {target.shown}" + (f" (files {search.include})" if search.include else "")
    metadata = {
        "path": target.shown,
        "matches": search.total,
        "file_count": len(search.files),
        "truncated": False,
    }
    title = f"{search.pattern} {where}"
    if not search.files:
        return ToolResult(f"No matches found for {search.pattern!r} {where}", metadata, title)
    blocks, shown = [], 0
    for name, found in sorted(search.files.items(), key=_newest_first):
        lines = found.lines[: MAX_MATCHES - shown]
        shown += len(lines)
        blocks.append(f"{name}:\n" + "\n".join(f"  Line {number}: {text}" for number, text in lines))
        if shown == MAX_MATCHES:
            break
    header = f"Found {search.total}{'+' if search.stopped else ''} matches in {len(search.files)} files"
    output = header + "\n" + "\n\n".join(blocks)
    if shown < search.total:
        metadata["truncated"] = True
        more = f"more than {MATCH_CEILING}" if search.stopped else str(search.total)
        output += (
            f"\n\n(Results are truncated: showing {shown} of {more} matches. "
            "Use a more specific pattern, path or include to see the others)"
        )
    return ToolResult(output, metadata, title)


def _newest_first(item: tuple[str, FileMatches]) -> tuple[int, str]:
    name, found = item
    try:
        mtime = found.path.stat().st_mtime_ns
    except OSError:
        mtime = 0
    return -mtime, name
