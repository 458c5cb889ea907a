"""Work that runs to its end even when the task awaiting it is cancelled.

Two kinds of work need it. A worker thread cannot be stopped, and its caller's cleanup
(releasing a lock) must not run while the thread still writes. Starting a subprocess
must not be cut short either: asyncio, cancelled before a new process's pipes are
connected, kills the process alone and then waits until its output closes, which a
child of that process (a shell's command) may hold open for ever. Sheltered, the start
completes and the caller stops what it started, the whole process group included."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def sheltered(work: Awaitable[T], undo: Callable[[T], Awaitable[object]] | None = None) -> T:
    """``await work``; a cancellation meanwhile waits for ``work`` to end, hands what it
    produced to ``undo`` (a process started: kill it), then goes on. A second
    cancellation while waiting changes nothing: the work still ends first."""
    running = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        while not running.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([running])
        if undo is not None and not running.cancelled() and running.exception() is None:
            await undo(running.result())
        raise
