"""Full garbage collections wait while a reply streams.

A full (oldest-generation) pass of Python's cyclic collector scans every object the app
holds: with a long session, Textual and litellm loaded, that is a pause of 100 to 400 ms,
and drawing a fast reply allocates enough to set one off every second or two, each
freezing the screen and the keyboard. While any reply streams, only the young
generations are collected (cheap, and where most garbage dies); the full pass waits for
the end of the stream. The collector is process-wide, hence a count of streams here.
"""

from __future__ import annotations

import gc

NEVER = 1 << 30
"""A full-pass threshold no count of young passes reaches."""

_holders = 0
_saved: tuple[int, int, int] = gc.get_threshold()


def hold() -> None:
    """A stream starts: no full pass until every stream has released."""
    global _holders, _saved
    if _holders == 0:
        _saved = gc.get_threshold()
        gc.set_threshold(_saved[0], _saved[1], NEVER)
    _holders += 1


def release() -> None:
    """A stream is over: the last one out gives the collector its thresholds back."""
    global _holders
    _holders -= 1
    if _holders == 0:
        gc.set_threshold(*_saved)
