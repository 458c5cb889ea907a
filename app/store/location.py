"""Where a workspace's data (the database, logs) lives: the configured data directory
(`data.directory`, `.opencode` in the workspace by default); or, when the default one
cannot be written (a read-only checkout or file system, a file where the folder should
be), a folder of the user's own for this workspace, so read-only exploration still works.
A directory the user chose is never swapped for another: its error names the setting."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from app.config import Config
from app.store.datadir import create_data_dir
from app.store.errors import StoreError

DATA_DIRECTORY_VARIABLE = "OPENCODE_DATA__DIRECTORY"


class DataDirectory(NamedTuple):
    """Where the store keeps a workspace's data, and why, when it is not the usual place."""

    path: Path
    """Created and writable."""
    notice: str | None = None
    """Set when the workspace's own directory could not be used: one line for the user
    (front-ends print it after "opencode: ")."""


def data_directory(root: Path, config: Config, env: Mapping[str, str] | None = None) -> DataDirectory:
    """The directory for ``root``'s data, created; raises StoreError (one line naming
    OPENCODE_DATA__DIRECTORY) when no directory can be written."""
    env = os.environ if env is None else env
    configured = config.data_dir(root)
    problem = unwritable(configured)
    if problem is None:
        return DataDirectory(configured)
    if "directory" in config.data.model_fields_set:  # the user's choice: say so, do not move it
        raise _no_folder(configured, problem)
    fallback = user_data_directory(root, env)
    fallback_problem = unwritable(fallback)
    if fallback_problem is not None:
        raise _no_folder(fallback, fallback_problem, also=f"{configured}: {problem}")
    return DataDirectory(
        fallback,
        f"cannot write {configured} ({problem}); this workspace's sessions are kept in "
        f"{fallback} instead (set {DATA_DIRECTORY_VARIABLE} to choose the folder)",
    )


def user_data_directory(root: Path, env: Mapping[str, str]) -> Path:
    """This workspace's folder under the user's data directory ($XDG_DATA_HOME, else
    ~/.local/share): named after the workspace, plus a hash of its path, unique per path."""
    base = env.get("XDG_DATA_HOME", "")
    data_home = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root.name)[:40] or "root"
    return data_home / "opencode" / "workspaces" / f"{name}-{digest}"


def unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold opencode's files (creating it if missing), or None.
    The access check is free; only when it says no is a file tried, for the system's
    own reason (as root, only a read-only file system refuses)."""
    try:
        create_data_dir(folder)
    except OSError as err:
        return err.strerror or str(err)
    if os.access(folder, os.W_OK | os.X_OK):
        return None
    try:
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as err:
        return err.strerror or str(err)


def _no_folder(folder: Path, problem: str, also: str | None = None) -> StoreError:
    tried = f" (and {also})" if also else ""
    return StoreError(
        f"cannot write opencode's data folder {folder} ({problem}){tried}: set {DATA_DIRECTORY_VARIABLE} "
        "(or data.directory in .opencode.json) to a writable folder"
    )
