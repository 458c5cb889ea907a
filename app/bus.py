"""Typed publish/subscribe over asyncio: every core service publishes, front-ends listen.

Delivery rules (ARCHITECTURE.md): events are delivered in publish order to every
subscriber whose types match. A subscriber that falls behind may lose events marked
``droppable`` (streaming deltas), never the others (finished, failed, cancelled,
file version created...), which queue without bound.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every bus event. Subclasses that are intermediate deltas set ``droppable``."""

    droppable: ClassVar[bool] = False


class Subscription:
    """One subscriber's inbox. Iterate it with ``async for``; ``close()`` (or leaving the
    ``async with`` block) ends it and wakes a pending iteration."""

    def __init__(self, bus: Bus, types: tuple[type[Event], ...], maxsize: int) -> None:
        self._bus = bus
        self._types = types
        self._maxsize = maxsize
        self._items: deque[Event] = deque()
        self._droppable_count = 0
        self._wakeup = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self.dropped = 0
        self.closed = False

    def wants(self, event: Event) -> bool:
        return not self._types or isinstance(event, self._types)

    def _deliver(self, event: Event) -> None:
        """Runs on the subscriber's loop thread."""
        if self.closed:
            return
        if event.droppable:
            if self._droppable_count >= self._maxsize:
                self.dropped += 1
                return
            self._droppable_count += 1
        self._items.append(event)
        self._wakeup.set()

    def _offer(self, event: Event) -> None:
        if threading.get_ident() == self._bus._thread_of(self._loop):
            self._deliver(event)
            return
        try:
            self._loop.call_soon_threadsafe(self._deliver, event)
        except RuntimeError:  # its loop is closed: nobody is left to read it, so it goes
            self.closed = True
            self._bus._remove(self)

    def get_nowait(self) -> Event | None:
        if not self._items:
            return None
        event = self._items.popleft()
        if event.droppable:
            self._droppable_count -= 1
        return event

    def drain(self) -> list[Event]:
        """Every event queued now, in order, taken without waiting."""
        events = []
        while (event := self.get_nowait()) is not None:
            events.append(event)
        return events

    async def get(self) -> Event | None:
        """The next event, or None once the subscription is closed."""
        while not self._items:
            if self.closed:
                return None
            self._wakeup.clear()
            await self._wakeup.wait()
        return self.get_nowait()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while (event := await self.get()) is not None:
            yield event

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._bus._remove(self)
            self._wakeup.set()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class Bus:
    """Fan-out of events to subscriptions. ``publish`` never blocks and is thread-safe,
    so blocking work running in a worker thread can publish too."""

    def __init__(self, max_pending_deltas: int = 1000) -> None:
        self._subscriptions: list[Subscription] = []
        self._lock = threading.Lock()
        self._max_pending = max_pending_deltas
        self._loop_threads: dict[int, int] = {}

    def subscribe(self, *types: type[Event], maxsize: int | None = None) -> Subscription:
        """Subscribe to the given event types (all events when none are given).
        Must be called from inside a running event loop."""
        sub = Subscription(self, types, maxsize or self._max_pending)
        with self._lock:
            self._loop_threads[id(sub._loop)] = threading.get_ident()
            self._subscriptions.append(sub)
        return sub

    def publish(self, event: Event) -> None:
        with self._lock:
            targets = [s for s in self._subscriptions if s.wants(event)]
        for sub in targets:
            sub._offer(event)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscriptions)

    def _thread_of(self, loop: asyncio.AbstractEventLoop) -> int | None:
        return self._loop_threads.get(id(loop))

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subscriptions:
                self._subscriptions.remove(sub)
