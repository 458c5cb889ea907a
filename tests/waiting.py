"""Waiting on a condition from plain (not asyncio) test code: another process or thread
gets there in its own time, so the test polls, bounded by a timeout generous enough for a
busy machine that only a failing test reaches."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], timeout: float, what: str = "the condition") -> None:
    """Return once ``condition()`` is true; fail saying ``what`` was awaited after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.02)
