"""What opening the database costs as its history grows: ``Database(path)`` runs
``PRAGMA quick_check`` (it reads every page once) before anything else, so that a damaged
file is set aside instead of failing a tool call later. Every command pays it at start.
Run: .venv/bin/python bench/bench_store_open.py"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

from app.store import Database

SIZES_MB = (1, 20, 100)
RUNS = 3
"""Each figure is the best of this many runs (warm page cache): the machine is shared,
the minimum is the least disturbed measurement."""


def _grown_to(path: Path, megabytes: int) -> None:
    """A database holding ``megabytes`` of file versions, as edits of big files leave."""
    db = Database(path)
    version = "x" * (1024 * 1024)
    with db.transaction():
        db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('s', 1, 1)")
        for seq in range(megabytes):
            db.execute(
                "INSERT INTO files (session_id, path, content, version, seq, created_at) VALUES ('s', 'f', ?, ?, ?, 1)",
                (version, f"v{seq}", seq),
            )
    db.close()


def _best_ms(action) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        action()
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for megabytes in SIZES_MB:
            path = Path(scratch) / f"{megabytes}.db"
            _grown_to(path, megabytes)
            opened = _best_ms(lambda path=path: Database(path).close())
            bare = _best_ms(lambda path=path: sqlite3.connect(path).execute("SELECT 1").fetchone())
            print(
                f"{path.stat().st_size / 1e6:6.1f} MB: Database() {opened:6.1f} ms "
                f"(a bare sqlite3 connect {bare:4.1f} ms; the difference is mostly quick_check)"
            )


if __name__ == "__main__":
    main()
