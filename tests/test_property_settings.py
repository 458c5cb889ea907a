"""The suite's hypothesis profile (tests/conftest.py): a property test passes or fails on
what the code does, however slowly a busy machine makes its examples. Hypothesis times
examples and draws with its own clock, so the profile is checked for the two limits that
clock would enforce: the per-example deadline and the too-slow health check."""

from hypothesis import HealthCheck, settings


def test_slow_input_generation_fails_no_health_check() -> None:
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_examples_are_judged_by_outcome_not_by_time() -> None:
    assert settings.default.deadline is None
    assert settings.default.max_examples == 100, "a module loaded a profile that changes other modules' tests"
