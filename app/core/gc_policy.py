"""When Python's cyclic garbage collector runs, in one place, on documented calls only.

- Start-up (imports, widgets, services) makes many objects that live as long as the
  process and next to no garbage: the collector is paused meanwhile, and what start-up
  made is frozen (``gc.freeze``) when it ends, so later full passes skip it.
- After start-up, young passes come every ``YOUNG_THRESHOLD`` allocations rather than
  CPython's 700: a frame of the TUI makes thousands of objects (the lines it draws and
  their caches), most of them garbage by the next frame. At 700, several young passes
  run within one frame and move what it still holds to the older generations, where it
  dies and only a full pass frees it: a streamed reply then brings a full pass every
  second or so, each a stalled frame that scans everything the chat holds. At
  ``YOUNG_THRESHOLD`` most of it is freed young, and full passes come a few times less often.
- litellm's import makes a few hundred thousand such objects in a background thread: no
  full pass runs while it imports (each would scan them all and stall the screen), and
  they are frozen once it is done.
- An in-process `opencode -p` is start-up until litellm is imported (its turn waits for
  that import meanwhile): the collector is paused until then, and what start-up made is
  frozen when it is done (``resume_if_paused``).
- A front-end that lets go of many long-lived objects at once (the chat releasing the
  widgets of messages far off screen, which live in reference cycles) has them collected
  then (``collect``): left to the full pass, which comes rarely, they pile up, and the
  process's memory stays at that peak after they are freed.
- A one-shot command (`opencode tool`, `changes`, `permission`, `schema`) runs with the
  collector paused from start to end: its imports, its services and a big patch's line
  lists all live until the process ends; its few cycles end with the process.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

NEVER = 1 << 30
"""A full-pass threshold no count of young passes reaches."""
YOUNG_THRESHOLD = 5000
"""Allocations (less deallocations) between two passes of the youngest generation once
start-up is over; CPython's default is 700 (see above)."""

_holders = 0
_full_threshold: int = gc.get_threshold()[2]
"""The full-pass threshold to restore once no one holds full passes."""


def pause() -> None:
    """No collection until ``resume``: start-up has begun."""
    gc.disable()


def resume() -> None:
    """Start-up is over: freeze what it made, then collect, young passes every
    ``YOUNG_THRESHOLD`` allocations."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.enable()


def resume_if_paused() -> None:
    """``resume``, when start-up paused the collector; a caller that did not pause it (a
    test calling the code in its own process) keeps its collector as it was."""
    if not gc.isenabled():
        resume()


def freeze() -> None:
    """Everything alive now lives as long as the process: later full passes skip it."""
    gc.freeze()


def collect() -> None:
    """Collect every generation now, unless collection is paused or full passes are held
    (a start-up or litellm's import is under way: a full pass would scan all it made)."""
    if gc.isenabled() and _holders == 0:
        gc.collect()


@contextmanager
def paused() -> Iterator[None]:
    """No collection inside the block (the collector's state before it is restored after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def full_passes_held() -> Iterator[None]:
    """Only the young generations are collected inside the block; the full pass waits
    until every holder has left (the collector is process-wide, hence a count). Only the
    full-pass threshold is held and restored: the young ones may change meanwhile
    (``resume``)."""
    global _holders, _full_threshold
    if _holders == 0:
        young, older, _full_threshold = gc.get_threshold()
        gc.set_threshold(young, older, NEVER)
    _holders += 1
    try:
        yield
    finally:
        _holders -= 1
        if _holders == 0:
            gc.set_threshold(*gc.get_threshold()[:2], _full_threshold)
