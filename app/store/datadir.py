"""opencode's data folder in a workspace (``.opencode/`` unless ``data.directory`` says
otherwise): the database, file history and logs. A folder created here holds a
``.gitignore`` of ``*``, so the user's ``git status`` never lists it. A folder that was
there first (the user's agents and commands live in ``.opencode/`` too) gets, on
opencode's first run in it, a ``.gitignore`` naming only opencode's own files, so the
user's files stay visible to git and opencode's do not show up."""

from __future__ import annotations

import os
from pathlib import Path

GITIGNORE = "*\n"
DATABASE_FILE = "opencode.db"
OWN_FILES_GITIGNORE = f"""# opencode's own files (the rest of this folder is yours: agents, commands)
.gitignore
{DATABASE_FILE}*
changes.lock
last-model
.last-model.*
logs/
mcp/
"""
"""This file itself (so `git status` stays as it was), the database with its -wal, -shm
and damaged copies, the lock of the change path, the last model chosen (and its
temporary while written), the ACP and MCP logs."""


def create_data_dir(path: Path) -> Path:
    """``path``, created (with its parents) when missing; raises OSError when it cannot be.
    A folder without a database is one opencode has not used yet: it gets a .gitignore
    unless it has one (a user who removed it after a run keeps it removed)."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        (path / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    elif not os.path.lexists(path / DATABASE_FILE) and not os.path.lexists(path / ".gitignore"):
        (path / ".gitignore").write_text(OWN_FILES_GITIGNORE, encoding="utf-8")
    return path
