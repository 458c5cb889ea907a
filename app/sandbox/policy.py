"""What a sandboxed bash command may reach, made from the rules the user already has.

Reads go everywhere except the hidden paths: `view` deny rules, and by default the
user's keys and opencode's own config (DEFAULT_HIDDEN).
Writes go only to the workspace, the session's private temp folder and
``sandbox.writable``, except the read-only paths: `edit`/`write`/`delete` deny rules and
the protected paths (opencode's config and data, git's config and hooks, the start-up
files that run commands). The network is off unless ``sandbox.network`` or a `network`
rule allowing every part of the command turns it on.

A deny pattern with wildcards becomes the folder it covers when its wildcard part is a
bare `*` (`secrets/*` is all of `secrets/`), else the files matching it when the command
starts (a file created later under another name is not covered: docs/sandbox.md). A path
that does not exist is carved out by its first missing component, so that it cannot be
made either.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.config import Config
from app.core.config_paths import CONFIG_FILE, user_config_file
from app.permission.effects import protected_roots
from app.permission.rules import compile_wildcard
from app.permission.service import PermissionService

CarveKind = Literal["read-only", "hidden"]
DEFAULT_HIDDEN = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.config/opencode", f"~/{CONFIG_FILE}")
"""Read by no sandboxed command whatever the rules: keys, cloud credentials, and opencode's
global configuration."""
GIT_CONTROL = ("config", "hooks")
"""What of git's own folder stays read-only: the rest (objects, refs, the index) is what
`git add` and `git commit` write."""
READ_ONLY_KEYS = ("edit", "write", "delete")
HIDDEN_KEYS = ("view",)
_WALK_LIMIT = 5000
"""Entries looked at when a deny pattern is matched against the files on disk."""


@dataclass(frozen=True)
class Carve:
    """One path taken out of what the sandbox grants. ``path`` is absolute and real;
    ``exists`` is False for the first missing component of a path that must not be made;
    ``folder``: whether it is a folder (a hidden one is replaced by an empty one)."""

    path: str
    kind: CarveKind
    reason: str
    exists: bool = True
    folder: bool = True


@dataclass(frozen=True)
class SandboxPolicy:
    workspace: str
    tmpdir: str
    writable: tuple[str, ...] = ()
    carves: tuple[Carve, ...] = ()
    network: bool = False
    notes: tuple[str, ...] = field(default=())
    """What the policy could not hold (a folder of sandbox.writable that does not exist)."""

    @property
    def write_roots(self) -> tuple[str, ...]:
        return (self.workspace, self.tmpdir, *self.writable)

    def carve_for(self, path: str) -> Carve | None:
        """The carve-out ``path`` is or lies in (the deepest), or None."""
        found = [c for c in self.carves if path == c.path or path.startswith(c.path.rstrip("/") + "/")]
        return max(found, key=lambda c: len(c.path), default=None)

    def writable_at(self, path: str) -> bool:
        """Whether a sandboxed command may write ``path`` (absolute)."""
        inside = any(path == root or path.startswith(root.rstrip("/") + "/") for root in self.write_roots)
        return inside and self.carve_for(path) is None

    def shown(self, path: str) -> str:
        """``path`` as a person reads it: workspace-relative inside it, `~/...` in the home folder."""
        if path.startswith(self.workspace.rstrip("/") + "/"):
            return path[len(self.workspace.rstrip("/")) + 1 :]
        home = os.path.expanduser("~")
        return "~" + path[len(home) :] if home != "/" and path.startswith(home + "/") else path

    def lines(self) -> list[str]:
        """The policy for a person (`opencode sandbox`): one line per grant and carve-out."""
        lines = [
            f"writable: {', '.join([self.workspace, '$TMPDIR (private to the session)', *self.writable])}",
            f"network: {'on' if self.network else 'off'}",
        ]
        lines += [f"{c.kind}: {self.shown(c.path)}{'' if c.exists else ' (missing: cannot be made)'} ({c.reason})" for c in self.carves]
        return lines + [f"note: {note}" for note in self.notes]


def real(path: str) -> str:
    """``path`` absolute with its symbolic links resolved, as the kernel reaches it."""
    return posixpath.normpath(os.path.realpath(os.path.expanduser(path)))


def first_missing(path: str) -> str:
    """The outermost component of ``path`` that does not exist (``path`` when it does)."""
    while True:
        parent = posixpath.dirname(path)
        if parent == path or os.path.lexists(parent):
            return path
        path = parent


def within(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _rooted(pattern: str) -> str | None:
    """A rule pattern for absolute paths, as an absolute pattern; None for a workspace-relative one."""
    if pattern.startswith("~"):
        return os.path.expanduser(pattern)
    if pattern == "$HOME" or pattern.startswith("$HOME/"):
        return os.path.expanduser("~" + pattern[len("$HOME") :])
    return pattern if pattern.startswith("/") else None


def pattern_paths(pattern: str, root: str) -> Iterator[tuple[str, bool]]:
    """(absolute path, whether it was a folder the pattern covers whole) for each path a
    deny ``pattern`` reaches now: the pattern itself without wildcards; its folder when
    the wildcard part is a bare `*`; else the existing files matching it (at most
    _WALK_LIMIT entries looked at, git's folder skipped)."""
    absolute = _rooted(pattern) or posixpath.join(root, pattern.removeprefix("./"))
    wild = re.search(r"[*?]", absolute)
    if wild is None:
        yield posixpath.normpath(absolute), False
        return
    folder = absolute[: wild.start()].rpartition("/")[0] or "/"
    if absolute[len(folder) :] in ("/*", "/**") and folder != "/":
        yield posixpath.normpath(folder), True
        return
    if folder == "/" or not os.path.isdir(folder):
        return
    regex = compile_wildcard(absolute)
    seen = 0
    for current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in (*dirs, *files):
            seen += 1
            path = posixpath.join(current, name)
            if regex.fullmatch(path):
                yield path, False
        if seen > _WALK_LIMIT:
            return


def linked_git_folders(workspace: str) -> tuple[str, ...]:
    """The git folders of a workspace whose ``.git`` is a file (a linked worktree, a
    submodule): the folder it names and the common one it shares (``commondir``), which
    `git add` and `git commit` write (index, objects, refs); none for a ``.git`` folder."""
    dot_git = posixpath.join(workspace, ".git")
    if not os.path.isfile(dot_git) or os.path.islink(dot_git):
        return ()
    try:
        with open(dot_git, encoding="utf-8") as file:
            first = file.readline(4096).strip()
    except (OSError, UnicodeDecodeError):
        return ()
    if not first.startswith("gitdir:"):
        return ()
    own = real(posixpath.join(workspace, first.removeprefix("gitdir:").strip()))
    if not os.path.isdir(own):
        return ()
    try:
        with open(posixpath.join(own, "commondir"), encoding="utf-8") as file:
            common = real(posixpath.join(own, file.readline(4096).strip()))
    except (OSError, UnicodeDecodeError):
        return (own,)
    return (own, common) if os.path.isdir(common) and common != own else (own,)


def git_control(workspace: str, git_folders: Sequence[str]) -> list[str]:
    """What stays read-only of git: the config and hooks of the workspace's ``.git``
    folder; for a linked worktree, the ``.git`` file (which names where git looks) and
    the config and hooks of the common folder (the last of ``git_folders``), which are
    the ones git reads."""
    folder = git_folders[-1] if git_folders else posixpath.join(workspace, ".git")
    controls = [posixpath.join(folder, control) for control in GIT_CONTROL]
    return [posixpath.join(workspace, ".git"), *controls] if git_folders else controls


class PolicyBuilder:
    """Collects the carve-outs of one policy, each path once (hidden wins over read-only)."""

    def __init__(self, workspace: str, write_roots: Sequence[str]) -> None:
        self.workspace = workspace
        self.write_roots = write_roots
        self.carves: dict[str, Carve] = {}

    def add(self, path: str, kind: CarveKind, reason: str, *, folder: bool = False) -> None:
        if not os.path.lexists(path):
            if kind == "hidden" or not within(path, self.write_roots):
                return  # nothing to read there, or nothing can make it
            missing = first_missing(path)
            self._put(Carve(missing, kind, reason, exists=False, folder=folder or missing != path))
            return
        path = real(path)
        if kind == "read-only" and not within(path, self.write_roots):
            return  # read-only already
        self._put(Carve(path, kind, reason, folder=os.path.isdir(path)))

    def _put(self, carve: Carve) -> None:
        known = self.carves.get(carve.path)
        if known is None or (known.kind == "read-only" and carve.kind == "hidden"):
            self.carves[carve.path] = carve


def build_policy(
    config: Config,
    permissions: PermissionService,
    workspace_root: str,
    agent: str,
    session_id: str | None,
    tmpdir: str,
    *,
    network: bool = False,
    confirm: Callable[[str, str, str], bool] | None = None,
) -> SandboxPolicy:
    """The policy for one command of ``agent`` in ``session_id``. ``network``: a `network`
    rule allows every part of the command. ``confirm(key, subject, absolute)``: whether
    the rules still deny a file a wildcard pattern matched (a more specific allow may
    lift it); every match counts when None."""
    workspace = real(workspace_root)
    writable, notes = [], []
    for folder in config.sandbox.writable:
        path = real(folder)
        if os.path.isdir(path):
            writable.append(path)
        else:
            notes.append(f"sandbox.writable {folder} is not a folder: left out")
    git_folders = linked_git_folders(workspace)
    writable.extend(folder for folder in git_folders if not within(folder, [workspace, *writable]))
    builder = PolicyBuilder(workspace, (workspace, tmpdir, *writable))
    for path in DEFAULT_HIDDEN:
        builder.add(os.path.expanduser(path), "hidden", "read by no sandboxed command")
    if (user_file := user_config_file(os.environ)) is not None:
        builder.add(user_file.parent.as_posix(), "hidden", "opencode's global configuration")
    for kind, keys in (("hidden", HIDDEN_KEYS), ("read-only", READ_ONLY_KEYS)):
        for key in keys:
            for pattern in permissions.patterns_with(agent, session_id, key, "deny"):
                for path, whole in pattern_paths(pattern, workspace):
                    subject = posixpath.relpath(path, workspace) if within(path, [workspace]) else path
                    if whole or confirm is None or "*" not in pattern or confirm(key, subject, path):
                        builder.add(path, kind, f'{key} rule "{pattern}"', folder=whole)  # type: ignore[arg-type]
    for root in protected_roots(config.data.directory, workspace):
        path = root if root.startswith("/") else posixpath.join(workspace, root)
        builder.add(path, "read-only", "protected: opencode's configuration or a start-up file", folder=root == ".opencode")
    for control in git_control(workspace, git_folders):
        builder.add(control, "read-only", "protected: git's configuration and hooks", folder=control.endswith("hooks"))
    return SandboxPolicy(
        workspace,
        tmpdir,
        tuple(writable),
        tuple(sorted(builder.carves.values(), key=lambda c: c.path)),
        network or config.sandbox.network,
        tuple(notes),
    )
