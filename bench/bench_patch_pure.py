"""The pure part of a patch, phase by phase: parse_patch, plan_patch (locate every hunk,
build the new bytes) and the diffs of the patched files, on the issue's three sizes.

Run from the repo root: .venv/bin/python bench/bench_patch_pure.py
No disk, no event loop: the files are bytes in memory. The diffs are made as the change
path makes them (``AppliedFile.diff``: only around the regions the plan says changed);
"whole-file diffs" is what they cost when every file is diffed in full, for comparison.
Targets are for the large case, whose whole process must stay within 2x Codex's
(bench_patch.py times both; docs/performance.md has the figures).
Figures are the best of a few runs in CPU time (``process_time``): the machine is shared.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.diff import unified_diff  # noqa: E402
from app.tools.changes import AppliedFile  # noqa: E402
from app.tools.text.patch import PatchPlan, parse_patch, plan_patch  # noqa: E402

TARGETS_MS = {"parse": 40.0, "plan": 60.0, "diffs": 30.0}


def source_file(lines: int, seed: int = 0) -> list[str]:
    """Code-like lines with the repeats real files have (blank lines, closing braces)."""
    shapes = (
        "def handler_{s}_{i}(request):",
        "    value = compute({i}, request)",
        "    return value",
        "",
        "}}",
    )
    return [shapes[i % len(shapes)].format(i=i, s=seed) for i in range(lines)]


def update_section(path: str, lines: list[str], hunks: int) -> str:
    """Evenly spread hunks, each replacing one line with three lines of context around it."""
    step = len(lines) // hunks
    body = [f"*** Update File: {path}"]
    for n in range(hunks):
        at = n * step + step // 2
        body.append("@@")
        body += [f" {line}" for line in lines[at - 3 : at]]
        body += [f"-{lines[at]}", f"+{lines[at]}  # patched"]
        body += [f" {line}" for line in lines[at + 1 : at + 4]]
    return "\n".join(body)


def case(files: list[tuple[int, int]]) -> tuple[str, dict[str, bytes]]:
    """(patch, tree) for files given as (lines, hunks)."""
    tree: dict[str, bytes] = {}
    sections = []
    for seed, (count, hunks) in enumerate(files):
        path, content = f"src/module_{seed}.py", source_file(count, seed)
        tree[path] = ("\n".join(content) + "\n").encode()
        sections.append(update_section(path, content, hunks))
    return "*** Begin Patch\n" + "\n".join(sections) + "\n*** End Patch\n", tree


CASES = [
    ("small", "3 hunks in one 300-line file", [(300, 3)], 20),
    ("spread", "2,000 hunks over 200 files of 500 lines", [(500, 10)] * 200, 5),
    ("large", "2,000 hunks in a 100,000-line file + 500 files of 5", [(100_000, 2000)] + [(200, 5)] * 500, 3),
]


def diffs(plan: PatchPlan, regions: bool) -> int:
    """Every patched file's diff as the change path makes it; the total of its lines."""
    total = 0
    for op in plan.ops:
        before, after = (op.old_bytes or b"").decode(), (op.new_bytes or b"").decode()
        if regions:
            total += len(AppliedFile(op.path, before, after, False, False, regions=op.regions).diff)
        else:
            total += len(unified_diff(before, after, op.path))
    return total


def best_ms(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times) * 1000


def main() -> None:
    for key, label, files, runs in CASES:
        text, tree = case(files)
        patch = parse_patch(text)
        plan = plan_patch(patch, tree.get)
        figures = {
            "parse": best_ms(runs, lambda text=text: parse_patch(text)),
            "plan": best_ms(runs, lambda patch=patch, tree=tree: plan_patch(patch, tree.get)),
            "diffs": best_ms(runs, lambda plan=plan: diffs(plan, regions=True)),
            "whole-file diffs": best_ms(runs, lambda plan=plan: diffs(plan, regions=False)),
        }
        for phase, ms in figures.items():
            target = (
                f" (target <= {TARGETS_MS[phase]:g} ms)" if key == "large" and phase in TARGETS_MS else ""
            )
            print(f"{phase} {key} ({label}): {ms:.2f} ms{target}")


if __name__ == "__main__":
    main()
