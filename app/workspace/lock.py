"""One advisory lock per workspace, shared by every opencode process working on it.

The change path holds it from reading the files it will change until they are written
(and recovery while it rolls back an interrupted change), so two processes (a TUI and an
``opencode tool`` call, two ACP sessions) can never both pass the check that a file is
unchanged since it was read and then both write it: the second waits, then finds the
file changed. ``flock`` locks belong to an open file description, so each holder opens
the lock file itself: two holders in one process exclude each other as well. The kernel
drops the lock with the process, however it ends.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from app.core.errors import ToolError

T = TypeVar("T")


class WorkspaceLock:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        """The lock file (in the data folder); created on first use, never removed."""

    @cached_property
    def in_process(self) -> asyncio.Lock:
        return asyncio.Lock()

    def take(self) -> int:
        """Wait for the lock and hold it; returns the descriptor whose closing releases it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as err:
            raise ToolError(
                f"Cannot take the workspace lock {self.path}: {err.strerror or err}; "
                "nothing was changed: check that opencode's data folder is writable"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block, waiting for any other holder first. Blocking:
        for start-up and worker threads, never an event loop."""
        fd = self.take()
        try:
            yield
        finally:
            os.close(fd)  # closing the description releases the lock

    @asynccontextmanager
    async def holding(self) -> AsyncIterator[Holding]:
        """Hold the lock for an async block (see Holding)."""
        holding = Holding(self)
        await holding.acquire()
        try:
            yield holding
        finally:
            holding.release()


class Holding:
    """The lock held by one coroutine: taken in a worker thread (``flock`` blocks), one
    waiter per process at a time (an asyncio lock in front), so waiting processes never
    fill the thread pool the holder itself needs."""

    def __init__(self, lock: WorkspaceLock) -> None:
        self._lock = lock
        self._fd: int | None = None

    async def acquire(self) -> None:
        await self._lock.in_process.acquire()
        taking = asyncio.ensure_future(asyncio.to_thread(self._lock.take))
        try:
            self._fd = await asyncio.shield(taking)
        except BaseException:  # cancelled while waiting: the lock, once taken, is let go
            taking.add_done_callback(_close_taken)
            self._lock.in_process.release()
            raise

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._lock.in_process.release()

    async def released_while(self, awaitable: Awaitable[T]) -> T:
        """Let others have the lock while ``awaitable`` runs (a person being asked), and
        take it again before returning."""
        self.release()
        try:
            return await awaitable
        finally:
            await self.acquire()


def _close_taken(taking: asyncio.Future[int]) -> None:
    if not taking.cancelled() and taking.exception() is None:
        os.close(taking.result())

