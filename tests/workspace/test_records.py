"""File records (freshness) and per-path locks, on real files."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from app.core.errors import StaleFileError
from app.workspace import FileRecords, Workspace

SESSION = "s1"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def records(root: Path) -> FileRecords:
    return FileRecords(Workspace(root))


@pytest.fixture
def file(root: Path) -> Path:
    path = root / "src" / "a.txt"
    path.parent.mkdir()
    path.write_text("hello\n")
    return path


def test_never_read_file_is_refused(records: FileRecords, file: Path) -> None:
    with pytest.raises(StaleFileError) as caught:
        records.assert_fresh(SESSION, file)
    assert str(caught.value) == "You must read src/a.txt with the view tool before changing it"


def test_read_and_unchanged_is_fresh(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    records.assert_fresh(SESSION, file)


def test_reads_belong_to_their_session(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    with pytest.raises(StaleFileError, match="You must read src/a.txt"):
        records.assert_fresh("other-session", file)


def _assert_modified(records: FileRecords, file: Path) -> None:
    with pytest.raises(StaleFileError) as caught:
        records.assert_fresh(SESSION, file)
    assert re.fullmatch(
        r"src/a\.txt was modified since you last read it \(at \d\d:\d\d:\d\d\): "
        r"read it again with the view tool before editing",
        str(caught.value),
    )


def test_size_change_is_stale(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    stamp = os.stat(file)
    file.write_text("hello, longer\n")
    os.utime(file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    _assert_modified(records, file)


def test_mtime_change_is_stale(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    stamp = os.stat(file)
    os.utime(file, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000))
    _assert_modified(records, file)


def test_replaced_by_rename_with_same_size_and_mtime_is_stale(records: FileRecords, file: Path) -> None:
    """What editors that save via a temp file do: only the inode tells."""
    records.record_read(SESSION, file)
    stamp = os.stat(file)
    replacement = file.with_name("a.txt.new")
    replacement.write_text("HELLO\n")
    os.utime(replacement, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(replacement, file)
    after = os.stat(file)
    assert (after.st_size, after.st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
    assert after.st_ino != stamp.st_ino
    _assert_modified(records, file)


def test_deleted_since_read_has_its_own_message(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    file.unlink()
    with pytest.raises(
        StaleFileError, match=r"src/a\.txt was deleted since you last read it \(at .*\): check the path"
    ):
        records.assert_fresh(SESSION, file)


def test_a_file_whose_folder_became_a_file_counts_as_deleted(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    file.unlink()
    file.parent.rmdir()
    file.parent.write_text("a file where the folder was\n")
    with pytest.raises(StaleFileError, match=r"src/a\.txt was deleted since you last read it"):
        records.assert_fresh(SESSION, file)


def test_own_write_makes_the_file_fresh(records: FileRecords, file: Path) -> None:
    records.record_read(SESSION, file)
    file.write_text("changed by a tool\n")
    records.record_write(SESSION, file)
    records.assert_fresh(SESSION, file)


def test_write_without_read_counts_as_seen(records: FileRecords, root: Path) -> None:
    created = root / "new.txt"
    created.write_text("made by the write tool\n")
    records.record_write(SESSION, created)
    records.assert_fresh(SESSION, created)


def test_a_deletion_recorded_by_us_is_fresh_until_the_file_reappears(
    records: FileRecords, file: Path
) -> None:
    file.unlink()
    records.record_write(SESSION, file)
    records.assert_fresh(SESSION, file)
    file.write_text("recreated by someone else\n")
    _assert_modified(records, file)


def test_last_read_and_last_write(records: FileRecords, file: Path) -> None:
    assert records.last_read(SESSION, file) is None
    assert records.last_write(SESSION, file) is None
    read = records.record_read(SESSION, file)
    assert records.last_read(SESSION, file) == read
    assert read.fingerprint is not None and read.fingerprint.size == len("hello\n")
    assert records.last_write(SESSION, file) is None
    write = records.record_write(SESSION, file)
    assert records.last_write(SESSION, file) == write
    assert write.at >= read.at


def test_two_spellings_of_one_file_share_records(records: FileRecords, file: Path, root: Path) -> None:
    records.record_read(SESSION, root / "src" / ".." / "src" / "a.txt")
    records.assert_fresh(SESSION, file)


def test_without_a_workspace_messages_show_the_path_given(file: Path) -> None:
    with pytest.raises(StaleFileError, match=f"You must read {re.escape(str(file))} with the view tool"):
        FileRecords().assert_fresh(SESSION, file)


# --- locks -----------------------------------------------------------------------------


async def test_lock_serialises_coroutines_on_one_path(records: FileRecords, file: Path) -> None:
    trace: list[str] = []

    async def critical(name: str) -> None:
        async with records.lock(file):
            trace.append(f"{name} in")
            await asyncio.sleep(0)  # the others get their turn to try the lock
            trace.append(f"{name} out")

    await asyncio.gather(*(critical(n) for n in "abc"))
    assert [entry.split()[1] for entry in trace] == ["in", "out"] * 3
    assert records.lock_count == 0  # unused locks are dropped


async def test_two_spellings_share_one_lock(records: FileRecords, file: Path, root: Path) -> None:
    async with records.lock(file):
        waiter = asyncio.create_task(_enter(records, [root / "src" / ".." / "src" / "a.txt"]))
        await _settle()
        assert not waiter.done()
    await asyncio.wait_for(waiter, 5)


async def test_different_paths_do_not_block_each_other(records: FileRecords, root: Path) -> None:
    async with records.lock(root / "a.txt"):
        await asyncio.wait_for(_enter(records, [root / "b.txt"]), 5)


async def test_lock_many_takes_locks_in_sorted_order(records: FileRecords, root: Path) -> None:
    a, b, c = (root / name for name in ("a", "b", "c"))
    async with records.lock(b):
        many = asyncio.create_task(_enter(records, [c, a, b]))
        await _settle()
        # lock_many holds a (sorted before b) and waits for b; it has not touched c yet.
        await asyncio.wait_for(_enter(records, [c]), 5)
        waiter_for_a = asyncio.create_task(_enter(records, [a]))
        await _settle()
        assert not waiter_for_a.done()
        assert not many.done()
    await asyncio.wait_for(asyncio.gather(many, waiter_for_a), 5)
    assert records.lock_count == 0


async def test_opposite_orders_do_not_deadlock(records: FileRecords, root: Path) -> None:
    a, b = root / "a", root / "b"

    async def hold(paths: list[Path]) -> None:
        async with records.lock_many(paths):
            await asyncio.sleep(0)  # the others get their turn to try the locks

    await asyncio.wait_for(asyncio.gather(*(hold([a, b]) if i % 2 else hold([b, a]) for i in range(6))), 10)
    assert records.lock_count == 0


async def _enter(records: FileRecords, paths: list[Path]) -> None:
    async with records.lock_many(paths):
        pass


async def _settle() -> None:
    """Let every ready task run until it blocks."""
    for _ in range(10):
        await asyncio.sleep(0)


def test_many_paths_resolve_as_realpath_does_each(root: Path) -> None:
    """A batch resolves each folder once; the result must be realpath's for every kind of entry."""
    from app.workspace.file_records import _canonical_many

    real = root / "real"
    (real / "sub").mkdir(parents=True)
    (real / "file.txt").write_text("x\n")
    (root / "linked").symlink_to(real)
    (real / "to-file").symlink_to(real / "sub" / ".." / "file.txt")
    (real / "dangling").symlink_to(root / "nowhere" / "x")
    paths = [
        real / "file.txt", root / "linked" / "file.txt", root / "linked" / "to-file", real / "dangling",
        root / "linked" / "missing.txt", root / "linked" / "sub" / "..", root / "linked", Path("relative.txt"),
    ]
    assert _canonical_many(paths) == [Path(os.path.realpath(path)) for path in paths]


def test_changes_recorded_through_a_linked_folder_count_for_the_real_path(records: FileRecords, root: Path) -> None:
    (root / "real").mkdir()
    (root / "alias").symlink_to(root / "real")
    files = [root / "alias" / f"f{n}.txt" for n in range(3)]
    for path in files:
        path.write_text("x\n")
    records.record_changes(SESSION, files)
    for n in range(3):
        records.assert_fresh(SESSION, root / "real" / f"f{n}.txt")
