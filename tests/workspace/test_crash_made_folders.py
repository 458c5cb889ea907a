"""Crashes in a change that makes folders for its new files (write into a new folder,
patch's Add File and Move to): the journal records the folders as well as the files, and
the next start removes them, so the tree, folders and modes included, is as before the
call, with no empty folder left behind."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

from tests.workspace.test_crash_recovery import (
    next_start,
    plant,
    started,
    temp_files,
    tool_call,
    viewed_in_a_session,
)

OLD = {"src/app.py": b"def main():\n    return 1\n", "run.sh": b"#!/bin/sh\necho 1\n"}


def entries(root: Path) -> dict[str, tuple[str, int, bytes | None]]:
    """Every file, symlink and folder below ``root`` (the data folder aside): its kind,
    permission bits and bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".opencode" in path.relative_to(root).parts:
            continue
        info = os.lstat(path)
        kind = "link" if stat.S_ISLNK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) else "file"
        data = path.read_bytes() if kind == "file" else os.readlink(path).encode() if kind == "link" else None
        found[path.relative_to(root).as_posix()] = (kind, stat.S_IMODE(info.st_mode), data)
    return found


PATCH = (
    "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/deep/run.sh\n@@\n-echo 1\n+echo 2\n"
    "*** Add File: z/y/x.txt\n+x\n*** End Patch"
)


def test_a_crash_at_every_file_operation_leaves_no_folder_it_made(tmp_path: Path) -> None:
    """Patch's Move to and Add File into new folders (the write tool makes its folders
    through the same change path)."""
    root = tmp_path / "ws"
    root.mkdir()
    plant(root, OLD)
    (root / "run.sh").chmod(0o755)
    before = entries(root)
    for n in range(1, 30):
        done = tool_call(root, "patch", {"patch": PATCH}, crash_at=n)
        if done.returncode == 0:
            assert n > 4, "the call made its folders in fewer operations than expected"
            return
        assert done.returncode == -signal.SIGKILL, done.stderr
        recovered = next_start(root) if n == 1 else "\n".join(started(root))
        assert "Rolled back an interrupted change" in recovered and "; 3 files)" in recovered, recovered
        assert entries(root) == before, f"not as before after a crash before file operation {n}"
        assert temp_files(root) == []
    raise AssertionError("the call never ran to its end")


def test_a_file_turned_into_a_folder_after_the_crash_is_left_alone_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """The user made a folder where the interrupted edit's file was: recovery cannot put
    the file back without removing their folder, so it says so, keeps the change set
    (the old content stays recorded) and leaves no temp file; once the folder is moved
    away, the next start puts the file back. Each start added a temp file before."""
    root = tmp_path / "ws"
    root.mkdir()
    plant(root, OLD)
    session = viewed_in_a_session(root, "src/app.py")
    edit = {"filePath": "src/app.py", "oldString": "return 1", "newString": "return 2"}
    assert tool_call(root, "edit", edit, "--session", session, crash_at=2).returncode == -signal.SIGKILL
    (root / "src" / "app.py").unlink()
    (root / "src" / "app.py").mkdir()
    (root / "src" / "app.py" / "mine.txt").write_text("mine\n")
    for _ in range(2):
        said = next_start(root)
        assert "src/app.py is a folder now, where the change found a file" in said, said
        assert temp_files(root) == [] and (root / "src" / "app.py" / "mine.txt").read_text() == "mine\n"
    (root / "src" / "app.py").rename(root / "moved")
    assert "Rolled back an interrupted change" in next_start(root)
    assert (root / "src" / "app.py").read_bytes() == OLD["src/app.py"] and temp_files(root) == []
