"""The change path on big batches: steps shared among threads, history inserted while
the files are written. Whatever fails, nothing changes: no file, no temp file, no
history row, no event."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from app.core.errors import ToolError
from app.store import FileVersionCreated
from app.store.errors import RecordNotFoundError
from app.tools.changes import Change, ChangeSet, apply_changes

FILES = 40  # past the point where the steps run on threads


def plan_of(changes: dict[Path, bytes | None], remove_dirs: list[Path] | None = None):
    def plan(snapshot):
        return ChangeSet(
            changes=[Change(path, data) for path, data in changes.items()],
            title="batch",
            ask_subject="batch",
            remove_dirs=remove_dirs or [],
        )

    return plan


def make_files(workspace: Path, count: int = FILES) -> dict[Path, bytes]:
    files = {}
    for n in range(count):
        path = workspace / f"pkg{n % 4}" / f"f{n}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(f"old {n}\n".encode())
        files[path] = path.read_bytes()
    (workspace / "pkg0" / "f0.txt").chmod(0o755)
    return files


def snapshot_tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".opencode" not in p.parts
    }


def temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob(".opencode-tmp-*")]


async def test_a_write_failing_midway_through_a_big_batch_changes_nothing(ctx, workspace, runtime):
    files = make_files(workspace)
    blocker = workspace / "pkg2" / "is-a-folder"  # a file cannot be renamed over a folder
    (blocker / "inside.txt").parent.mkdir()
    (blocker / "inside.txt").write_text("keep\n")
    before = snapshot_tree(workspace)
    changes: dict[Path, bytes | None] = {path: b"new\n" for path in files}
    changes = {**dict(list(changes.items())[:20]), blocker: b"x\n", **dict(list(changes.items())[20:])}
    changes[workspace / "pkg1" / "created.txt"] = b"created\n"
    events = runtime.bus.subscribe(FileVersionCreated)
    with pytest.raises(ToolError, match="nothing was changed"):
        await apply_changes(ctx, "write", list(changes), plan_of(changes))
    assert snapshot_tree(workspace) == before
    assert temp_files(workspace) == []
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []
    await asyncio.sleep(0)
    assert events.get_nowait() is None


async def test_a_big_delete_failing_midway_puts_every_file_back(ctx, workspace, runtime):
    files = make_files(workspace)
    vanished = workspace / "pkg3" / "vanished.txt"  # listed by the plan, gone before the removal
    before = snapshot_tree(workspace)
    changes: dict[Path, bytes | None] = {path: None for path in files} | {vanished: None}
    with pytest.raises(ToolError, match="vanished.txt.*nothing was changed"):
        await apply_changes(ctx, "delete", list(changes), plan_of(changes))
    assert snapshot_tree(workspace) == before  # bytes and modes (pkg0/f0.txt is 0o755)
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


async def test_a_big_delete_removes_the_files_then_their_folders(ctx, workspace, runtime):
    files = make_files(workspace)
    folders = sorted({path.parent for path in files})
    changes: dict[Path, bytes | None] = {path: None for path in files}
    await apply_changes(ctx, "delete", list(changes), plan_of(changes, remove_dirs=folders))
    assert list(workspace.iterdir()) == [workspace / ".opencode"]
    recorded = runtime.store.history.list_latest_session_files(ctx.session_id)
    assert len(recorded) == FILES and all(change.deleted for change in recorded)


async def test_history_failing_while_the_files_are_written_undoes_the_writes(make_runtime, workspace):
    runtime = make_runtime()
    files = make_files(workspace)
    before = snapshot_tree(workspace)
    ctx = runtime.context("no-such-session")  # history refuses to record for it
    changes: dict[Path, bytes | None] = {path: b"new\n" for path in files}
    with pytest.raises(RecordNotFoundError):
        await apply_changes(ctx, "write", list(changes), plan_of(changes))
    assert snapshot_tree(workspace) == before
    assert temp_files(workspace) == []


async def test_events_arrive_once_the_files_are_written_and_the_versions_committed(ctx, workspace, runtime):
    files = make_files(workspace)
    changes: dict[Path, bytes | None] = {path: b"new\n" for path in files}
    first = workspace / "pkg0" / "f0.txt"
    seen_at_first_event: list[object] = []

    async def watch() -> None:
        async with runtime.bus.subscribe(FileVersionCreated) as events:
            await events.get()
            # Another connection sees only committed rows.
            with sqlite3.connect(runtime.store.db.path) as other:
                (rows,) = other.execute("SELECT COUNT(*) FROM files").fetchone()
            seen_at_first_event.extend([first.read_bytes(), rows])

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)
    await apply_changes(ctx, "write", list(changes), plan_of(changes))
    await asyncio.wait_for(watcher, 5)
    assert seen_at_first_event == [b"new\n", 2 * FILES]
