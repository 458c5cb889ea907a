"""Which files the search tools (ls, glob, grep) see: a small gitignore matcher and a
walker that prunes ignored folders instead of filtering their contents afterwards.

Rules come from `.git/info/exclude` and every `.gitignore` between the root and the file,
with git's semantics: the deepest file wins, and within a file the last matching line;
`!` re-includes, a trailing `/` matches folders only, a `/` at the start or in the middle
anchors the pattern to its file's folder, `**` spans folders. A file inside an ignored
folder stays ignored (git cannot re-include it either), which is what lets the walker
skip the whole folder. Folders in ``SKIPPED_DIRS`` are never entered at all.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})


def glob_to_regex(pattern: str, *, braces: bool = True) -> str:
    """The regex source (unanchored) of a path glob: `*` and `?` stay inside one folder
    name, `**` as a whole path segment spans any number of folders (`a/**/b` includes
    `a/b`; a trailing `/**` is everything below), `[abc]`/`[!abc]` are classes, `\\x` is a
    literal x and, with ``braces``, `{ts,tsx}` is an alternation (gitignore has none).
    Raises ValueError for an unclosed `{`."""
    out: list[str] = []
    open_braces = 0
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            end = i
            while end < n and pattern[end] == "*":
                end += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (end == n or pattern[end] == "/")
            if end - i >= 2 and whole_segment:
                if end == n:
                    out.append(".*")
                else:
                    out.append("(?:[^/]*/)*")
                    end += 1  # the "/" after "**" is part of the zero-or-more folders
            else:
                out.append("[^/]*")
            i = end
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            i = _character_class(pattern, i, out)
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif braces and char == "{":
            out.append("(?:")
            open_braces += 1
            i += 1
        elif braces and char == "," and open_braces:
            out.append("|")
            i += 1
        elif braces and char == "}" and open_braces:
            out.append(")")
            open_braces -= 1
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    if open_braces:
        raise ValueError(f"the pattern {pattern!r} has an unclosed '{{'")
    return "".join(out)


# Inside a Python [set], "[" and doubled "&", "~", "|" are reserved for set operations
# (a FutureWarning today); in a glob they are plain members, so they are escaped.
_SET_OPERATION_CHARACTER = re.compile(r"[\[&~|]")


def _character_class(pattern: str, start: int, out: list[str]) -> int:
    """Translate `[...]` at ``start``; an unclosed `[` is a literal. Returns the next index."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    if negated:
        i += 1
    body_start = i
    if i < len(pattern) and pattern[i] == "]":  # a "]" first is a member, not the end
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    if i >= len(pattern):
        out.append(re.escape("["))
        return start + 1
    body = _SET_OPERATION_CHARACTER.sub(r"\\\g<0>", pattern[body_start:i].replace("\\", "\\\\"))
    out.append(f"[^/{body}]" if negated else f"[{body}]")
    return i + 1


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One pattern line. Unanchored rules match the entry's name; anchored ones match its
    path relative to the folder of the file the rule came from."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool


def parse_ignore_lines(lines: Sequence[str]) -> list[IgnoreRule]:
    """Rules from gitignore-format lines (comments and blank lines skipped)."""
    rules = []
    for line in lines:
        rule = _parse_line(line)
        if rule is not None:
            rules.append(rule)
    return rules


def _parse_line(line: str) -> IgnoreRule | None:
    line = line.rstrip("\r\n")
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):  # "foo\ " keeps one escaped space
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    regex = re.compile(glob_to_regex(line, braces=False), re.DOTALL)
    return IgnoreRule(regex, negated, dir_only, anchored)


class IgnoreFile:
    """The rules of one `.gitignore` (or exclude file), for paths under ``base`` (a
    root-relative folder with a trailing "/", or "" for the root).

    Most entries match no rule at all, so each file also keeps two union patterns (its
    name rules, its anchored rules) that answer "could any rule match?" in one regex
    call; only then are the rules tried one by one, last first. A 60-line Python
    .gitignore otherwise makes a walk four times slower."""

    __slots__ = ("base", "rules", "_any_name", "_any_path")

    def __init__(self, base: str, rules: Sequence[IgnoreRule]) -> None:
        self.base = base
        self.rules = tuple(rules)
        self._any_name = _union([r for r in self.rules if not r.anchored])
        self._any_path = _union([r for r in self.rules if r.anchored])

    def verdict(self, rel: str, name: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by `!`) or None (no rule here matches)."""
        below = rel[len(self.base) :]
        if not (self._any_name.fullmatch(name) or self._any_path.fullmatch(below)):
            return None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(below if rule.anchored else name):
                return not rule.negated
        return None


def _union(rules: list[IgnoreRule]) -> re.Pattern[str]:
    """One pattern matching whatever any of ``rules`` matches (never matches when empty)."""
    if not rules:
        return _NOTHING
    return re.compile("|".join(f"(?:{rule.regex.pattern})" for rule in rules), re.DOTALL)


_NOTHING = re.compile(r"(?!)")


def _load(path: Path, base: str) -> IgnoreFile | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    rules = parse_ignore_lines(text.splitlines())
    return IgnoreFile(base, tuple(rules)) if rules else None


def is_ignored(chain: Sequence[IgnoreFile], rel: str, name: str, is_dir: bool) -> bool:
    """The decision of the deepest file with a matching rule; not ignored when none has one."""
    for ignore_file in reversed(chain):
        verdict = ignore_file.verdict(rel, name, is_dir)
        if verdict is not None:
            return verdict
    return False


@dataclass(frozen=True, slots=True)
class Entry:
    """One walked entry. ``rel`` is POSIX and relative to the walk's root; a symlink is
    never a directory here (links are listed, not followed)."""

    rel: str
    name: str
    is_dir: bool
    depth: int
    dir_entry: os.DirEntry[str]


def walk(
    start: Path,
    root: Path,
    *,
    extra_ignore: Sequence[str] = (),
    skip: Sequence[str] = (),
    max_depth: int | None = None,
) -> Iterator[Entry]:
    """Every entry below ``start`` that is not ignored, breadth first, sorted by name in
    each folder (so a capped listing keeps the shallow levels). ``root`` is where the
    gitignore files start (an ancestor of ``start``, or ``start`` itself); ``extra_ignore``
    are gitignore-style patterns relative to ``start`` that win over every file; ``skip``
    are root-relative folders never entered (the database folder). ``max_depth`` 1 lists
    ``start``'s own entries only. ``start`` itself is searched even if a rule ignores it:
    the caller named it explicitly."""
    start_rel = start.relative_to(root).as_posix() if start != root else ""
    chain = _chain_to(root, start_rel)
    overrides = parse_ignore_lines(extra_ignore)
    override = IgnoreFile(_prefix(start_rel), tuple(overrides)) if overrides else None
    skipped = frozenset(skip)
    queue: deque[tuple[Path, str, tuple[IgnoreFile, ...], int]] = deque([(start, start_rel, chain, 1)])
    while queue:
        folder, folder_rel, chain, depth = queue.popleft()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:  # unreadable or vanished while walking: nothing to list there
            continue
        prefix = _prefix(folder_rel)
        for dir_entry in entries:
            name = dir_entry.name
            rel = prefix + name
            is_dir = dir_entry.is_dir(follow_symlinks=False)
            if is_dir and (name in SKIPPED_DIRS or rel in skipped):
                continue
            verdict = override.verdict(rel, name, is_dir) if override else None
            if verdict is None:
                verdict = is_ignored(chain, rel, name, is_dir)
            if verdict:
                continue
            yield Entry(rel, name, is_dir, depth, dir_entry)
            if is_dir and (max_depth is None or depth < max_depth):
                own = _load(Path(dir_entry.path) / ".gitignore", rel + "/")
                queue.append((Path(dir_entry.path), rel, (*chain, own) if own else chain, depth + 1))


def _prefix(folder_rel: str) -> str:
    return folder_rel + "/" if folder_rel else ""


def _chain_to(root: Path, start_rel: str) -> tuple[IgnoreFile, ...]:
    """The ignore files that apply inside ``start``: git's exclude file, then each
    `.gitignore` from the root down to ``start`` itself."""
    chain = [_load(root / ".git" / "info" / "exclude", "")]
    folder, base = root, ""
    chain.append(_load(folder / ".gitignore", base))
    for part in start_rel.split("/") if start_rel else []:
        folder, base = folder / part, base + part + "/"
        chain.append(_load(folder / ".gitignore", base))
    return tuple(item for item in chain if item is not None)
