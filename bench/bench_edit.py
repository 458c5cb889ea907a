"""Edit cascade speed on a 10,000-line file: an exact (simple) match, a match only
block_anchor can find (target <= 50 ms), and a miss that runs all nine replacers.

Run from the repository root: .venv/bin/python bench/bench_edit.py
"""

from __future__ import annotations

import sys
from pathlib import Path

# The project is not always installed into the venv: make `app` importable from a checkout.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import median_ms  # noqa: E402

from app.tools.text.replace import EditMatchError, replace  # noqa: E402

LINES = 10_000
RUNS = 15


def build_file() -> tuple[str, str, str]:
    """(content, exact block, the same block with one middle line altered)."""
    filler = [f"    value_{n} = compute({n}, {n * 7 % 13})  # step {n % 97}" for n in range(LINES - 6)]
    block = "\n".join(
        [
            "def target_function(alpha, beta):",
            "    total = alpha + beta",
            "    scaled = total * SCALE_FACTOR",
            "    logger.debug('scaled %s', scaled)",
            "    return scaled",
        ]
    )
    middle = len(filler) // 2
    content = "\n".join([*filler[:middle], block, *filler[middle:]]) + "\n"
    altered = block.replace("total * SCALE_FACTOR", "total * SCALE_FACTOR2")
    return content, block, altered


def miss(content: str) -> None:
    try:
        replace(content, "def nowhere():\n    pass\n    return None", "x")
    except EditMatchError:
        return
    raise AssertionError("the miss matched something")


def main() -> None:
    content, block, altered = build_file()
    assert replace(content, block, "pass").strategy == "simple"
    assert replace(content, altered, "pass").strategy == "block_anchor"
    simple_ms = median_ms(lambda: replace(content, block, "pass"), RUNS)
    anchor_ms = median_ms(lambda: replace(content, altered, "pass"), RUNS)
    miss_ms = median_ms(lambda: miss(content), RUNS)
    print(f"edit simple match, {LINES} lines: {simple_ms:.2f} ms")
    print(f"edit block_anchor match, {LINES} lines: {anchor_ms:.2f} ms (target <= 50 ms)")
    print(f"edit no match (all 9 replacers), {LINES} lines: {miss_ms:.2f} ms")


if __name__ == "__main__":
    main()
