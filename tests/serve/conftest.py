"""The runtime folder each serve test gets: its server's socket and its commands'
XDG_RUNTIME_DIR (see running.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.running import runtime_folder


@pytest.fixture
def folder() -> Iterator[Path]:
    with runtime_folder() as made:
        yield made
