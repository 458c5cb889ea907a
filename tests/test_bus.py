"""The bus delivers in order, fans out, ends subscriptions on demand, and under
back-pressure drops only droppable deltas."""

import asyncio
import threading
from dataclasses import FrozenInstanceError, asdict, dataclass, fields, replace

import pytest

from app.bus import Bus, Event


@dataclass(frozen=True, slots=True)
class Delta(Event):
    n: int
    droppable = True


@dataclass(frozen=True, slots=True)
class Finished(Event):
    n: int


@dataclass(frozen=True, slots=True)
class Other(Event):
    pass


async def test_events_arrive_in_publish_order():
    bus = Bus()
    sub = bus.subscribe()
    events = [Delta(1), Finished(2), Delta(3), Finished(4)]
    for event in events:
        bus.publish(event)
    assert sub.drain() == events


async def test_fan_out_to_every_matching_subscriber():
    bus = Bus()
    all_events = bus.subscribe()
    only_finished = bus.subscribe(Finished)
    bus.publish(Delta(1))
    bus.publish(Finished(2))
    bus.publish(Other())
    assert all_events.drain() == [Delta(1), Finished(2), Other()]
    assert only_finished.drain() == [Finished(2)]


async def test_closed_subscription_receives_nothing_and_ends_iteration():
    bus = Bus()
    sub = bus.subscribe()
    received: list[Event] = []

    async def consume():
        async for event in sub:
            received.append(event)

    task = asyncio.create_task(consume())
    bus.publish(Finished(1))
    await asyncio.sleep(0)
    sub.close()
    await asyncio.wait_for(task, 1)
    bus.publish(Finished(2))
    assert received == [Finished(1)]
    assert bus.subscriber_count == 0


async def test_async_with_unsubscribes_on_exit():
    bus = Bus()
    async with bus.subscribe() as sub:
        bus.publish(Finished(1))
        assert await sub.get() == Finished(1)
    assert bus.subscriber_count == 0


async def test_slow_subscriber_loses_deltas_never_terminal_events():
    bus = Bus()
    slow = bus.subscribe(maxsize=10)
    for i in range(100):
        bus.publish(Delta(i))
        if i % 10 == 0:
            bus.publish(Finished(i))
    received = slow.drain()
    finished = [e.n for e in received if isinstance(e, Finished)]
    deltas = [e.n for e in received if isinstance(e, Delta)]
    assert finished == list(range(0, 100, 10))
    assert deltas == list(range(10))
    assert slow.dropped == 90


async def test_reading_frees_room_for_new_deltas():
    bus = Bus()
    sub = bus.subscribe(maxsize=2)
    bus.publish(Delta(1))
    bus.publish(Delta(2))
    bus.publish(Delta(3))
    assert sub.drain() == [Delta(1), Delta(2)]
    bus.publish(Delta(4))
    assert sub.drain() == [Delta(4)]


async def test_publish_from_a_worker_thread_reaches_the_loop():
    bus = Bus()
    sub = bus.subscribe()
    thread = threading.Thread(target=lambda: [bus.publish(Finished(i)) for i in range(5)])
    thread.start()
    thread.join()
    got = [await asyncio.wait_for(sub.get(), 1) for _ in range(5)]
    assert got == [Finished(i) for i in range(5)]


async def test_a_subscriber_whose_loop_has_closed_is_dropped_and_the_others_still_receive():
    """A front-end's loop can end before it closes its subscription: publishing (from any
    thread, e.g. history's after-commit step) must neither raise nor starve the others."""
    bus = Bus()
    sub = bus.subscribe()

    async def subscribe_and_leave() -> None:
        bus.subscribe()

    thread = threading.Thread(target=asyncio.run, args=(subscribe_and_leave(),))
    thread.start()
    thread.join()
    assert bus.subscriber_count == 2
    bus.publish(Finished(1))
    assert bus.subscriber_count == 1
    assert await asyncio.wait_for(sub.get(), 1) == Finished(1)


def test_events_are_frozen_dataclasses_that_the_dataclasses_module_understands():
    from app.llm.events import TextDelta

    event = TextDelta("s1", "m1", "Hel")

    assert [f.name for f in fields(event)] == ["session_id", "message_id", "text"]  # droppable is a ClassVar
    assert asdict(event) == {"session_id": "s1", "message_id": "m1", "text": "Hel"}
    assert replace(event, text="Hello") == TextDelta(session_id="s1", message_id="m1", text="Hello")
    assert hash(event) == hash(TextDelta("s1", "m1", "Hel")) and event.droppable
    with pytest.raises(FrozenInstanceError):
        event.text = "changed"  # type: ignore[misc]
