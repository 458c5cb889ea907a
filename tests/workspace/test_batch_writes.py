"""Batch writes: staged temp files (Beneath.stage) and the batch's durability syncs
(sync_paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.workspace.beneath import Beneath, PathSwappedError
from app.workspace.textio import _unwritten_bytes, sync_paths


def stage_atomic(path: Path, data: bytes) -> Path:
    with Beneath(path.anchor) as fs:
        return Path(path.anchor, fs.stage(fs.relative(path), data))


def test_staging_makes_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deep" / "file.txt"
    staged = stage_atomic(path, b"x\n")
    assert staged.parent == path.parent and staged.read_bytes() == b"x\n"


def test_staging_keeps_the_replaced_files_mode(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_bytes(b"old\n")
    path.chmod(0o750)
    staged = stage_atomic(path, b"new\n")
    assert (staged.read_bytes(), staged.stat().st_mode & 0o777) == (b"new\n", 0o750)
    assert path.read_bytes() == b"old\n"  # replaced only when the caller renames


def test_staging_under_a_file_fails_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where a folder is needed\n")
    with pytest.raises(PathSwappedError, match="blocker is no longer a folder"):
        stage_atomic(tmp_path / "blocker" / "x.txt", b"x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


@pytest.mark.parametrize("sync_all_limit", [1 << 62, -1], ids=["one os.sync", "fsync each on threads"])
def test_a_batch_of_files_and_folders_is_synced(tmp_path: Path, sync_all_limit: int) -> None:
    paths = [tmp_path / f"f{n}" for n in range(12)]
    for path in paths:
        path.write_bytes(b"data")
    sync_paths([*paths, tmp_path], sync_all_limit=sync_all_limit)
    assert all(path.read_bytes() == b"data" for path in paths)


def test_syncing_each_file_reports_one_that_is_gone(tmp_path: Path) -> None:
    paths = [tmp_path / f"f{n}" for n in range(12)]
    for path in paths[1:]:
        path.write_bytes(b"data")
    with pytest.raises(FileNotFoundError) as raised:
        sync_paths(paths, sync_all_limit=-1)
    assert raised.value.filename == str(paths[0])


@pytest.mark.skipif(not Path("/proc/meminfo").exists(), reason="Linux reports unwritten bytes")
def test_unwritten_bytes_are_read_from_the_kernel() -> None:
    assert 0 <= _unwritten_bytes() < 1 << 50
