"""Ids: UUIDv7, carrying their creation millisecond, so text order is creation order."""

import uuid

from app.store.ids import new_id, now_ms


def test_ids_are_uuid7_with_the_creation_time_in_front() -> None:
    before = now_ms()
    made = [new_id() for _ in range(1000)]
    after = now_ms()
    parsed = [uuid.UUID(i) for i in made]
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in parsed)
    assert all(before <= u.int >> 80 <= after for u in parsed)
    assert len(set(made)) == len(made)


def test_ids_from_later_milliseconds_sort_after() -> None:
    now = now_ms()
    first = new_id(now)
    later = new_id(now + 1)
    assert later > first
    assert [uuid.UUID(i).int >> 80 for i in (first, later)] == [now, now + 1]
