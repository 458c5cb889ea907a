"""The collector policy: full passes wait while anyone holds them, pauses restore the
collector's state, and start-up's objects are frozen when it ends."""

from __future__ import annotations

import gc
import weakref

from app.core import gc_policy


def test_full_passes_wait_while_any_holder_remains():
    before = gc.get_threshold()
    with gc_policy.full_passes_held():
        with gc_policy.full_passes_held():  # two holders at once
            assert gc.get_threshold() == (before[0], before[1], gc_policy.NEVER)
        assert gc.get_threshold()[2] == gc_policy.NEVER
    assert gc.get_threshold() == before


def test_start_up_ending_while_full_passes_are_held_keeps_its_young_threshold():
    """litellm's import may hold full passes across the end of start-up: the hold gives
    back the full-pass threshold only."""
    before = gc.get_threshold()
    gc_policy.pause()
    try:
        with gc_policy.full_passes_held():
            gc_policy.resume()
            assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD, before[1], gc_policy.NEVER)
        assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD, *before[1:])
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*before)


def test_a_pause_restores_the_collector_as_it_found_it():
    assert gc.isenabled()
    with gc_policy.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_policy.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_resuming_after_start_up_freezes_what_it_made_and_spaces_young_passes():
    thresholds = gc.get_threshold()
    gc_policy.pause()
    try:
        assert not gc.isenabled()
        made = [object() for _ in range(3)]
        gc_policy.resume()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        assert not any(obj is made for obj in gc.get_objects())
        assert gc.get_threshold() == (gc_policy.YOUNG_THRESHOLD, *thresholds[1:])
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class Cycle:
    """An object in a reference cycle: only a full pass of the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_collect_frees_cycles_unless_collection_is_paused_or_full_passes_are_held():
    def cycle_left_behind():
        """Garbage in the oldest generation, which only a full pass looks at."""
        cycle = Cycle()
        gc.collect()  # it survives this pass, into the oldest generation
        found = weakref.ref(cycle)
        del cycle
        return found

    with gc_policy.paused():
        left = cycle_left_behind()
        gc_policy.collect()
        assert left() is not None, "a paused collector stays paused"
    with gc_policy.full_passes_held():
        left = cycle_left_behind()
        gc_policy.collect()
        assert left() is not None, "no full pass while one is held"
    gc_policy.collect()
    assert left() is None
