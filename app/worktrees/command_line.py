"""The command line's side of worktrees (app/worktrees/repository.py, docs/worktrees.md):
``opencode --worktree NAME``, ``opencode worktree list`` and ``opencode worktree remove``."""

from __future__ import annotations

import sys
from pathlib import Path

from app.core.child_environment import set_own
from app.store.location import DATA_DIRECTORY_VARIABLE
from app.worktrees.repository import Repository, Worktree, WorktreeError, uncommitted


def enter_worktree(root: Path, name: str) -> Path:
    """Make (or reuse) the worktree ``name`` of the repository ``root`` is in, and point
    this process's opencode data at the worktree's own folder; returns the folder to work
    in: the worktree's match of ``root`` (a subfolder stays the same subfolder)."""
    repository = Repository.of(root)
    tree = repository.open(name)
    set_own(DATA_DIRECTORY_VARIABLE, str(tree.data))
    print(f"opencode: working in the worktree {tree.name} (branch {tree.branch}) at {tree.path}", file=sys.stderr)
    inside = root.resolve().relative_to(repository.top.resolve()) if root.resolve().is_relative_to(repository.top.resolve()) else Path()
    return (tree.path / inside).resolve()


def list_worktrees(root: Path) -> int:
    """One line per worktree: name, branch, state, sessions, folder."""
    trees = Repository.of(root).worktrees()
    if not trees:
        print("No worktrees: 'opencode --worktree NAME' makes one")
    for tree in trees:
        changed = uncommitted(tree.path)
        state = f"{len(changed)} uncommitted" if changed else "clean"
        print(f"{tree.name}  branch {tree.branch or '(detached)'}  {state}  {_sessions(tree)}  {tree.path}")
    return 0


def remove_worktree(root: Path, name: str, *, force: bool) -> int:
    try:
        tree = Repository.of(root).remove(name, force=force)
    except WorktreeError as error:
        print(f"opencode: error: {error}", file=sys.stderr)
        return 1
    print(f"Removed the worktree {tree.name}: branch {tree.branch} and its sessions stay")
    return 0


def _sessions(tree: Worktree) -> str:
    """How many conversations the worktree's data holds, and the latest's title."""
    database = tree.data / "opencode.db"
    if not database.exists():
        return "no sessions"
    from app.bus import Bus
    from app.store.store import open_store

    store = open_store(database, Bus())
    try:
        sessions = store.sessions.list()
    finally:
        store.close()
    if not sessions:
        return "no sessions"
    latest = sessions[0].title or "untitled"
    return f"{len(sessions)} session{'' if len(sessions) == 1 else 's'} (latest: {latest})"
