"""Waiting for a configuration file to change: the app could not start on a broken
``.opencode.json`` and tries again each time one of the files the configuration is read
from is saved. The files' fingerprint, taken before they were read, decides: a save made
while the watch was being set up counts too, and watchfiles (the workspace watcher's
library, imported only here) wakes the check up as soon as a file changes."""

from __future__ import annotations

from pathlib import Path

from app.config import Fingerprint, config_files, config_fingerprint

RECHECK_MS = 1000
"""Without news from watchfiles, the fingerprint is checked again this often."""


def fingerprint(workspace: Path) -> Fingerprint:
    """(mtime_ns, size, inode) of each file the configuration is read from; None where absent."""
    return config_fingerprint(workspace)


async def config_saved(workspace: Path, since: Fingerprint) -> None:
    """Return once the configuration files differ from ``since``."""
    from watchfiles import awatch

    if fingerprint(workspace) != since:
        return
    files = {path.parent.resolve() / path.name for path in config_files(workspace)}  # as watchfiles names them
    folders = sorted({path.parent for path in files if path.parent.is_dir()})
    watched = {str(path) for path in files}
    async for _ in awatch(
        *folders,
        watch_filter=lambda _, path: path in watched,
        recursive=False,
        step=20,
        rust_timeout=RECHECK_MS,
        yield_on_timeout=True,
    ):
        if fingerprint(workspace) != since:
            return
