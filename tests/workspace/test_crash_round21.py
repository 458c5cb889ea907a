"""Round 21 of the attack suite, crashes: a change that makes folders for its new files
(write into a new folder, patch's Add File and Move to) was rolled back to its files
only, leaving the folders it made behind, empty. The journal records them too now, and
the next start removes them: the tree, folders and modes included, is as before the call."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

from tests.workspace.test_crash_recovery import next_start, plant, started, temp_files, tool_call

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
