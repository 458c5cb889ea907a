"""The fake OpenAI server answering by what a request is about rather than by arrival
order: sub-agents run concurrently, so which request comes first is not known.

A route is a marker and the replies for the requests whose first user message holds it,
served in order (the nth request of that conversation gets the nth reply); a reply may
be a function of the request's body, for a conversation whose course depends on what a
tool answered. ``meet`` holds the given request (the first, by default) of each named
route until all of them have arrived: a test that passes with it proves those requests
were open at the same time, without timing.

    server = RoutedOpenAI().start()
    server.route("PARENT", Reply(...), Reply(...))
    server.route("CHILD-A", Reply(...))
    server.meet("CHILD-A", "CHILD-B")            # their first requests overlap
    server.meet("CHILD-A", "CHILD-B", request=1)  # so do their second ones
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.llm.fake_openai import ErrorReply, FakeOpenAI, Reply, error_body
from tests.llm.fake_server import FakeHandler, Received

Scripted = Reply | ErrorReply | Callable[[dict[str, Any]], Reply]

MEETING_TIMEOUT = 120.0
"""How long a held request waits for the others before the meeting fails (a bound, not a pace)."""


class RoutedOpenAI(FakeOpenAI):
    def __init__(self) -> None:
        super().__init__()
        self._routes: dict[str, list[Scripted]] = {}
        self._served: dict[str, int] = {}
        self._meetings: dict[tuple[str, int], threading.Barrier] = {}
        self._current = threading.local()

    def route(self, marker: str, *replies: Scripted) -> None:
        with self._lock:
            self._routes.setdefault(marker, []).extend(replies)

    def meet(self, *markers: str, request: int = 0) -> None:
        barrier = threading.Barrier(len(markers), timeout=MEETING_TIMEOUT)
        for marker in markers:
            self._meetings[(marker, request)] = barrier

    def handle(self, handler: FakeHandler, request: Received) -> None:
        self._current.request = request
        super().handle(handler, request)

    def next_item(self) -> Reply | ErrorReply | None:
        request: Received = self._current.request
        marker = self._marker(request)
        if marker is None:
            return ErrorReply(500, error_body("fake server: no route for this request", "server_error"))
        with self._lock:
            number = self._served.get(marker, 0)
            self._served[marker] = number + 1
            replies = self._routes[marker]
        meeting = self._meetings.get((marker, number))
        if meeting is not None:
            try:
                meeting.wait()
            except threading.BrokenBarrierError:
                return ErrorReply(500, error_body(f"fake server: {marker} met nobody", "server_error"))
        if number >= len(replies):
            return ErrorReply(500, error_body(f"fake server: no reply left for {marker}", "server_error"))
        reply = replies[number]
        return reply if isinstance(reply, Reply | ErrorReply) else reply(request.body)

    def _marker(self, request: Received) -> str | None:
        users = [m for m in request.body.get("messages", []) if m.get("role") == "user"]
        first = str(users[0].get("content")) if users else ""
        with self._lock:
            return next((marker for marker in self._routes if marker in first), None)
