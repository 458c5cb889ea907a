"""Each test gets a workspace and a home directory of its own, and an environment that
points only there, so no real ~/.opencode.json or OPENCODE_* variable leaks in."""

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin"}


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
