"""Fixtures shared by the tool tests (the general ones live in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
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


@pytest.fixture
def make_unwritable() -> Iterator[Callable[[Path], None]]:
    """``make_unwritable(path)``: a file this process may not write, as the OS decides.
    Mode 0444 does that for a user; root writes through it, so as root the file is made
    immutable (``chattr +i``, undone afterwards), or the test is skipped where it cannot be."""
    frozen: list[Path] = []

    def make(path: Path) -> None:
        path.chmod(0o444)
        if os.access(path, os.W_OK):
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
                pytest.skip("running as root where chattr +i is not available: no file is unwritable")
            frozen.append(path)

    yield make
    for path in frozen:
        subprocess.run(["chattr", "-i", str(path)], check=True)
