"""Timing shared by the bench scripts, which import it as their sibling (run them from
the repo root: .venv/bin/python bench/bench_NAME.py)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(call: Callable[[], object], runs: int) -> float:
    """The median wall-clock time of ``runs`` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
