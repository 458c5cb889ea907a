"""How the bash tool judges the files a command writes or deletes (shell_effects and
git_effects find them): each is an effect judged as the file tools' effects are, with the
`edit` rules for a write and the `delete` rules for a removal, protected paths included.

A relative path is judged from the workspace root and from every folder a `cd` in the
command goes to (the order of parts is not followed, so all are tried: a stricter answer,
never a missed file). Globs and braces are expanded against the disk as the shell would;
a path reaching a folder's whole tree (`rm -r`, `git clean`, `find -delete`) is judged
for every file inside it. A path known only at run time is asked about.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.errors import ToolError
from app.permission import Decision
from app.permission.effects import DENY_ALSO, GROUP_KEYS, Effect, Judgement, judge, protected_anchor
from app.tools.shell_effects import Touch
from app.tools.shell_parse import ParsedCommand
from app.workspace import Workspace

UNKNOWN_PATH = Decision("ask", "a path known only when the command runs", None, "default")
"""A write or delete whose path is computed at run time: it may be any file."""
_TOO_MANY = Decision("ask", "more files than can be judged one by one", None, "default")
MAX_TREE_FILES = 100_000
"""Files judged one by one under a folder; beyond, the command is asked about."""
_MAX_BASES = 64
# Devices a command may name without touching anything outside the workspace.
HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
)
_GLOB_MAGIC = re.compile(r"[*?[]")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


@dataclass(frozen=True)
class FileJudge:
    """``evaluate(key, subject, absolute)``: the rules' decision (with the denies the
    session inherits); ``protected``: the protected roots (app.permission.effects)."""

    workspace: Workspace
    evaluate: Callable[[str, str, str | None], Decision]
    protected: tuple[str, ...]
    ruled: frozenset[str] | None = None
    """The keys that have any rule (None: all may): an effect whose key has none is judged
    by the protected paths alone, which keeps a walk of a big tree cheap."""

    def judge(self, parsed: ParsedCommand) -> list[Judgement]:
        """A judgement per effect, stopping at the first deny."""
        bases = command_bases(parsed)
        found: dict[tuple[str, str], Judgement] = {}
        for part in parsed.parts:
            for touch in part.touches:
                if not bases.followed and not os.path.expanduser(touch.path).startswith("/"):
                    touch = Touch(touch.kind, "")  # relative to a folder that cannot be known
                for judgement in self._judge_touch(touch, bases.folders, part.text):
                    found.setdefault((judgement.effect.kind, judgement.effect.target), judgement)
                    if judgement.action == "deny":
                        return list(found.values())
        return list(found.values())

    def _judge_touch(self, touch: Touch, bases: list[str], text: str) -> Iterator[Judgement]:
        key = GROUP_KEYS[touch.kind]
        if not touch.path:
            yield Judgement(Effect(touch.kind, f"(a path in {_short(text)})"), UNKNOWN_PATH, key)
            return
        count = 0
        for subject, absolute in self._subjects(touch, bases):
            count += 1
            if count > MAX_TREE_FILES:
                yield Judgement(Effect(touch.kind, f"{touch.path} (a folder)"), _TOO_MANY, key)
                return
            if subject in HARMLESS_DEVICES or subject.startswith("/dev/fd/"):
                continue
            if subject.startswith("/"):  # outside: the reading tools' external_directory rules
                if protected_anchor(subject, self.protected) is not None:  # the global config
                    yield judge(self.evaluate, key, Effect(touch.kind, subject, subject), self.protected)
                    continue
                decision = self.evaluate("external_directory", subject, subject)
                yield Judgement(Effect(touch.kind, subject, subject), decision, "external_directory")
                continue
            if self.ruled is not None and key not in self.ruled and DENY_ALSO.get(touch.kind) not in self.ruled:
                anchor = protected_anchor(subject, self.protected)
                if anchor is not None:
                    yield judge(self.evaluate, key, Effect(touch.kind, subject, absolute), self.protected)
                continue
            judgement = judge(self.evaluate, key, Effect(touch.kind, subject, absolute), self.protected)
            # The part's bash rule already answered; the edit and delete rules add only what
            # one of their patterns (or a protection) says, not their default.
            if judgement.decision.level != "default" or judgement.action == "deny":
                yield judgement

    def _subjects(self, touch: Touch, bases: list[str]) -> Iterator[tuple[str, str]]:
        """(subject, absolute) for the path and, for a tree, everything under it."""
        root = self.workspace.root.as_posix()
        path = os.path.expanduser(touch.path)
        starts = [path] if path.startswith("/") else [posixpath.join(root, base, path) for base in bases]
        for start in starts:
            for absolute in _expanded(posixpath.normpath(start)):
                subject = self._subject(absolute)
                yield subject, absolute
                if touch.tree and not subject.startswith("/") and os.path.isdir(absolute):
                    yield from self._tree(absolute, touch)

    def _tree(self, folder: str, touch: Touch) -> Iterator[tuple[str, str]]:
        """Every entry under ``folder``, not following links, named as it is (a link
        inside is removed or replaced itself); git's work skips `.git` and, when it keeps
        untracked files, opencode's own folders."""
        skipped = {".git"} if touch.by_git else set()
        root = self.workspace.root.as_posix().rstrip("/")
        real = os.path.realpath(folder)
        if real != root and not real.startswith(root + "/"):
            return
        own = {name for name in self.protected if not name.endswith(".json")} if touch.untracked_kept else set()
        for here, folders, files in os.walk(real):
            rel = here[len(root) + 1 :]
            prefix = f"{rel}/" if rel else ""
            folders[:] = [name for name in folders if name not in skipped and f"{prefix}{name}" not in own]
            # a formatter's tree: only the files it rewrites
            for name in [n for n in files if n.endswith(touch.suffixes)] if touch.suffixes else (*folders, *files):
                yield f"{prefix}{name}", f"{here}/{name}"

    def _subject(self, absolute: str) -> str:
        try:
            return self.workspace.subject(absolute)
        except ToolError:  # a symlink loop, a folder that cannot be searched: judge it as written
            root = self.workspace.root.as_posix().rstrip("/")
            return absolute[len(root) + 1 :] if absolute.startswith(root + "/") else absolute


@dataclass(frozen=True)
class Bases:
    """Where a command's relative paths may start: the root (`.`) and every folder a `cd`
    goes to, chained (relative to the root, or absolute). ``followed`` is False when a
    `cd` goes where cannot be known (`cd "$X"`, `cd -`, `popd`) or there are more folders
    than are followed: a relative path may then be anywhere."""

    folders: list[str]
    followed: bool


def command_bases(parsed: ParsedCommand) -> Bases:
    folders, followed = ["."], True
    for part in parsed.parts:
        target = part.directory
        if target is None:
            continue
        if not target:
            followed = False
            continue
        target = os.path.expanduser(target)
        merged = list(dict.fromkeys([*folders, *(posixpath.normpath(posixpath.join(f, target)) for f in folders)]))
        followed &= len(merged) <= _MAX_BASES
        folders = merged[:_MAX_BASES]
    return Bases(folders, followed)


def _expanded(path: str) -> list[str]:
    """``path`` with braces and globs expanded as the shell would; itself when nothing matches."""
    found: list[str] = []
    for candidate in _brace_expanded(path):
        magic = _GLOB_MAGIC.search(candidate)
        matches = sorted(glob.glob(candidate, recursive=True, include_hidden=True)) if magic else []
        found += [posixpath.normpath(match) for match in matches] or [candidate]
    return list(dict.fromkeys(found))


def _brace_expanded(word: str, limit: int = 64) -> list[str]:
    match = _BRACES.search(word)
    if match is None:
        return [word]
    words = []
    for choice in match.group(1).split(","):
        words += _brace_expanded(word[: match.start()] + choice + word[match.end() :], limit)
        if len(words) >= limit:
            break
    return words[:limit]


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 60 else flat[:59] + "…"
