"""Which files the search tools (ls, glob, grep) see: a small gitignore matcher and a
walker that prunes ignored folders instead of filtering their contents afterwards.

Rules come from `.git/info/exclude` and, in every folder from the root down to the file,
`.gitignore`, `.ignore` and `.rgignore` (the files ripgrep reads, so grep's two backends
agree). Their lines follow git's semantics: `!` re-includes, a trailing `/` matches folders
only, a `/` at the start or in the middle anchors the pattern to its file's folder, `**`
spans folders. Between files ripgrep's order decides: a match in any `.rgignore` wins over
any `.ignore`, which wins over any `.gitignore` (the exclude file last); among files of a
kind the deepest wins, and within a file the last matching line. A file inside an ignored
folder stays ignored (git cannot re-include it either), which is what lets the walker
skip the whole folder. Folders in ``SKIPPED_DIRS`` are never entered at all. Ignore
files above the root are not read.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
# The ignore files read in every folder, highest precedence first (ripgrep's order).
IGNORE_FILE_NAMES = (".rgignore", ".ignore", ".gitignore")


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


@dataclass(frozen=True, slots=True)
class _Line:
    """A pattern line taken apart: ``pattern`` is without its `!`, leading `/` and trailing `/`."""

    pattern: str
    negated: bool
    dir_only: bool
    anchored: bool


def _split_line(line: str) -> _Line | None:
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
    return _Line(line.removeprefix("/"), negated, dir_only, anchored="/" in line)


def _parse_line(line: str) -> IgnoreRule | None:
    parts = _split_line(line)
    if parts is None:
        return None
    regex = re.compile(glob_to_regex(parts.pattern, braces=False), re.DOTALL)
    return IgnoreRule(regex, parts.negated, parts.dir_only, parts.anchored)


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


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # missing, unreadable, or a folder of that name
        return []


def _load(path: Path, base: str) -> IgnoreFile | None:
    rules = parse_ignore_lines(_read_lines(path))
    return IgnoreFile(base, tuple(rules)) if rules else None


@dataclass(frozen=True, slots=True)
class IgnoreChains:
    """The ignore files that apply inside one folder: one chain per name of
    IGNORE_FILE_NAMES (same order), each from the root down; git's exclude file opens the
    .gitignore chain."""

    chains: tuple[tuple[IgnoreFile, ...], ...]

    def ignores(self, rel: str, name: str, is_dir: bool) -> bool:
        """The verdict of the highest-ranked kind with a matching rule, within it the deepest
        file's; not ignored when no rule matches."""
        for chain in self.chains:
            for ignore_file in reversed(chain):
                verdict = ignore_file.verdict(rel, name, is_dir)
                if verdict is not None:
                    return verdict
        return False

    def below(self, folder: Path, base: str, names: Iterable[str]) -> IgnoreChains:
        """These chains extended with the ignore files among ``names`` (the entries of
        ``folder``, whose root-relative path is ``base``), for what lies inside it."""
        present = set(names).intersection(IGNORE_FILE_NAMES)
        if not present:
            return self
        chains = []
        for file_name, chain in zip(IGNORE_FILE_NAMES, self.chains, strict=True):
            own = _load(folder / file_name, base) if file_name in present else None
            chains.append((*chain, own) if own else chain)
        return IgnoreChains(tuple(chains))


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
    ignore files start (an ancestor of ``start``, or ``start`` itself); ``extra_ignore``
    are gitignore-style patterns relative to ``start`` that win over every file; ``skip``
    are root-relative folders never entered (the database folder). ``max_depth`` 1 lists
    ``start``'s own entries only. ``start`` itself is searched even if a rule ignores it:
    the caller named it explicitly."""
    start_rel = start.relative_to(root).as_posix() if start != root else ""
    overrides = parse_ignore_lines(extra_ignore)
    override = IgnoreFile(_prefix(start_rel), tuple(overrides)) if overrides else None
    skipped = frozenset(skip)
    queue = deque([(start, start_rel, _chains_above(root, start_rel), 1)])
    while queue:
        folder, folder_rel, chains, depth = queue.popleft()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:  # unreadable or vanished while walking: nothing to list there
            continue
        prefix = _prefix(folder_rel)
        chains = chains.below(folder, prefix, (entry.name for entry in entries))
        for dir_entry in entries:
            name = dir_entry.name
            rel = prefix + name
            is_dir = dir_entry.is_dir(follow_symlinks=False)
            if is_dir and (name in SKIPPED_DIRS or rel in skipped):
                continue
            verdict = override.verdict(rel, name, is_dir) if override else None
            if verdict is None:
                verdict = chains.ignores(rel, name, is_dir)
            if verdict:
                continue
            yield Entry(rel, name, is_dir, depth, dir_entry)
            if is_dir and (max_depth is None or depth < max_depth):
                queue.append((Path(dir_entry.path), rel, chains, depth + 1))


def _prefix(folder_rel: str) -> str:
    return folder_rel + "/" if folder_rel else ""


def _folders_above(root: Path, start_rel: str) -> Iterator[tuple[Path, str]]:
    """(folder, root-relative base) for the root and each folder down to ``start``'s parent."""
    folder, base = root, ""
    for part in start_rel.split("/") if start_rel else []:
        yield folder, base
        folder, base = folder / part, base + part + "/"


def _chains_above(root: Path, start_rel: str) -> IgnoreChains:
    """The ignore files of the folders above ``start`` (the walk reads ``start``'s own)."""
    exclude = _load(root / ".git" / "info" / "exclude", "")
    chains = IgnoreChains(
        tuple((exclude,) if exclude and name == ".gitignore" else () for name in IGNORE_FILE_NAMES)
    )
    for folder, base in _folders_above(root, start_rel):
        chains = chains.below(folder, base, IGNORE_FILE_NAMES)
    return chains


def rules_above(root: Path, start_rel: str) -> list[str]:
    """The lines of the ignore files above ``start`` (see _chains_above), rewritten to apply
    from the root, in ascending precedence: the exclude file, then folder by folder from
    the root down, each folder's .gitignore, .ignore, .rgignore. Made for ripgrep: told
    not to read ignore files above the folder it searches (so none above the root reach
    it), it is handed these instead."""
    if not start_rel:
        return []
    sources = [(root / ".git" / "info" / "exclude", "")]
    for folder, base in _folders_above(root, start_rel):
        sources += [(folder / file_name, base) for file_name in reversed(IGNORE_FILE_NAMES)]
    rebased = (_rebased(line, base) for path, base in sources for line in _read_lines(path))
    return [line for line in rebased if line is not None]


def _rebased(line: str, base: str) -> str | None:
    """A line of the ignore file in folder ``base`` that means the same in one at the root;
    None for a comment or a blank line. Unanchored patterns match at any depth, so only
    anchored ones need the folder in front (its glob characters escaped)."""
    parts = _split_line(line)
    if parts is None:
        return None
    pattern = parts.pattern
    if parts.anchored:
        pattern = "/" + _GLOB_SPECIAL.sub(r"\\\g<0>", base) + pattern
    return ("!" if parts.negated else "") + pattern + ("/" if parts.dir_only else "")


_GLOB_SPECIAL = re.compile(r"[*?\[\]{}\\]")
