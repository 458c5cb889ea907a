"""No path races: a folder on the path swapped for a symlink to the outside
between the check and the act cannot redirect a write, an edit, a patch, a delete or a
read outside, nor leave a temp file there.

A thread exchanges the workspace folder ``sub`` with a symlink to an outside folder of
the same shape (``renameat2(RENAME_EXCHANGE)``, atomic, every 0-2 ms) while each tool
runs, 25 times per tool. The tools may fail (the path changed under them): what must
hold is that nothing outside changed and no ``.opencode-tmp-*`` file was left there.
"""

from __future__ import annotations

import ctypes
import os
import random
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.errors import ToolError

TRIES = 25
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)

INSIDE = {"a.txt": "alpha\nbeta\n", "inner/b.txt": "inner\n", "inner/c.txt": "more\n"}
SECRET = "OUTSIDE-SECRET"
OUTSIDE = {"a.txt": f"{SECRET} a\nalpha\nbeta\n", "inner/b.txt": f"{SECRET} b\ninner\n", "inner/c.txt": "more\n"}


def exchange(first: Path, second: Path) -> None:
    """Swap two directory entries atomically."""
    if _libc.renameat2(_AT_FDCWD, bytes(first), _AT_FDCWD, bytes(second), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(first))


class Swapper:
    """Swaps ``sub`` and ``swap`` (a symlink to the outside) every 0-2 ms until stopped,
    then leaves ``sub`` the real folder again."""

    def __init__(self, sub: Path, swap: Path) -> None:
        self.sub, self.swap = sub, swap
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        rng = random.Random(14)
        exchange(self.sub, self.swap)  # at once: every call races at least one swap
        self.swaps += 1
        while not self._stop.wait(rng.uniform(0, 0.002)):
            exchange(self.sub, self.swap)
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive()
        if self.sub.is_symlink():
            exchange(self.sub, self.swap)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder``: a file's bytes, "dir" or "link -> target"."""
    found: dict[str, bytes | str] = {}
    for current, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(current, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes()
    return found


def fill(folder: Path, files: dict[str, str]) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


@pytest.fixture
def race(make_runtime, workspace: Path, tmp_path: Path):
    """(run, outside): ``run(tool, args)`` calls ``tool`` TRIES times under the swapper,
    each on a fresh ``sub`` folder the session has just viewed."""
    runtime = make_runtime(
        config={"lsp": {"python": {"disabled": True}}, "permission": {"rules": {"external_directory": "deny"}}}
    )
    outside = tmp_path / "outside"
    fill(outside, OUTSIDE)
    swap = workspace / "swap"
    swap.symlink_to(outside)
    sub = workspace / "sub"
    before = snapshot(tmp_path / "outside")
    session = runtime.store.sessions.create(title="race").id
    ctx = runtime.context(session)
    outputs: list[str] = []

    async def run(tool: str, args: dict | Callable[[int], dict]) -> int:
        swaps = 0
        for attempt in range(TRIES):
            fill(sub, INSIDE)
            for rel in INSIDE:
                await runtime.tools["view"].call({"filePath": f"sub/{rel}"}, ctx)
            with Swapper(sub, swap) as swapper:
                try:
                    result = await runtime.tools[tool].call(args(attempt) if callable(args) else args, ctx)
                    outputs.append(result.output)
                except ToolError as err:  # the path changed under the call: refusing is right
                    outputs.append(str(err))
            swaps += swapper.swaps
            assert snapshot(outside) == before, f"{tool} changed the outside folder (try {attempt + 1})"
        assert not [o for o in outputs if SECRET in o], "outside content reached the model"
        return swaps

    return run


async def test_write_through_a_swapped_folder_stays_inside(race) -> None:
    assert await race("write", {"filePath": "sub/a.txt", "content": "written\n"})


async def test_write_of_a_new_file_through_a_swapped_folder_stays_inside(race) -> None:
    await race("write", lambda n: {"filePath": f"sub/inner/new{n}.txt", "content": "new\n"})


async def test_edit_through_a_swapped_folder_stays_inside(race) -> None:
    await race("edit", {"filePath": "sub/a.txt", "oldString": "alpha", "newString": "ALPHA"})


async def test_multiedit_through_a_swapped_folder_stays_inside(race) -> None:
    edits = [{"oldString": "alpha", "newString": "ALPHA"}, {"oldString": "beta", "newString": "BETA"}]
    await race("multiedit", {"filePath": "sub/a.txt", "edits": edits})


def _patch(body: str) -> dict:
    return {"patch": f"*** Begin Patch\n{body}\n*** End Patch"}


async def test_patch_add_through_a_swapped_folder_stays_inside(race) -> None:
    await race("patch", lambda n: _patch(f"*** Add File: sub/inner/added{n}.txt\n+added"))


async def test_patch_update_through_a_swapped_folder_stays_inside(race) -> None:
    await race("patch", _patch("*** Update File: sub/a.txt\n@@\n-alpha\n+ALPHA\n beta"))


async def test_patch_delete_through_a_swapped_folder_stays_inside(race, workspace: Path) -> None:
    # A big file patched first widens the window between the check and the removal.
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(50_000)))
    await race("patch", {**_patch("*** Update File: big.txt\n@@\n line 0\n+added\n*** Delete File: sub/inner/b.txt"), "allow_delete": True})


async def test_patch_move_through_a_swapped_folder_stays_inside(race) -> None:
    await race("patch", _patch("*** Update File: sub/a.txt\n*** Move to: sub/inner/moved.txt\n@@\n-alpha\n+ALPHA"))


async def test_delete_file_through_a_swapped_folder_stays_inside(race) -> None:
    await race("delete", {"path": "sub/inner/b.txt"})


async def test_delete_folder_through_a_swapped_folder_stays_inside(race) -> None:
    await race("delete", {"path": "sub/inner"})


async def test_view_through_a_swapped_folder_never_reads_outside(race) -> None:
    await race("view", {"filePath": "sub/a.txt"})


async def test_an_allowed_outside_read_through_a_swapped_folder_reads_only_what_was_allowed(
    make_runtime, workspace: Path, tmp_path: Path
) -> None:
    """external_directory allows one outside folder and denies the rest: a folder of the
    allowed path swapped for a link to a denied one must not let view read there."""
    allowed, denied = tmp_path / "allowed", tmp_path / "denied"
    fill(allowed / "sub", INSIDE)
    fill(denied, OUTSIDE)
    (allowed / "swap").symlink_to(denied)
    rules = {"external_directory": {"*": "deny", f"{allowed.as_posix()}/*": "allow"}}
    runtime = make_runtime(config={"lsp": {"python": {"disabled": True}}, "permission": {"rules": rules}})
    ctx = runtime.context(runtime.store.sessions.create(title="race").id)
    outputs = []
    for _ in range(TRIES):
        with Swapper(allowed / "sub", allowed / "swap"):
            try:
                outputs.append((await runtime.tools["view"].call({"filePath": str(allowed / "sub/a.txt")}, ctx)).output)
            except ToolError as err:
                outputs.append(str(err))
    assert not [output for output in outputs if SECRET in output]
    # Unraced, the same call reads the allowed file: the rule allows it, so what the race
    # refused was the swap, not the folder.
    read = await runtime.tools["view"].call({"filePath": str(allowed / "sub/a.txt")}, ctx)
    assert "alpha" in read.output
