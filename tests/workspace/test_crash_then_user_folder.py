"""Recovery from a crash when the user changed the tree meanwhile: a folder now stands
where the interrupted change found a file. (A crash at every file operation of a change
that makes folders, folders and modes checked, is walked in test_crash_recovery.py.)"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.workspace.test_crash_recovery import next_start, plant, temp_files, tool_call, viewed_in_a_session

OLD = {"src/app.py": b"def main():\n    return 1\n"}


def test_a_file_turned_into_a_folder_after_the_crash_is_left_alone_and_leaves_no_temp_file(tmp_path: Path) -> None:
    """The user made a folder where the interrupted edit's file was: recovery cannot put
    the file back without removing their folder, so it says so, keeps the change set
    (the old content stays recorded) and leaves no temp file; once the folder is moved
    away, the next start puts the file back."""
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
