"""opencode's data folder in a workspace (``.opencode/`` unless ``data.directory`` says
otherwise): the database, file history and logs. A folder created here holds a
``.gitignore`` of ``*``, so the user's ``git status`` never lists it."""

from __future__ import annotations

from pathlib import Path

GITIGNORE = "*\n"


def create_data_dir(path: Path) -> Path:
    """``path``, created (with its parents) when missing; raises OSError when it cannot be."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        (path / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    return path
