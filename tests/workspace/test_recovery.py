"""Recovery at start, in process: a pending change set is rolled back with its
history rows and said in one line; one that another holder of the workspace lock is
still making is left to finish, not undone."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from app.runtime import Runtime
from app.store.journal import Before, Begun
from app.store.models import RecordedChange
from app.workspace.beneath import TEMP_PREFIX
from tests.waiting import wait_until


def pending_change(runtime: Runtime, root: Path) -> int:
    """A change set begun as the change path begins one: a.txt rewritten, b.txt created
    (temp files staged beside them), c.txt removed. Nothing finishes it."""
    session = runtime.store.sessions.create(title="interrupted").id
    entries = [
        Before("a.txt", "file", b"old a\n", 0o640),
        Before("sub/b.txt", "absent"),
        Before("c.txt", "file", b"c\n", 0o644),
    ]
    recorded = [
        RecordedChange("a.txt", "old a\n", "new a\n"),
        RecordedChange("sub/b.txt", "", "b\n"),
        RecordedChange("c.txt", "c\n", "", deleted=True),
    ]
    begun = runtime.store.journal.begin(str(root), session, "Patch: a.txt, sub/b.txt, c.txt", entries, recorded)
    (root / "a.txt").write_text("new a\n")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("b\n")
    (root / "c.txt").unlink()
    (root / "sub" / f"{TEMP_PREFIX}0123-b.txt").write_text("half")
    return begun.id


def test_the_next_start_rolls_a_pending_change_set_back(workspace: Path, make_runtime) -> None:
    (workspace / "a.txt").write_text("old a\n")
    (workspace / "a.txt").chmod(0o640)
    (workspace / "c.txt").write_text("c\n")
    first = make_runtime()
    pending_change(first, workspace)
    first.close()

    second = make_runtime()
    assert second.notices == [
        "Rolled back an interrupted change (Patch: a.txt, sub/b.txt, c.txt; 3 files): "
        "every file it touched is as it was before it"
    ]
    assert (workspace / "a.txt").read_text() == "old a\n"
    assert (workspace / "a.txt").stat().st_mode & 0o777 == 0o640
    assert (workspace / "c.txt").read_text() == "c\n"
    assert os.listdir(workspace / "sub") == []  # the created file and the temp file are gone
    assert second.store.db.query("SELECT * FROM files") == []  # its versions never happened
    assert make_runtime().notices == []


def _waiting_for(lock_file: Path) -> bool:
    """Whether some process waits for the flock on ``lock_file`` (Linux: /proc/locks
    lists waiters with "->")."""
    inode = f":{lock_file.stat().st_ino} "
    return any(line.split()[1] == "->" and inode in line for line in Path("/proc/locks").read_text().splitlines())


def test_a_change_another_holder_is_making_is_left_to_finish(workspace: Path, make_runtime) -> None:
    (workspace / "a.txt").write_text("old a\n")
    (workspace / "c.txt").write_text("c\n")
    maker = make_runtime()
    holding = maker.workspace_lock.held()
    holding.__enter__()  # the change path holds the lock while it changes the files
    change_set = pending_change(maker, workspace)
    started: list[Runtime] = []
    starting = threading.Thread(target=lambda: started.append(make_runtime()))
    starting.start()
    wait_until(
        lambda: _waiting_for(maker.workspace_lock.path) or not starting.is_alive(), 60, "the new start waiting for the lock"
    )
    assert starting.is_alive()
    (workspace / "sub" / f"{TEMP_PREFIX}0123-b.txt").unlink()
    maker.store.journal.finish(Begun(change_set, []))
    holding.__exit__(None, None, None)
    starting.join(timeout=60)
    assert started and started[0].notices == []
    assert (workspace / "a.txt").read_text() == "new a\n"
    assert not (workspace / "c.txt").exists()
