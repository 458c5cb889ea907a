"""A database file opencode cannot use (damaged, another application's, a newer
opencode's) is set aside under a new name, one line says so, and a fresh one is started:
never a traceback, and the history in the old file stays there for recovery by hand."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.store import Database, StoreError
from app.store.migrations import MIGRATIONS

REPO = Path(__file__).resolve().parents[2]
PAGE = 4096


def _filled(path: Path) -> bytes:
    """A real opencode database of a few dozen pages, closed (its log folded in)."""
    db = Database(path)
    with db.transaction():
        db.execute_many(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, 1, 1)",
            [(f"s{i}", "t" * 500) for i in range(300)],
        )
    db.close()
    return path.read_bytes()


def _zero_a_page(path: Path) -> None:
    data = bytearray(_filled(path))
    data[3 * PAGE : 4 * PAGE] = bytes(PAGE)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = _filled(path)
    path.write_bytes(data[: len(data) // 2])


def _text_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("these are not the pages you are looking for\n" * 100)


def _other_application(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('theirs')")
    conn.commit()
    conn.close()


def _newer_opencode(path: Path) -> None:
    _filled(path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()


DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "zeroed page": (_zero_a_page, r"is damaged \(Page 4: btreeInitPage\(\) returns error code 11\)"),
    "truncated": (_truncate, r"is damaged \(database disk image is malformed\)"),
    "text file": (_text_file, r"is damaged \(file is not a database\)"),
    "other application": (_other_application, r"is not an opencode database \(it holds another application's tables\)"),
    "newer opencode": (_newer_opencode, rf"was written by a newer opencode \(schema version {len(MIGRATIONS) + 1}, "),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_an_unusable_file_is_kept_aside_and_a_fresh_database_started(db_path: Path, damage: str) -> None:
    spoil, why = DAMAGES[damage]
    spoil(db_path)
    spoiled = db_path.read_bytes()
    db = Database(db_path)
    try:
        assert db.notice is not None and "\n" not in db.notice
        assert db.notice.startswith(f"{db_path} ")
        assert re.search(why, db.notice), db.notice
        kept = [p for p in db_path.parent.iterdir() if p.name.startswith("opencode.db.damaged-")]
        assert [p.name for p in kept] == [db.notice.split("kept it as ")[1].split(" ")[0]]
        assert kept[0].read_bytes() == spoiled
        assert db.notice.endswith("and started a fresh database")
        db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('new', 1, 1)")
        assert db.query_one("SELECT COUNT(*) FROM sessions")[0] == 1
    finally:
        db.close()


def test_a_sound_database_is_used_as_it_is(db_path: Path) -> None:
    _filled(db_path)
    db = Database(db_path)
    assert db.notice is None
    assert db.query_one("SELECT COUNT(*) FROM sessions")[0] == 300
    db.close()
    assert [p.name for p in db_path.parent.iterdir() if "damaged" in p.name] == []


def test_the_write_ahead_log_goes_with_the_file_it_belongs_to(db_path: Path) -> None:
    _filled(db_path)
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('in-the-log', 1, 1)")
    log = db_path.with_name("opencode.db-wal").read_bytes()
    assert log
    _text_file(db_path)  # overwritten while its log still holds a commit
    db = Database(db_path)
    try:
        assert db.notice is not None
        kept = db_path.with_name(db.notice.split("kept it as ")[1].split(" ")[0])
        assert kept.with_name(kept.name + "-wal").read_bytes()[:32] == log[:32]
        assert db.query_one("SELECT COUNT(*) FROM sessions")[0] == 0  # nothing replayed from the old log
    finally:
        db.close()
        writer.close()


def test_two_files_set_aside_in_the_same_second_keep_both(db_path: Path) -> None:
    for _ in range(2):
        _text_file(db_path)
        Database(db_path).close()
    assert len([p for p in db_path.parent.iterdir() if p.name.startswith("opencode.db.damaged-")]) == 2


def test_a_locked_database_is_not_mistaken_for_a_damaged_one(db_path: Path) -> None:
    _filled(db_path)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="database is locked"):
            Database(db_path, busy_timeout_ms=50)
        assert [p.name for p in db_path.parent.iterdir() if "damaged" in p.name] == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize(
    ("damage", "command"),
    [
        ("zeroed page", ["tool", "view", '{"filePath": "a.txt"}']),
        ("truncated", ["tool", "view", '{"filePath": "a.txt"}']),
        ("text file", ["tool", "view", '{"filePath": "a.txt"}']),
        ("text file", ["-p", "hello", "--model", "scripted/demo", "--quiet", "--yes"]),
    ],
    ids=["zeroed page", "truncated", "text file", "text file, -p"],
)
def test_the_command_says_so_in_one_line_then_works(tmp_path: Path, damage: str, command: list[str]) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    DAMAGES[damage][0](workspace / ".opencode" / "opencode.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env["HOME"] = str(tmp_path / "home")
    env.pop("XDG_CONFIG_HOME", None)
    env["OPENCODE_LSP__PYTHON__DISABLED"] = "true"  # stderr holds only what opencode says, not a language server's exit
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), *command],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith(f"opencode: {workspace / '.opencode' / 'opencode.db'} is damaged (")
    assert "kept it as opencode.db.damaged-" in line and line.endswith("started a fresh database")


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (os.mkfifo, "is a FIFO, not a file"),
        (lambda path: path.symlink_to("/dev/zero"), "is a character device, not a file"),
        (lambda path: path.mkdir(), "is a directory, not a file"),
        (lambda path: path.symlink_to(path), "Too many levels of symbolic links"),
    ],
    ids=["fifo", "device", "directory", "symlink-loop"],
)
def test_what_is_no_file_is_refused_by_its_type_and_left_alone(db_path: Path, make, problem: str) -> None:
    db_path.parent.mkdir(parents=True)
    make(db_path)
    with pytest.raises(StoreError, match=problem) as refused:
        Database(db_path)
    assert "\n" not in str(refused.value) and "data.directory elsewhere" in str(refused.value)
    assert [p.name for p in db_path.parent.iterdir()] == ["opencode.db"]
