"""Permission questions shown one at a time: the rest wait in arrival order.

The queue listens to the bus (``run``), pushes a PermissionScreen for the oldest question,
replies to the permission service with the user's answer, then shows the next. A question
answered elsewhere (the turn was cancelled, or "allow for this session" answered its twins)
leaves the queue, and its modal closes if it was showing. ``on_asking`` hears whether a
question is on screen, so the status bar can say that the turn waits for the user.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial

from textual.app import App

from app.bus import Bus
from app.permission import PermissionReply, PermissionRequested, PermissionResolved, PermissionService
from app.tui.screens.permission_screen import PermissionScreen


class PermissionQueue:
    """Built once by the app; run ``queue.run(bus)`` in a worker for the app's life."""

    def __init__(
        self, app: App, permissions: PermissionService, on_asking: Callable[[bool], None] | None = None
    ) -> None:
        self._app = app
        self._permissions = permissions
        self._on_asking = on_asking
        self._waiting: deque[PermissionRequested] = deque()
        self._shown: tuple[str, PermissionScreen] | None = None

    @property
    def waiting(self) -> int:
        """Questions queued behind the one on screen."""
        return len(self._waiting)

    async def run(self, bus: Bus) -> None:
        """Subscribe, pick up questions asked before we listened, then follow the bus."""
        async with bus.subscribe(PermissionRequested, PermissionResolved) as events:
            for pending in self._permissions.pending():
                self.offer(pending)
            async for event in events:
                if isinstance(event, PermissionRequested):
                    self.offer(event)
                elif isinstance(event, PermissionResolved):
                    self.resolved(event.request_id)

    def offer(self, event: PermissionRequested) -> None:
        """Queue a question (once, however often it is offered) and show it when free."""
        queued = {waiting.request_id for waiting in self._waiting}
        if event.request_id in queued or (self._shown and self._shown[0] == event.request_id):
            return
        self._waiting.append(event)
        self._show_next()

    def resolved(self, request_id: str) -> None:
        """The question was answered, by us or elsewhere: forget it, close its modal."""
        self._waiting = deque(event for event in self._waiting if event.request_id != request_id)
        if self._shown and self._shown[0] == request_id:
            self._shown[1].withdraw()

    def _show_next(self) -> None:
        if self._shown is not None:
            return
        still_pending = {event.request_id for event in self._permissions.pending()}
        while self._waiting:
            event = self._waiting.popleft()
            if event.request_id in still_pending:
                screen = PermissionScreen(event.request)
                self._shown = (event.request_id, screen)
                self._app.push_screen(screen, callback=partial(self._answered, event.request_id))
                break
        if self._on_asking is not None:
            self._on_asking(self._shown is not None)

    def _answered(self, request_id: str, reply: PermissionReply | None) -> None:
        self._shown = None
        if reply is not None:
            self._permissions.reply(request_id, reply)
        self._show_next()
