"""Edit cascade speed on a 10,000-line file, called as the edit tools call it (the
change fitted to the text found, `adapt=True`): an exact (simple) match, a match only
block_anchor can find (target <= 50 ms), a block sent one level too deep (line_trimmed,
re-indented), and a miss that runs all nine replacers and their second chances.

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


def edit(content: str, old: str, new: str) -> str:
    """The edit as the tools make it; returns the strategy."""
    return replace(content, old, new, adapt=True).strategy


def miss(content: str) -> None:
    try:
        edit(content, "def nowhere():\n    pass\n    return None", "x")
    except EditMatchError:
        return
    raise AssertionError("the miss matched something")


def main() -> None:
    content, block, altered = build_file()
    deeper = "\n".join("    " + line for line in block.split("\n"))
    reindented = deeper.replace("    return scaled", "    if scaled:\n            return scaled\n        return 0")
    assert edit(content, block, "pass") == "simple"
    assert edit(content, altered, "pass") == "block_anchor"
    assert edit(content, deeper, reindented) == "line_trimmed"
    simple_ms = median_ms(lambda: edit(content, block, "pass"), RUNS)
    anchor_ms = median_ms(lambda: edit(content, altered, "pass"), RUNS)
    reindent_ms = median_ms(lambda: edit(content, deeper, reindented), RUNS)
    miss_ms = median_ms(lambda: miss(content), RUNS)
    print(f"edit simple match, {LINES} lines: {simple_ms:.2f} ms")
    print(f"edit block_anchor match, {LINES} lines: {anchor_ms:.2f} ms (target <= 50 ms)")
    print(f"edit line_trimmed match re-indented, {LINES} lines: {reindent_ms:.2f} ms")
    print(f"edit no match (all 9 replacers), {LINES} lines: {miss_ms:.2f} ms")


if __name__ == "__main__":
    main()
