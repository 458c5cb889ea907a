"""Waiting for a configuration file to change: the app could not start on a broken
``.opencode.json`` and tries again each time one of the files the configuration is
read from is saved (event-driven, through the same watchfiles the workspace watcher uses)."""

from __future__ import annotations

from pathlib import Path

from watchfiles import awatch

from app.config import config_files


async def config_saved(workspace: Path) -> None:
    """Return once any file ``load_config(workspace)`` reads is written, created or removed."""
    files = {path.parent.resolve() / path.name for path in config_files(workspace)}  # as watchfiles names them
    folders = sorted({path.parent for path in files if path.parent.is_dir()})
    watched = {str(path) for path in files}
    async for _ in awatch(*folders, watch_filter=lambda _, path: path in watched, recursive=False, step=20):
        return
