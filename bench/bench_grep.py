"""grep over a 50,000-file tree: our tool end to end (Tool.call on a real runtime, rg
as an async subprocess, parsing, sorting, rendering) beside plain `rg PATTERN DIR`.

Target: the tool within 1.5x of plain rg. Run: .venv/bin/python bench/bench_grep.py
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.config import Config
from app.runtime import Runtime
from app.tools.grep import GrepTool, find_ripgrep

FOLDERS = 500
FILES_PER_FOLDER = 100  # 50,000 files
MATCH_EVERY = 1000  # one file in a thousand holds the needle: 50 matches
PATTERN = "needle_[0-9]+"
RUNS = 7
TARGET_RATIO = 1.5


def build_tree(root: Path) -> None:
    """Small source-like files; every MATCH_EVERY-th one has a matching line."""
    body = "".join(f"def function_{n}(value):\n    return value * {n}\n" for n in range(5))
    for folder in range(FOLDERS):
        directory = root / f"pkg{folder:03}"
        directory.mkdir()
        for file in range(FILES_PER_FOLDER):
            index = folder * FILES_PER_FOLDER + file
            extra = f"# needle_{index}\n" if index % MATCH_EVERY == 0 else ""
            (directory / f"mod{file:03}.py").write_text(body + extra)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run_plain_rg(command: list[str]) -> bytes:
    return subprocess.run(command, capture_output=True, check=False).stdout


async def measure(rg: str, root: Path) -> tuple[float, float, int, int]:
    """Both contenders, alternating run by run so a busy machine slows them alike.
    Returns (tool ms, rg ms, tool matches, rg matches)."""
    runtime = Runtime.build(root, config=Config(), policy="headless-yes")
    try:
        ctx = runtime.context(runtime.store.sessions.create(title="bench").id)
        tool = GrepTool("rg")
        command = [rg, PATTERN, str(root)]
        result = await tool.call({"pattern": PATTERN}, ctx)  # warm-up: page cache, first spawn
        plain = run_plain_rg(command)
        tool_samples, rg_samples = [], []
        for _ in range(RUNS):
            start = time.perf_counter()
            await tool.call({"pattern": PATTERN}, ctx)
            tool_samples.append(time.perf_counter() - start)
            start = time.perf_counter()
            run_plain_rg(command)
            rg_samples.append(time.perf_counter() - start)
        return median_ms(tool_samples), median_ms(rg_samples), result.metadata["matches"], plain.count(b"\n")
    finally:
        runtime.close()


def main() -> None:
    rg = find_ripgrep()
    if rg is None:
        sys.exit("ripgrep (rg) not found: install the ripgrep package")
    # A RAM file system when there is one: on a busy disk, creating and removing 50,000
    # files takes far longer than the searches being measured.
    ram = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=ram if ram.is_dir() else None) as temp:
        root = Path(temp)
        start = time.perf_counter()
        build_tree(root)
        print(f"tree: {FOLDERS * FILES_PER_FOLDER} files built in {time.perf_counter() - start:.1f} s")
        tool_ms, rg_ms, tool_matches, rg_matches = asyncio.run(measure(rg, root))
    if tool_matches != rg_matches:
        sys.exit(f"the tool found {tool_matches} matches but plain rg {rg_matches}: the comparison is void")
    print(f"plain rg, {rg_matches} matches: {rg_ms:.1f} ms (median of {RUNS})")
    print(
        f"grep tool end to end: {tool_ms:.1f} ms (target <= {rg_ms * TARGET_RATIO:.1f} ms, {TARGET_RATIO}x rg)"
    )
    print(f"ratio tool / rg: {tool_ms / rg_ms:.2f}x (target <= {TARGET_RATIO}x)")


if __name__ == "__main__":
    main()
