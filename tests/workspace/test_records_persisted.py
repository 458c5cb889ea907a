"""File records kept in the store: a later process of the same session knows what an
earlier one read, and still sees changes made since."""

import pytest

from app.bus import Bus
from app.core.errors import StaleFileError
from app.store import open_store
from app.workspace import FileRecords, Workspace


@pytest.fixture
def store(tmp_path):
    store = open_store(tmp_path / "data" / "opencode.db", Bus())
    yield store
    store.close()


def test_a_read_in_one_process_counts_in_the_next(tmp_path, store):
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "a.txt"
    target.write_text("one\n")
    session = store.sessions.create().id
    FileRecords(Workspace(root), store.seen).record_read(session, target)

    later = FileRecords(Workspace(root), store.seen)  # a new process: empty memory, same database
    later.assert_fresh(session, target)
    with pytest.raises(StaleFileError, match="You must read"):
        later.assert_fresh(store.sessions.create().id, target)

    target.write_text("one\ntwo\n")
    with pytest.raises(StaleFileError, match="modified since you last read it"):
        FileRecords(Workspace(root), store.seen).assert_fresh(session, target)


def test_changes_are_remembered_in_one_batch(tmp_path, store):
    root = tmp_path / "ws"
    root.mkdir()
    files = [root / f"f{i}.txt" for i in range(3)]
    for path in files:
        path.write_text("x\n")
    session = store.sessions.create().id
    FileRecords(Workspace(root), store.seen).record_changes(session, files)
    later = FileRecords(Workspace(root), store.seen)
    for path in files:
        later.assert_fresh(session, path)
