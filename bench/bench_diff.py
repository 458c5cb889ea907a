"""How fast app.core.diff is on a big file with scattered edits (the sidebar recomputes stats
after every tool call), and a patched file's diff when the changed regions are known
(``unified_diff_regions``, as the patch tool makes it). Run: .venv/bin/python bench/bench_diff.py"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.diff import Region, diff_stats, unified_diff, unified_diff_regions  # noqa: E402

LINES = 10_000
CHANGES = 100
RUNS = 15
TARGET_MS = 20.0


def source_file(rng: random.Random) -> list[str]:
    """Code-like lines, with the repeats real code has (blank lines, braces, returns)."""
    lines = []
    for n in range(LINES):
        roll = rng.random()
        if roll < 0.15:
            lines.append("\n")
        elif roll < 0.22:
            lines.append("    }\n")
        elif roll < 0.25:
            lines.append("        return result\n")
        else:
            lines.append(f"    value_{n} = compute({rng.randint(0, 999)}, name='item {n}')\n")
    return lines


def scattered_edits(lines: list[str], rng: random.Random) -> list[str]:
    """CHANGES edits spread over the file: a third changed lines, a third inserted, a third deleted."""
    edited = list(lines)
    for n in range(CHANGES):
        at = rng.randrange(len(edited))
        if n % 3 == 0:
            edited[at] = f"    changed_{n} = True\n"
        elif n % 3 == 1:
            edited.insert(at, rng.choice(["\n", "    }\n", f"    inserted_{n}()\n"]))
        else:
            del edited[at]
    return edited


def replaced_lines(lines: list[str], count: int, rng: random.Random) -> tuple[list[str], list[Region]]:
    """``count`` lines replaced at random places, and the regions that hold the changes."""
    edited = list(lines)
    places = sorted(rng.sample(range(len(lines)), count))
    for at in places:
        edited[at] = f"    patched_{at} = True\n"
    return edited, [(at, at + 1, at, at + 1) for at in places]


def timings_ms(action: Callable[[], object], runs: int = RUNS) -> list[float]:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main() -> None:
    rng = random.Random(42)
    lines = source_file(rng)
    old, new = "".join(lines), "".join(scattered_edits(lines, rng))
    additions, deletions = diff_stats(old, new)
    print(f"input: {LINES} lines, {CHANGES} scattered edits -> +{additions} -{deletions}")
    stats = timings_ms(lambda: diff_stats(old, new))
    print(f"diff_stats 10k lines/100 edits: {statistics.median(stats):.1f} ms (target <= {TARGET_MS:.0f} ms)")
    print(f"diff_stats 10k lines/100 edits, best of {RUNS}: {min(stats):.1f} ms")
    udiff = timings_ms(lambda: unified_diff(old, new, "big.py"))
    print(f"unified_diff 10k lines/100 edits: {statistics.median(udiff):.1f} ms")
    addition = timings_ms(lambda: diff_stats("", new))
    print(f"diff_stats pure addition of 10k lines: {statistics.median(addition):.1f} ms")

    big = source_file(rng) * 10
    edited, regions = replaced_lines(big, 2000, rng)
    old, new = "".join(big), "".join(edited)
    whole = timings_ms(lambda: unified_diff(old, new, "big.py"), runs=5)
    print(f"unified_diff 100k lines/2,000 replaced lines: {min(whole):.1f} ms")
    known = timings_ms(lambda: unified_diff_regions(old, new, "big.py", regions), runs=5)
    print(f"unified_diff_regions, same input, regions known: {min(known):.1f} ms")


if __name__ == "__main__":
    main()
