"""``/worktree NAME`` in the TUI (docs/worktrees.md): make or reuse the worktree, then
start opencode again in it exactly as ``opencode -C <main workspace> --worktree NAME``
starts, so the new TUI has the worktree's own data folder and its sessions are listed
under the main workspace as the command line's are.

The app makes the worktree (so a bad name or a folder outside git is one line in the
chat and nothing else changes), exits with a `WorktreeRestart`, and ``run_tui`` replaces
the process with `WorktreeRestart.argv`, in the environment the user gave opencode
(``app.core.child_environment``), so a session already in a worktree moves to another
worktree of the main checkout, not to one nested in its own data. Standard library
only until a worktree is made: the app imports this module when it starts.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.child_environment import for_children

if TYPE_CHECKING:
    from app.worktrees.repository import Repository

USAGE = "usage: /worktree NAME (e.g. /worktree feat/login): opencode starts again in the git worktree NAME"


@dataclass(frozen=True)
class WorktreeRestart:
    """What the TUI exits with after ``/worktree NAME``: start again in the worktree."""

    workspace: Path
    """The main checkout's folder the session started from (its subfolder kept)."""
    name: str

    def argv(self, executable: str = sys.executable) -> list[str]:
        """The command line that starts the new TUI: the one ``--worktree`` runs."""
        return [executable, "-m", "app.cli", "-C", str(self.workspace), "--worktree", self.name]


def prepare_restart(root: Path, arguments: str) -> WorktreeRestart:
    """Make (or reuse) the worktree ``/worktree`` names for the workspace ``root``;
    WorktreeError (one line) without a name, with a bad one, or outside a git repository."""
    from app.worktrees.repository import Repository, WorktreeError  # config and git: loaded on use

    words = arguments.split()
    if len(words) != 1:
        raise WorktreeError(USAGE)
    repository = Repository.of(root, for_children())  # the main checkout's data, also from a worktree's session
    repository.open(words[0])
    return WorktreeRestart(main_workspace(root, repository), words[0])


def main_workspace(root: Path, repository: Repository) -> Path:
    """``root`` as a folder of the main checkout: itself there, and from inside one of
    opencode's worktrees the same subfolder of the main checkout."""
    here = root.resolve()
    for tree in repository.worktrees():
        if here.is_relative_to(tree.path.resolve()):
            return repository.top / here.relative_to(tree.path.resolve())
    return here
