from collections.abc import Iterator
from pathlib import Path

import pytest

from app.bus import Bus
from app.store import Store, open_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "opencode.db"


@pytest.fixture
def bus() -> Bus:
    return Bus()


@pytest.fixture
def store(db_path: Path, bus: Bus) -> Iterator[Store]:
    opened = open_store(db_path, bus)
    yield opened
    opened.close()
