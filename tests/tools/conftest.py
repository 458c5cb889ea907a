"""Fixtures shared by the tool tests (the general ones live in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def seen_file(ctx, workspace: Path) -> Callable[[str, bytes | str], Path]:
    """``seen_file("a.txt", b"...")`` writes a workspace file and records that this
    session read it, as the view tool does, so the change tools accept it as fresh."""

    def make(rel: str, data: bytes | str) -> Path:
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        ctx.records.record_read(ctx.session_id, path)
        return path

    return make


@pytest.fixture
def write_files(workspace: Path) -> Callable[[dict[str, bytes | str]], None]:
    """``write_files({"src/a.py": "x = 1\\n", ...})`` creates workspace files and their folders."""

    def make(files: dict[str, bytes | str]) -> None:
        for rel, data in files.items():
            path = workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

    return make
