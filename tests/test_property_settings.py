"""The suite's hypothesis profile (tests/conftest.py): a property test passes or fails on
what the code does, however slowly a busy machine makes its examples."""

import time

from hypothesis import given, settings
from hypothesis import strategies as st

SLOW_DRAW_SECONDS = 0.15
"""Each draw takes at least this long, whatever the machine: seven draws pass the 1 s that
hypothesis allows its first ten examples under the default deadline, as on a loaded machine."""


def _drawn_slowly(value: int) -> int:
    time.sleep(SLOW_DRAW_SECONDS)
    return value


@settings(max_examples=10)
@given(st.integers().map(_drawn_slowly))
def test_slow_input_generation_fails_no_health_check(value: int) -> None:
    assert isinstance(value, int)


def test_examples_are_judged_by_outcome_not_by_time() -> None:
    assert settings.default.deadline is None
    assert settings.default.max_examples == 100, "a module loaded a profile that changes other modules' tests"

