"""File history speed: a 5,000-file directory delete recorded in one batch, and the
sidebar's list of 1,000 changed files. Run: .venv/bin/python bench/bench_history.py"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from app.bus import Bus
from app.store import Store, open_store

DELETE_FILES = 5_000
DELETE_TARGET_MS = 1_000
LIST_FILES = 1_000
LIST_TARGET_MS = 200
RUNS = 3
"""Each figure is the best of this many runs: the machine is shared, the minimum is the
least disturbed measurement."""


def _source(n: int) -> str:
    return "".join(f"line {i} of file {n}: some ordinary source text\n" for i in range(40))


def bench_directory_delete(store: Store) -> float:
    """What the delete tool records for a directory: initial + an empty deleted v1 each."""
    session = store.sessions.create("delete").id
    contents = [(f"tmp/pkg{n % 50}/file{n}.py", _source(n)) for n in range(DELETE_FILES)]
    start = time.perf_counter()
    with store.history.batch():
        for path, content in contents:
            store.history.create(session, path, content)
            store.history.create_version(session, path, "", deleted=True)
    return (time.perf_counter() - start) * 1000


def bench_list_latest(store: Store) -> float:
    """A parent and a sub-agent editing 1,000 files between them, one line changed each."""
    parent = store.sessions.create("list").id
    child = store.sessions.create("sub-agent", parent_id=parent).id
    with store.history.batch():
        for n in range(LIST_FILES):
            session = parent if n % 2 else child
            before = _source(n)
            store.history.create(session, f"src/m{n}.py", before)
            store.history.create_version(session, f"src/m{n}.py", before.replace("line 7 ", "LINE 7 "))
    start = time.perf_counter()
    changes = store.history.list_latest_session_files(parent)
    elapsed = (time.perf_counter() - start) * 1000
    assert len(changes) == LIST_FILES and changes[0].additions == changes[0].deletions == 1
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "opencode.db", Bus())
        try:
            delete_ms = min(bench_directory_delete(store) for _ in range(RUNS))
            list_ms = min(bench_list_latest(store) for _ in range(RUNS))
        finally:
            store.close()
    print(
        f"history batch, {DELETE_FILES} files deleted (initial + v1): {delete_ms:.1f} ms "
        f"(target <= {DELETE_TARGET_MS} ms)"
    )
    print(f"list_latest_session_files, {LIST_FILES} files: {list_ms:.1f} ms (target <= {LIST_TARGET_MS} ms)")


if __name__ == "__main__":
    main()
