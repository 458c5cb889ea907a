"""A workspace whose `.opencode` folder cannot be written still works: its data goes to
the user's own folder for it, said once; a folder the user chose is never swapped.

Two real ways for the folder to be unwritable: a read-only bind mount of the workspace
(a read-only file system refuses even root; needs `unshare -rm`, else skipped) and, on
any machine, a file standing where the `.opencode` folder should be."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import Config
from app.runtime import Runtime
from app.store import StoreError
from app.store.location import data_directory, user_data_directory

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data-home"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def test_a_file_where_the_folder_should_be_sends_the_data_to_the_users_folder(workspace: Path, data_home: Path):
    (workspace / ".opencode").write_text("not a folder\n")

    runtime = Runtime.build(workspace, config=Config())
    try:
        session = runtime.store.sessions.create("kept")
    finally:
        runtime.close()

    fallback = user_data_directory(workspace.resolve(), {"XDG_DATA_HOME": str(data_home)})
    assert fallback.parent == data_home / "opencode" / "workspaces" and fallback.name.startswith("ws-")
    assert runtime.data_dir == fallback and (fallback / "opencode.db").is_file()
    assert runtime.notices == [
        f"cannot write {workspace.resolve() / '.opencode'} (File exists); this workspace's sessions "
        f"are kept in {fallback} instead (set OPENCODE_DATA__DIRECTORY to choose the folder)"
    ]
    again = Runtime.build(workspace, config=Config())
    try:
        assert again.store.sessions.get(session.id) is not None  # the same folder next time
    finally:
        again.close()


def test_two_workspaces_of_one_name_get_folders_of_their_own(tmp_path: Path):
    env = {"XDG_DATA_HOME": str(tmp_path / "d")}
    assert user_data_directory(tmp_path / "a" / "proj", env) != user_data_directory(tmp_path / "b" / "proj", env)
    assert user_data_directory(tmp_path / "a" / "proj", {"XDG_DATA_HOME": "relative"}).is_relative_to(Path.home())


def test_a_folder_the_user_chose_is_not_swapped_and_the_error_names_the_setting(workspace: Path, data_home: Path):
    (workspace / "blocked").write_text("a file\n")
    config = Config.model_validate({"data": {"directory": "blocked"}})

    with pytest.raises(StoreError) as caught:
        data_directory(workspace, config)

    assert str(caught.value) == (
        f"cannot write opencode's data folder {workspace / 'blocked'} (File exists): set OPENCODE_DATA__DIRECTORY "
        "(or data.directory in .opencode.json) to a writable folder"
    )
    assert not data_home.exists()


def test_when_neither_folder_can_be_written_the_error_names_both_and_the_setting(workspace: Path, tmp_path: Path):
    (workspace / ".opencode").write_text("x")
    (tmp_path / "file-home").write_text("x")

    with pytest.raises(StoreError, match="OPENCODE_DATA__DIRECTORY") as caught:
        data_directory(workspace, Config(), {"XDG_DATA_HOME": str(tmp_path / "file-home")})

    assert f"and {workspace / '.opencode'}: File exists" in str(caught.value)


def opencode(workspace: Path, home: Path, *args: str, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_", "XDG_"))}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run(
        [*(wrap or []), sys.executable, "-m", "app.cli", *args, "-C", str(workspace)],
        capture_output=True, text=True, env=env, timeout=60, cwd=home,
    )  # fmt: skip


def test_headless_commands_say_it_once_on_stderr_and_work(workspace: Path, tmp_path: Path):
    (workspace / ".opencode").write_text("x")
    (workspace / "a.txt").write_text("hello\n")

    viewed = opencode(workspace, tmp_path, "tool", "view", '{"filePath": "a.txt"}')
    listed = opencode(workspace, tmp_path, "changes", "--include-tool", "--json")

    assert viewed.returncode == 0 and json.loads(viewed.stdout)["ok"]
    assert viewed.stderr.count("\n") == 1 and "this workspace's sessions are kept in" in viewed.stderr
    assert json.loads(listed.stdout)["session_id"] == json.loads(viewed.stdout)["session_id"]


def _read_only_mount_works(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && ! touch "$1/x" 2>/dev/null'
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(probe)], capture_output=True, timeout=30)
    return done.returncode == 0


def test_a_read_only_file_system_is_explored_with_the_data_in_the_users_folder(workspace: Path, tmp_path: Path):
    if not _read_only_mount_works(tmp_path):
        pytest.skip("no read-only bind mount here (unshare -rm and mount are needed)")
    (workspace / "a.txt").write_text("hello\n")
    read_only = [
        "unshare", "-rm", "sh", "-c",
        'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"', str(workspace),
    ]  # fmt: skip

    viewed = opencode(workspace, tmp_path, "tool", "view", '{"filePath": "a.txt"}', wrap=read_only)
    chosen = opencode(workspace, tmp_path, "changes", wrap=[*read_only, "env", "OPENCODE_DATA__DIRECTORY=.od"])

    assert viewed.returncode == 0, viewed.stderr
    assert json.loads(viewed.stdout)["output"] == "     1\thello"
    assert f"cannot write {workspace / '.opencode'} (Read-only file system)" in viewed.stderr
    assert not (workspace / ".opencode").exists()
    assert list((tmp_path / ".local" / "share" / "opencode" / "workspaces").glob("ws-*/opencode.db"))
    assert chosen.returncode == 2
    assert chosen.stderr == (
        f"opencode: error: cannot write opencode's data folder {workspace / '.od'} (Read-only file system): "
        "set OPENCODE_DATA__DIRECTORY (or data.directory in .opencode.json) to a writable folder\n"
    )
