"""How the bash tool judges the files a command writes or deletes (effects and
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
from dataclasses import dataclass, replace
from functools import cached_property

from app.core.errors import ToolError
from app.permission import Decision
from app.permission.effects import DENY_ALSO, GROUP_KEYS, Effect, Judgement, judge, protected_anchor
from app.permission.hard_links import HardLinks, denied_name
from app.permission.shell.effects import Touch
from app.permission.shell.parse import ParsedCommand
from app.workspace import Workspace

UNKNOWN_PATH = Decision("ask", "a path known only when the command runs", None, "default")
"""A write or delete whose path is computed at run time (or a read, while a `view` rule
denies): it may be any file."""
_UNKNOWN_READ = Decision("ask", "a path known only when the command runs: it may be outside the workspace", None, "default")
_TOO_MANY = Decision("ask", "more files than can be judged one by one", None, "default")
MAX_TREE_FILES = 100_000
"""Files judged one by one under a folder; beyond, the command is asked about."""
_MAX_BASES = 64
# Devices a command may name without touching anything outside the workspace.
HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
)
_GLOB_MAGIC = re.compile(r"[*?[]")
_BRACES = re.compile(r"\{([^{},]*+,[^{}]*+)\}")  # possessive: a run is scanned once


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
    denying: frozenset[str] | None = None
    """The keys that hold a deny (None: all may): a read whose path is known only at run
    time may be one a `view` deny forbids, which only a person may then approve."""

    @cached_property
    def links(self) -> HardLinks:
        """The workspace's files with several names (a read denied by one is by every one)."""
        return HardLinks(self.workspace.root, tuple(root for root in self.protected if not root.startswith("/")))

    def judge(self, parsed: ParsedCommand) -> list[Judgement]:
        """A judgement per effect, stopping at the first deny."""
        bases = command_bases(parsed)
        found: dict[tuple[str, str], Judgement] = {}
        for part in parsed.parts:
            for touch in part.touches:
                touch = replace(touch, path=as_the_shell_sees(touch.path))
                if not bases.followed and not os.path.expanduser(touch.path).startswith("/"):
                    touch = Touch(touch.kind, "")  # relative to a folder that cannot be known
                for judgement in self.judge_touch(touch, bases.folders, part.text):
                    found.setdefault((judgement.effect.kind, judgement.effect.target), judgement)
                    if judgement.action == "deny":
                        return list(found.values())
        return list(found.values())

    def judge_touch(self, touch: Touch, bases: list[str], text: str) -> Iterator[Judgement]:
        """The judgements of one effect of the part ``text``, from each folder in ``bases``;
        ``touch.path`` is as the shell sees it (``as_the_shell_sees``)."""
        key = GROUP_KEYS[touch.kind]
        reads = touch.kind == "read"
        if not touch.path:
            unknown = UNKNOWN_PATH if not reads or self.denying is None or key in self.denying else _UNKNOWN_READ
            yield Judgement(Effect(touch.kind, f"(a path in {_short(text)})"), unknown, key)
            return
        if touch.named and self.ruled is not None and key not in self.ruled:
            return  # no `view` rule: a program's operand asks nothing
        if reads and self.ruled is not None and key not in self.ruled:
            # No `view` rule: only a read outside the workspace is judged (external_directory).
            if not os.path.expanduser(touch.path).startswith(("/", "..")) and ".." not in touch.path:
                return
        count = 0
        for subject, absolute in self._subjects(touch, bases):
            count += 1
            if count > MAX_TREE_FILES:
                yield Judgement(Effect(touch.kind, f"{touch.path} (a folder)"), _TOO_MANY, key)
                return
            if subject in HARMLESS_DEVICES or subject.startswith("/dev/fd/"):
                continue
            if touch.named and (subject.startswith("/") or not os.path.isfile(absolute)):
                continue  # a word that names no file in the workspace reads none there
            if subject.startswith("/"):  # outside: the reading tools' external_directory rules
                if not reads and protected_anchor(subject, self.protected) is not None:  # the global config
                    yield judge(self.evaluate, key, Effect(touch.kind, subject, subject), self.protected)
                    continue
                if reads and (self.ruled is None or key in self.ruled):
                    judgement = judge(self.evaluate, key, Effect(touch.kind, subject, subject), ())
                    if judgement.action == "deny":
                        yield judgement
                        continue
                decision = self.evaluate("external_directory", subject, subject)
                yield Judgement(Effect(touch.kind, subject, subject), decision, "external_directory")
                continue
            if reads:
                yield from self._judge_read(subject, absolute)
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

    def _judge_read(self, subject: str, absolute: str) -> Iterator[Judgement]:
        """A read inside the workspace, by the `view` rules (only what one of their patterns
        says: the part's bash rule already answered), and by every other name of the file
        (a hard link): a deny of any refuses it."""
        judgement = judge(self.evaluate, "view", Effect("read", subject, absolute), ())
        if judgement.decision.level != "default" or judgement.action == "deny":
            yield judgement
        if judgement.action == "deny":
            return
        root = self.workspace.root.as_posix().rstrip("/")
        reasons: dict[str, str] = {}

        def denied(name: str) -> bool:
            other = judge(self.evaluate, "view", Effect("read", name, f"{root}/{name}"), ())
            reasons[name] = other.reason
            return other.action == "deny"

        name = denied_name(self.links, absolute, denied)
        if name is not None:
            why = f"denied by {reasons[name]}" if name in reasons else "its other names cannot all be checked"
            decision = Decision("deny", f"it is the same file as {name} (a hard link), {why}", None, "default")
            yield Judgement(Effect("read", subject, absolute), decision, "view")

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
        target = as_the_shell_sees(target)
        if not target:
            followed = False
            continue
        target = os.path.expanduser(target)
        merged = list(dict.fromkeys([*folders, *(posixpath.normpath(posixpath.join(f, target)) for f in folders)]))
        followed &= len(merged) <= _MAX_BASES
        folders = merged[:_MAX_BASES]
    return Bases(folders, followed)


_PROC_SELF = re.compile(r"^/++proc/++(?:self|thread-self)/++(cwd|root)(?=/|$)")
_PROC_OTHER = re.compile(r"^/++proc/++[^/]++/++(?:task/++[^/]++/++)?(?:cwd|root)(?=/|$)")


def as_the_shell_sees(path: str) -> str:
    """``path`` as the shell that runs the command resolves it: `/proc/self/cwd` is the
    shell's own folder (a relative path, judged from the root and every `cd`), not this
    process's; `/proc/self/root` is `/`. Another process's (`/proc/$$/cwd`, `/proc/1/root`)
    is known only at run time: ""."""
    match = _PROC_SELF.match(path)
    if match is not None:
        rest = path[match.end() :].lstrip("/")
        return (rest or ".") if match.group(1) == "cwd" else "/" + rest
    return "" if _PROC_OTHER.match(path) else path


def _expanded(path: str) -> list[str]:
    """``path`` with braces and globs expanded as the shell would; itself when nothing matches.
    A pattern in a folder is expanded on its own too: `cp x secret?` copies into `secrets`,
    which effects reports as the path `secret?/x`, matched by no file yet."""
    found: list[str] = []
    for candidate in _brace_expanded(path):
        magic = _GLOB_MAGIC.search(candidate)
        matches = sorted(glob.glob(candidate, recursive=True, include_hidden=True)) if magic else []
        folder, name = posixpath.split(candidate)
        if magic and not matches and _GLOB_MAGIC.search(folder) and not _GLOB_MAGIC.search(name):
            matches = [posixpath.join(match, name) for match in _expanded(folder) if match != folder]
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
