"""parse_patch + plan_patch on patches of growing size (pure: no disk, no event loop).

Run from the repo root: .venv/bin/python bench/bench_patch_pure.py
The whole-process target (``opencode tool patch``) is Codex's ~228 ms for the two big
cases together; the pure part must leave most of that budget to I/O and start-up.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.tools.text.patch import parse_patch, plan_patch  # noqa: E402


def source_file(lines: int) -> list[str]:
    """Code-like lines with the repeats real files have (blank lines, closing braces)."""
    shapes = ("def handler_{i}(request):", "    value = compute({i}, request)", "    return value", "", "}}")
    return [shapes[i % len(shapes)].format(i=i) for i in range(lines)]


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


def case(files: int, lines: int, hunks: int) -> tuple[str, dict[str, bytes]]:
    content = source_file(lines)
    tree = {f"src/module_{n}.py": ("\n".join(content) + "\n").encode() for n in range(files)}
    sections = [update_section(path, content, hunks) for path in tree]
    return "*** Begin Patch\n" + "\n".join(sections) + "\n*** End Patch\n", tree


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    cases = [
        ("3 hunks, 1 file of 200 lines", case(1, 200, 3), 1.0),
        ("2,000 hunks over 200 files of 500 lines", case(200, 500, 10), 80.0),
        ("2,000 hunks in one 100,000-line file", case(1, 100_000, 2000), 80.0),
    ]
    for name, (text, tree), target in cases:
        ms = best_of(7, lambda text=text, tree=tree: plan_patch(parse_patch(text), tree.get))
        print(f"parse+plan {name}: {ms:.1f} ms (target <= {target:g} ms)")


if __name__ == "__main__":
    main()
