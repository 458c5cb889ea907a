"""When Python's cyclic garbage collector runs, in one place, on documented calls only.

- Start-up (imports, widgets, services) makes many objects that live as long as the
  process and next to no garbage: the collector is paused meanwhile, and what start-up
  made is frozen (``gc.freeze``) when it ends, so later full passes skip it.
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
- Freezing is for what lives as long as the process; a front-end also holds objects that
  do not (the chat's window of a session, released as the user scrolls away), which a
  freeze would keep forever, as frozen objects are never collected. So the TUI freezes
  start-up's imports before the first transcript is drawn, and start-up's later objects
  (the runtime, made beside a drawn transcript) are frozen at the first moment the chat
  holds no window (``nothing_short_lived``: a session switch, a jump), not at its end.
  litellm's objects are too many to leave to every full pass meanwhile: they are frozen
  at once, with the window alive then, which that same moment unfreezes and collects.
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

_holders = 0
_thresholds: tuple[int, int, int] = gc.get_threshold()
_freeze_waits = False
"""Objects that live as long as the process were left unfrozen beside short-lived ones."""
_short_lived_frozen = False
"""A freeze caught short-lived objects too: they are not collected until unfrozen."""


def pause() -> None:
    """No collection until ``resume``: start-up has begun."""
    gc.disable()


def resume(*, short_lived_alive: bool = False) -> None:
    """Start-up is over: freeze what it made, then collect as usual. ``short_lived_alive``:
    objects that do not live as long as the process live beside it (a drawn transcript):
    the freeze waits for ``nothing_short_lived``."""
    global _freeze_waits
    if short_lived_alive:
        _freeze_waits = True
    else:
        gc.freeze()
    gc.enable()


def resume_if_paused() -> None:
    """``resume``, when start-up paused the collector; a caller that did not pause it (a
    test calling the code in its own process) keeps its collector as it was."""
    if not gc.isenabled():
        resume()


def freeze(*, short_lived_alive: bool = False) -> None:
    """Everything alive now lives as long as the process: later full passes skip it.
    ``short_lived_alive``: some does not (a drawn transcript), and is frozen too until
    ``nothing_short_lived``."""
    global _short_lived_frozen
    gc.freeze()
    _short_lived_frozen = _short_lived_frozen or short_lived_alive


def nothing_short_lived() -> None:
    """The front-end holds no short-lived objects now (the chat between two windows): a
    freeze that waited for this moment is done, and one that caught short-lived objects
    is done again without them, freeing those released meanwhile (a full pass over all
    that was frozen, once). Nothing while collection is paused or full passes are held."""
    global _freeze_waits, _short_lived_frozen
    if not (_freeze_waits or _short_lived_frozen) or not gc.isenabled() or _holders:
        return
    if _short_lived_frozen:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    _freeze_waits = _short_lived_frozen = False


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
    until every holder has left (the collector is process-wide, hence a count)."""
    global _holders, _thresholds
    if _holders == 0:
        _thresholds = gc.get_threshold()
        gc.set_threshold(_thresholds[0], _thresholds[1], NEVER)
    _holders += 1
    try:
        yield
    finally:
        _holders -= 1
        if _holders == 0:
            gc.set_threshold(*_thresholds)
