"""Nothing lost on kill -9. A change is written ahead to the journal, and the
next start of any command rolls back what a crash interrupted.

First deterministically: the test seam (TEST_OPENCODE_CRASH_AT_FILE_OP=N) SIGKILLs
``opencode tool`` just before its Nth file operation, and N walks over every operation
of a small patch, a folder delete and an edit. Then real SIGKILLs at random moments on
large cases: a 200-file patch, a 2,000-file delete and a 20 MB edit. After each, the
next command's start must leave every file wholly old or wholly new as one change set,
history holding the old content of every file changed, and no temp file anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.runtime import Runtime
from app.workspace.beneath import CRASH_VARIABLE, TEMP_PREFIX
from tests.test_tool_command import REPO, opencode

Tree = dict[str, bytes]


LINK = b"symlink -> "


def tree(root: Path) -> Tree:
    """Every file and symlink below ``root`` (the data folder aside), by relative path: a
    file's bytes, a symlink as LINK + its target."""
    return {
        path.relative_to(root).as_posix(): LINK + os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        for path in sorted(root.rglob("*"))
        if (path.is_symlink() or path.is_file()) and ".opencode" not in path.relative_to(root).parts
    }


def entries(root: Path) -> dict[str, tuple[str, int, bytes | None]]:
    """Every file, symlink and folder below ``root`` (the data folder aside): its kind,
    permission bits and bytes. Stricter than ``tree``: folders a change made and modes count."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".opencode" in path.relative_to(root).parts:
            continue
        info = os.lstat(path)
        kind = "link" if stat.S_ISLNK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) else "file"
        data = path.read_bytes() if kind == "file" else os.readlink(path).encode() if kind == "link" else None
        found[path.relative_to(root).as_posix()] = (kind, stat.S_IMODE(info.st_mode), data)
    return found


def plant(root: Path, files: Tree) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if data.startswith(LINK):
            (root / rel).unlink(missing_ok=True)
            (root / rel).symlink_to(data.removeprefix(LINK).decode())
        else:
            (root / rel).write_bytes(data)


def temp_files(root: Path) -> list[str]:
    return [path.name for path in root.rglob(f"{TEMP_PREFIX}*")]


def history_before(root: Path) -> dict[str, bytes]:
    """Each path's "initial" version in history: the content before the session changed it
    (a symlink as LINK + its target, as ``tree`` shows it)."""
    with sqlite3.connect(root / ".opencode" / "opencode.db") as db:
        rows = db.execute("SELECT path, content, data, link FROM files WHERE seq = 0").fetchall()
    return {
        path: LINK + link.encode() if link is not None else data if data is not None else content.encode()
        for path, content, data, link in rows
    }


def next_start(root: Path) -> str:
    """Any command's start recovers: ``opencode changes``; returns what it printed on stderr."""
    return opencode(root, "changes", "--json").stderr


def started(root: Path) -> list[str]:
    """What every command does first, in this process: build the runtime (which recovers);
    returns the lines it has to show (what it rolled back)."""
    runtime = Runtime.build(root)
    runtime.close()
    return runtime.notices


def viewed_in_a_session(root: Path, rel: str) -> str:
    """A new session that has viewed ``rel``; its id."""
    runtime = Runtime.build(root)
    try:
        session = runtime.store.sessions.create(title="crash test").id
        asyncio.run(runtime.tools["view"].call({"filePath": rel, "limit": 1}, runtime.context(session)))
    finally:
        runtime.close()
    return session


def check_after_start(root: Path, old: Tree, new: Tree) -> str:
    """After the next start: the tree is all old or all new, history has the old content
    of every file that is new, and no temp file is left. Returns "old", "rolled back"
    (old, after a recovery) or "new"."""
    recovered = started(root)
    assert temp_files(root) == []
    now = tree(root)
    assert now in (old, new), "a change set left half applied"
    if now == old:
        return "rolled back" if recovered else "old"
    recorded = history_before(root)
    for rel in set(old) | set(new):
        if old.get(rel) != new.get(rel) and rel in old:
            assert recorded.get(rel) == old[rel], f"{rel} changed without its old content in history"
    return "new"


def tool_call(root: Path, name: str, arguments: dict, *options: str, crash_at: int | None = None):
    extra = {CRASH_VARIABLE: str(crash_at)} if crash_at else None
    return opencode(root, "tool", name, "-", "--yes", *options, stdin=json.dumps(arguments), variables=extra)


def walk_crashes(root: Path, old: Tree, call, executable: tuple[str, ...] = (), files: int | None = None) -> int:
    """Plant ``old`` (the ``executable`` paths with mode 755), then crash ``call`` before its
    1st, 2nd, ... file operation until it runs to the end; returns how many operations it
    has. Each crash is recovered by the next start, which says how many ``files`` the
    change set held and leaves every file, folder and mode as planted: no folder the
    change made remains."""
    plant(root, old)
    for rel in executable:
        (root / rel).chmod(0o755)
    before = entries(root)
    for n in range(1, 100):
        done = call(n)
        if done.returncode == 0:
            return n - 1
        assert done.returncode == -signal.SIGKILL, done.stderr
        # The first crash is recovered by a real command, the others by the same start in here.
        recovered = next_start(root) if n == 1 else "\n".join(started(root))
        assert "Rolled back an interrupted change" in recovered, recovered
        assert files is None or f"; {files} files)" in recovered, recovered
        assert entries(root) == before, f"not as before after a crash before file operation {n}"
        assert temp_files(root) == []
        assert started(root) == []  # recovered once, nothing left pending
    raise AssertionError("the call never ran to its end")


SMALL = {
    "src/app.py": b"def main():\n    return 1\n",
    "src/util.py": b"X = 1\n",
    "old/notes.txt": b"remove me\n",
}


def test_a_small_patch_crashed_at_every_file_operation_is_rolled_back(tmp_path: Path) -> None:
    """Update, Delete, Add File into new folders and an executable's Move to a new folder
    (the write tool makes its folders through the same change path)."""
    root = tmp_path / "ws"
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-    return 1\n+    return 2\n"
        "*** Add File: new/deep/added.py\n+added = True\n*** Delete File: old/notes.txt\n"
        "*** Update File: src/util.py\n*** Move to: lib/deep/util.py\n@@\n-X = 1\n+X = 2\n*** End Patch"
    )
    call = lambda n: tool_call(root, "patch", {"patch": patch, "allow_delete": True}, crash_at=n)  # noqa: E731
    operations = walk_crashes(root, SMALL, call, executable=("src/util.py",), files=5)
    assert operations >= 8  # 4 folders, 3 temp files, 3 renames, 2 unlinks, the journal's commit
    new = tree(root)
    assert set(new) == {"src/app.py", "new/deep/added.py", "lib/deep/util.py"}
    assert stat.S_IMODE(os.stat(root / "lib" / "deep" / "util.py").st_mode) == 0o755
    assert history_before(root)["old/notes.txt"] == b"remove me\n"
    assert history_before(root)["src/util.py"] == b"X = 1\n"


def test_a_folder_delete_crashed_at_every_file_operation_is_rolled_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    old = {
        "pkg/a.txt": b"a\n",
        "pkg/sub/b.txt": b"b\n",
        "pkg/sub/c.bin": b"\0\1\2",
        "pkg/sub/link": LINK + b"../../keep.txt",
        "keep.txt": b"k\n",
    }
    operations = walk_crashes(root, old, lambda n: tool_call(root, "delete", {"path": "pkg"}, crash_at=n))
    assert operations == 7  # 4 unlinks (the symlink itself too), 2 rmdirs, the journal's commit
    assert tree(root) == {"keep.txt": b"k\n"}
    assert history_before(root) == {k: v for k, v in old.items() if k.startswith("pkg/")}


def _viewed_edit(root: Path, edit: dict, crash_at: int | None = None) -> subprocess.CompletedProcess[str]:
    session = viewed_in_a_session(root, edit["filePath"])
    return tool_call(root, "edit", edit, "--session", session, crash_at=crash_at)


def test_an_edit_crashed_at_every_file_operation_is_rolled_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    edit = {"filePath": "src/app.py", "oldString": "return 1", "newString": "return 2"}
    operations = walk_crashes(root, SMALL, lambda n: _viewed_edit(root, edit, crash_at=n))
    assert operations == 3  # the temp file, the rename, the journal's commit
    assert tree(root)["src/app.py"] == b"def main():\n    return 2\n"
    assert history_before(root)["src/app.py"] == SMALL["src/app.py"]


# -- real SIGKILLs at random moments on large cases -------------------------------------------

KILLS = 2


def killed_at_random(
    root: Path, old: Tree, make_args: Callable[[], list[str]], stdin: str, operations: int, rng: random.Random
) -> list[str]:
    """Run the call once to its end (the new tree, and how long it takes), then KILLS
    times from the old tree, each killed by a real SIGKILL at a random moment of that
    span past the start-up, then KILLS times by the seam at a random one of its
    ``operations`` file operations (certain to be mid-change). After each, the next
    start must give the old or the new tree. Returns what each one gave."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env["HOME"] = str(root.parent / "home")

    def start(crash_at: int | None = None) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "-C", str(root), *make_args()], cwd=REPO,
            env={**env, CRASH_VARIABLE: str(crash_at)} if crash_at else env,
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        process.stdin.write(stdin.encode())
        process.stdin.close()
        return process

    plant(root, old)
    began = time.monotonic()
    next_start(root)
    start_up = time.monotonic() - began  # what a command takes before its work
    began = time.monotonic()
    assert start().wait(timeout=120) == 0
    span = time.monotonic() - began
    new = tree(root)
    outcomes = []
    for attempt in range(2 * KILLS):
        for rel in set(new) - set(old):
            (root / rel).unlink()
        plant(root, old)
        if attempt < KILLS:
            process = start()
            try:
                process.wait(timeout=rng.uniform(min(start_up, span) * 0.8, span))
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
        else:
            process = start(crash_at=rng.randint(1, operations))
        assert process.wait(timeout=120) in (0, -signal.SIGKILL)
        outcomes.append(check_after_start(root, old, new))
    assert outcomes[KILLS:] == ["rolled back"] * KILLS
    return outcomes


@pytest.fixture
def big_root(tmp_path: Path) -> Iterator[Path]:
    """A workspace on tmpfs when there is one: planting and removing thousands of files
    on a journalling disk costs seconds per run, and the disk is not what is tested."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path / "ws"
        return
    base = Path(tempfile.mkdtemp(prefix="opencode-crash-", dir="/dev/shm"))
    try:
        yield base / "ws"
    finally:
        shutil.rmtree(base)


def test_a_200_file_patch_killed_at_random_moments_is_all_old_or_all_new(big_root: Path) -> None:
    root = big_root
    old = {f"src/m{n:03}.py": "".join(f"line {i}\n" for i in range(50)).encode() for n in range(200)}
    sections = "".join(f"*** Update File: src/m{n:03}.py\n@@\n-line 7\n+LINE 7\n" for n in range(200))
    stdin = json.dumps({"patch": f"*** Begin Patch\n{sections}*** End Patch"})
    # 200 temp files, 200 renames, the journal's commit
    killed_at_random(root, old, lambda: ["tool", "patch", "-", "--yes"], stdin, 401, random.Random(200))


def test_a_2000_file_delete_killed_at_random_moments_is_all_old_or_all_new(big_root: Path) -> None:
    root = big_root
    old = {f"big/d{n % 20}/f{n}.txt": f"file {n}\n".encode() for n in range(2000)}
    old["keep.txt"] = b"kept\n"
    old[".opencode.json"] = json.dumps({"tools": {"delete": {"maxFiles": 5000}}}).encode()
    stdin = json.dumps({"path": "big"})
    # 2,000 unlinks, 21 rmdirs, the journal's commit
    killed_at_random(root, old, lambda: ["tool", "delete", "-", "--yes"], stdin, 2022, random.Random(2000))


def test_a_20mb_edit_killed_at_random_moments_is_all_old_or_all_new(big_root: Path) -> None:
    root = big_root
    line = b"x" * 99 + b"\n"
    old = {"big.txt": b"FIRST\n" + line * (20 * 10_000)}
    stdin = json.dumps({"filePath": "big.txt", "oldString": "FIRST", "newString": "SECOND"})

    def viewed_edit() -> list[str]:
        """The file is planted anew before each run: the session views it first."""
        return ["tool", "edit", "-", "--yes", "--session", viewed_in_a_session(root, "big.txt")]

    killed_at_random(root, old, viewed_edit, stdin, 3, random.Random(20))  # temp file, rename, commit
