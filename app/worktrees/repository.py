"""Git worktrees for sessions that work beside the main checkout (docs/worktrees.md).

``opencode --worktree NAME`` runs its session in ``<data folder>/worktrees/NAME``: a git
worktree of the current repository on branch NAME (made from HEAD when it does not
exist), so two agents can change one repository at once without touching each other's
files. The worktree's own opencode data (its sessions) lives beside it, in
``<data folder>/worktree-data/NAME``, out of its checkout (``git status`` there shows
only the agent's work), and ``opencode worktree list`` in the main checkout lists each
worktree with its sessions. The files ``worktree.copy`` names (``.env*`` by default:
what git does not track but a program needs) are copied into a new worktree.

``remove`` refuses a worktree whose checkout holds changes not committed (untracked
files included) unless forced: the branch and its commits always stay.

Standard library and config only; git is run as a program.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.config import Config, load_config
from app.core.errors import OpencodeError
from app.store.location import data_directory

WORKTREES = "worktrees"
WORKTREE_DATA = "worktree-data"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*")


class WorktreeError(OpencodeError):
    """A worktree that cannot be made, found or removed: one line saying why and what to do."""


@dataclass(frozen=True)
class Worktree:
    name: str
    path: Path
    """The checkout."""
    data: Path
    """Its opencode data folder (the sessions run in it)."""
    branch: str
    """The branch checked out ("" for a detached HEAD)."""


@dataclass(frozen=True)
class Repository:
    """The main checkout: its top folder and where its worktrees are kept."""

    top: Path
    data: Path
    config: Config

    @classmethod
    def of(cls, folder: Path, env: Mapping[str, str] | None = None) -> Repository:
        """The repository ``folder`` belongs to, as its main checkout (from a linked
        worktree too), its config and data folder read with ``env`` (default: this
        process's environment); WorktreeError outside any."""
        common = _git(folder, "rev-parse", "--path-format=absolute", "--git-common-dir", what="find the repository")
        top = Path(common).parent if Path(common).name == ".git" else Path(_git(folder, "rev-parse", "--show-toplevel"))
        config = load_config(top, env=env)
        return cls(top, data_directory(top, config, env).path, config)

    def path_of(self, name: str) -> Path:
        return self.data / WORKTREES / name

    def worktree(self, name: str) -> Worktree | None:
        """The worktree ``name`` made, or None."""
        return next((tree for tree in self.worktrees() if tree.name == name), None)

    def worktrees(self) -> list[Worktree]:
        """The worktrees opencode made for this repository, as git lists them."""
        return [tree for tree in self._listed() if tree.name]

    def _listed(self) -> Iterator[Worktree]:
        """Every worktree of the repository; ``name`` is "" for those opencode did not make."""
        listing = _git(self.top, "worktree", "list", "--porcelain", what="list the worktrees")
        for block in listing.split("\n\n"):
            fields = dict(line.partition(" ")[::2] for line in block.splitlines() if line)
            if "worktree" not in fields:
                continue
            path = Path(fields["worktree"])
            base = (self.data / WORKTREES).resolve()
            name = path.resolve().relative_to(base).as_posix() if path.resolve().is_relative_to(base) else ""
            branch = fields.get("branch", "").removeprefix("refs/heads/")
            yield Worktree(name, path, self.data / WORKTREE_DATA / name, branch)

    def open(self, name: str) -> Worktree:
        """The worktree ``name``: reused when it exists, else made on branch ``name`` (an
        existing branch is checked out, a new one starts at HEAD) with the ``worktree.copy``
        files copied in."""
        check_name(name)
        found = self.worktree(name)
        if found is not None:
            return found
        path = self.path_of(name)
        if path.exists():
            raise WorktreeError(
                f"{path} exists but is no worktree of {self.top}: move it away, or choose another name"
            )
        branch_exists = subprocess.run(
            ["git", "-C", str(self.top), "show-ref", "--verify", "--quiet", f"refs/heads/{name}"], check=False
        ).returncode == 0
        path.parent.mkdir(parents=True, exist_ok=True)
        if branch_exists:
            _git(self.top, "worktree", "add", str(path), name, what=f"check out branch {name} in a worktree")
        else:
            _git(self.top, "worktree", "add", "-b", name, str(path), what=f"make the worktree {name}")
        self._copy_files(path)
        made = self.worktree(name)
        assert made is not None, "git lists the worktree it made"
        return made

    def _copy_files(self, path: Path) -> None:
        """The files ``worktree.copy`` names, from the main checkout into a new worktree
        (regular files only, never over one the checkout has)."""
        for pattern in self.config.worktree.copy_files:
            for source in sorted(self.top.glob(pattern)):
                relative = source.relative_to(self.top)
                target = path / relative
                if source.is_file() and not source.is_symlink() and not target.exists() and _inside(self.top, source):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target)

    def remove(self, name: str, *, force: bool = False) -> Worktree:
        """Remove the worktree ``name`` (its checkout; the branch and the sessions stay).
        Refused while it holds changes not committed, unless ``force``."""
        tree = self.worktree(name)
        if tree is None:
            known = ", ".join(tree.name for tree in self.worktrees()) or "none"
            raise WorktreeError(f"no worktree {name!r} (the worktrees are: {known}): 'opencode worktree list' shows them")
        changed = uncommitted(tree.path)
        if changed and not force:
            plural = "" if len(changed) == 1 else "s"
            raise WorktreeError(
                f"worktree {name} has uncommitted changes ({len(changed)} file{plural}: {', '.join(changed[:3])}"
                f"{', …' if len(changed) > 3 else ''}): commit them on branch {tree.branch or 'HEAD'}, "
                "or pass --force to throw them away"
            )
        _git(self.top, "worktree", "remove", "--force", str(tree.path), what=f"remove the worktree {name}")
        return tree


def check_name(name: str) -> None:
    """A worktree's name is its branch's and its folder's: letters, digits, . _ - and /."""
    if not _NAME.fullmatch(name) or ".." in name or name.endswith((".lock", ".")):
        raise WorktreeError(
            f"{name!r} cannot name a worktree: use letters, digits, '.', '_', '-' and '/' (e.g. feat/login)"
        )


def uncommitted(path: Path) -> list[str]:
    """The files of the checkout at ``path`` that differ from its last commit, untracked
    ones included (ignored ones not)."""
    status = _git(path, "status", "--porcelain", "--untracked-files=all", what="read the worktree's state")
    return [line[3:] for line in status.splitlines() if line]


def _inside(top: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(top.resolve())


def _git(folder: Path, *args: str, what: str = "run git") -> str:
    """git's output; WorktreeError with git's own first line when it fails."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise WorktreeError(f"cannot {what}: git is not installed (worktrees need git)") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["git failed"])[-1].removeprefix("fatal: ")
        if "not a git repository" in reason:
            raise WorktreeError(f"cannot {what}: {folder} is not in a git repository (worktrees need one)")
        raise WorktreeError(f"cannot {what}: {reason}")
    return done.stdout.rstrip()
