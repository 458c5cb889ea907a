"""A task cancelled while it starts a process (a bash call, a hook) ends, and leaves
nothing running: the start completes, then the whole process group is killed.

The shell's command runs in a child of the shell (``sleep ...; true``), which holds the
output open: asyncio alone, cancelled before the pipes are connected, kills the shell and
then waits for that output to close, for ever. The cancellation is tried at each of the
first scheduler steps, where the start is under way."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable
from pathlib import Path

import pytest

from app.core.shelter import sheltered
from app.hooks.config import Hook
from app.hooks.runner import run_hook
from app.tools.bash import run_shell
from tests.waiting import eventually

STEPS = range(8)
"""How many scheduler steps the starting task runs before it is cancelled."""


def held_output_command() -> tuple[str, str]:
    """A shell command whose child holds the output for long, and the child's mark (its argument)."""
    mark = f"4000.{secrets.randbelow(10**6):06d}"
    return f"sleep {mark}; true", mark


def running_with(mark: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if mark.encode() in cmdline.read_bytes():
                return True
        except OSError:  # gone meanwhile
            continue
    return False


async def cancel_after(steps: int, starting: Awaitable[object]) -> BaseException | None:
    """Cancel ``starting`` after ``steps`` scheduler steps; what it ended with. The wait is
    bounded so that a start that never ends fails the test instead of hanging it."""
    task = asyncio.ensure_future(starting)
    for _ in range(steps):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=60)
    assert done, "the cancelled task never ended"
    return None if task.cancelled() else task.exception()


@pytest.mark.parametrize("steps", STEPS)
async def test_a_bash_call_cancelled_while_its_shell_starts_ends_and_kills_it(steps: int, tmp_path: Path):
    command, mark = held_output_command()
    outcome = await cancel_after(steps, run_shell(["bash", "-c", command], tmp_path, 600))
    assert outcome is None  # cancelled, not an error
    await eventually(lambda: not running_with(mark), what=f"the command's child ({mark}) killed")


@pytest.mark.parametrize("steps", STEPS)
async def test_a_hook_cancelled_while_it_starts_ends_and_kills_it(steps: int, tmp_path: Path):
    command, mark = held_output_command()
    hook = Hook("PreToolUse", "*", command, 600, "settings.json", project=False)
    outcome = await cancel_after(steps, run_hook(hook, b"{}", tmp_path, {"PATH": "/usr/bin:/bin"}))
    assert outcome is None
    await eventually(lambda: not running_with(mark), what=f"the hook's child ({mark}) killed")


async def test_sheltered_work_ends_before_the_cancellation_goes_on():
    finished: list[str] = []
    release = asyncio.Event()

    async def work() -> str:
        await release.wait()
        finished.append("work")
        return "made"

    undone: list[str] = []

    async def undo(made: str) -> None:
        undone.append(made)

    task = asyncio.ensure_future(sheltered(work(), undo))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0)
    task.cancel()  # a second cancellation still waits for the work
    await asyncio.sleep(0)
    assert not task.done()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == ["work"] and undone == ["made"]
