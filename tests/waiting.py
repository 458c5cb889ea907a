"""The suite's one way to wait on a condition: another process, thread or task gets there
in its own time, so the test polls, bounded by a deadline generous enough for a busy
machine that only a failing test reaches. ``wait_until`` serves plain code, ``eventually``
asyncio code (with ``pause`` it yields to something else than the loop, such as a Pilot)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

POLL_SECONDS = 0.02
DEFAULT_TIMEOUT = 60.0


class Deadline:
    """``timeout`` seconds from now; ``check`` fails naming ``what`` once they have passed."""

    def __init__(self, timeout: float, what: str) -> None:
        self.timeout = timeout
        self.what = what
        self.at = time.monotonic() + timeout

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise AssertionError(f"{self.what} not reached within {self.timeout} s")


def wait_until(condition: Callable[[], object], timeout: float = DEFAULT_TIMEOUT, what: str = "the condition") -> None:
    """Return once ``condition()`` is true; fail saying ``what`` was awaited after ``timeout`` seconds."""
    deadline = Deadline(timeout, what)
    while not condition():
        deadline.check()
        time.sleep(POLL_SECONDS)


async def eventually(
    condition: Callable[[], object],
    timeout: float = DEFAULT_TIMEOUT,
    what: str = "the condition",
    pause: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """``wait_until`` for asyncio code: between checks the loop (or ``pause()``) runs.
    ``condition`` may be a coroutine function (a check that talks to a server)."""
    deadline = Deadline(timeout, what)
    while not await _holds(condition):
        deadline.check()
        await (pause() if pause is not None else asyncio.sleep(POLL_SECONDS))


async def _holds(condition: Callable[[], object]) -> object:
    result = condition()
    return await result if inspect.isawaitable(result) else result
