"""What a command runs from files, judged as if it were written out in the command: the
lines of a script a shell or `source` runs (`bash x.sh`, `. ./x.sh`, `sh < x.sh`), and a
program run by its path (`./x`), which is a system program under another name (a link
to `/bin/rm`), a script (its `#!` line says what runs it, and with what) or a program
whose effects cannot be known.

A file the same command writes (`cp /bin/rm x; ./x`, `echo ... > s.sh; . s.sh`, `echo
... > t.py; python3 t.py`, a Makefile it writes before `make`), or a script that does
not exist yet, cannot be read in advance: that is a doubt, and the command asks (see
judge for what --yes does then). Reading is bounded: at most
``MAX_SCRIPT_BYTES`` in all and ``MAX_DEPTH`` files deep.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from app.permission.shell.changed_files import Bases, command_bases
from app.permission.shell.parse import SYSTEM_FOLDERS, ParsedCommand, SimpleCommand, parse_command
from app.workspace import Workspace

MAX_SCRIPT_BYTES = 1 << 20
"""Bytes of script files read for one command; beyond, what they run is a doubt."""
MAX_DEPTH = 4
_PEEK = 4096  # enough of a program to tell a script from a binary


@dataclass
class _Reading:
    workspace: Workspace
    readable: Callable[[str], bool]
    """Whether the rules let a file (its absolute path) be read: a script the `view` rules
    deny is not read here, so none of its text reaches a message about the command (the
    command's read of it is refused anyway)."""
    bases: Bases
    written: set[str]
    """The absolute paths the command writes; ``trees``: the folders it writes all through."""
    trees: set[str]
    budget: int = MAX_SCRIPT_BYTES
    parts: list[SimpleCommand] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    complete: bool = True


def with_files_run(
    parsed: ParsedCommand, workspace: Workspace, readable: Callable[[str], bool] = lambda _path: True
) -> ParsedCommand:
    """``parsed`` with the parts of the scripts and programs it runs from files added,
    and a doubt for each file that cannot be read in advance (or that ``readable``, given
    its absolute path, says the rules forbid reading)."""
    if not any(part.script_files or part.program_file or part.code_files for part in parsed.parts):
        return parsed
    bases = command_bases(parsed)
    reading = _Reading(workspace, readable, bases, *_written(parsed, bases, workspace.root.as_posix()))
    _read_parts(parsed.parts, reading, 0)
    return ParsedCommand(
        tuple(dict.fromkeys((*parsed.parts, *reading.parts))),
        parsed.complete and reading.complete,
        tuple(dict.fromkeys((*parsed.doubts, *reading.doubts))),
    )


def _read_parts(parts: tuple[SimpleCommand, ...], reading: _Reading, depth: int) -> None:
    for part in parts:
        for path in part.script_files:
            for absolute in _candidates(path, reading, part.text):
                _read_script(absolute, reading, depth)
        for path in part.code_files if reading.bases.followed else ():
            _candidates(path, reading, part.text, must_exist=False)  # only whether the command writes it
        if part.program_file:
            searched = "/" not in part.program_file  # found through a PATH the command changed
            for absolute in _candidates(part.program_file, reading, part.text, must_exist=not searched):
                _read_program(absolute, part, reading, depth)


def _candidates(path: str, reading: _Reading, text: str, *, must_exist: bool = True) -> list[str]:
    """The existing files ``path`` may be from where the command runs; a doubt instead
    when it is computed, written by the command itself or (``must_exist``) missing."""
    if not path:
        reading.doubts.append(f"{_short(text)} runs a file named only at run time")
        return []
    root = reading.workspace.root.as_posix()
    expanded = os.path.expanduser(path)
    if not expanded.startswith("/") and not reading.bases.followed:
        reading.doubts.append(f"it runs {path}, from a folder that cannot be known")
        return []
    starts = [expanded] if expanded.startswith("/") else [posixpath.join(root, base, expanded) for base in reading.bases.folders]
    found = []
    for start in (posixpath.normpath(start) for start in starts):
        if start in reading.written or any(folder in reading.trees for folder in _self_and_folders(start)):
            reading.doubts.append(f"it runs {path}, which the command itself writes")
            return []
        if os.path.isfile(start):
            found.append(start)
    if not found and must_exist:
        reading.doubts.append(f"it runs {path}, which does not exist yet")
    return found


def _read_script(absolute: str, reading: _Reading, depth: int) -> None:
    """The lines of a shell script, as parts of the command."""
    data = _take(absolute, reading, depth)
    if data is not None:
        _add(parse_command(data.decode("utf-8", errors="replace")), reading, depth)


def _read_program(absolute: str, part: SimpleCommand, reading: _Reading, depth: int) -> None:
    """A program run by its path: judged as the system program it is, as the command its
    `#!` line makes, or as a shell script (what bash does with a text file without one)."""
    arguments = (part.normal or part.text).partition(" ")[2]
    real = os.path.realpath(absolute)
    if posixpath.dirname(real) in SYSTEM_FOLDERS:
        _judge_line(f"{shlex.quote(real)} {arguments}", reading, depth)
        return
    if not reading.readable(absolute):
        reading.doubts.append(f"it runs {part.program_file}, which the rules forbid reading")
        return
    try:
        with open(absolute, "rb") as file:
            head = file.read(_PEEK)
    except OSError:
        reading.doubts.append(f"it runs {absolute}, which cannot be read")
        return
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
        _judge_line(f"{line} {shlex.quote(absolute)} {arguments}", reading, depth)
    elif b"\0" in head:
        reading.doubts.append(f"it runs {part.program_file}, a program outside the system's folders")
    else:
        _read_script(absolute, reading, depth)


def _judge_line(line: str, reading: _Reading, depth: int) -> None:
    """A command line made from a file (a `#!` line with the file's name) as parts."""
    if depth >= MAX_DEPTH:
        reading.doubts.append("scripts run scripts too deep to follow")
    else:
        _add(parse_command(line), reading, depth)


def _add(inner: ParsedCommand, reading: _Reading, depth: int) -> None:
    """The parts of a script or line a file gave, and what they run from files in turn."""
    reading.parts += inner.parts
    reading.doubts += inner.doubts
    reading.complete &= inner.complete
    _read_parts(inner.parts, reading, depth + 1)


def _take(absolute: str, reading: _Reading, depth: int) -> bytes | None:
    """The file's bytes, within the budget and the depth; None (and a doubt) beyond."""
    if depth >= MAX_DEPTH:
        reading.doubts.append("scripts run scripts too deep to follow")
        return None
    if not reading.readable(absolute):
        reading.doubts.append(f"it runs {absolute}, which the rules forbid reading")
        return None
    try:
        with open(absolute, "rb") as file:
            data = file.read(reading.budget + 1)
    except OSError:
        reading.doubts.append(f"it runs {absolute}, which cannot be read")
        return None
    if len(data) > reading.budget:
        reading.doubts.append(f"it runs {absolute}, a script too long to judge")
        return None
    reading.budget -= len(data)
    return data


def _self_and_folders(path: str) -> list[str]:
    """``/a/b/c``, ``/a/b``, ``/a``: a write all through any of them may change the file
    (`mkdir -p build` writes only the folder)."""
    found = [path]
    while (parent := posixpath.dirname(found[-1])) != found[-1]:
        found.append(parent)
    return found


def _written(parsed: ParsedCommand, bases: Bases, root: str) -> tuple[set[str], set[str]]:
    """The absolute paths the command writes or deletes, from every folder it may be in,
    and those of them it writes all through (`cp -r`, `tar -x`)."""
    found: set[str] = set()
    trees: set[str] = set()
    for part in parsed.parts:
        for touch in part.touches:
            path = os.path.expanduser(touch.path)
            if not path or touch.kind == "read":
                continue
            starts = [path] if path.startswith("/") else [posixpath.join(root, base, path) for base in bases.folders]
            paths = {posixpath.normpath(start) for start in starts}
            found |= paths
            if touch.tree:
                trees |= paths
    return found, trees


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"
