"""How long `opencode -p` takes to refuse a model that cannot work, as a user waits for
it: a misspelt name (answered from litellm's data files, without importing litellm) and a
missing API key. Both must end well within a second; importing litellm alone takes
seconds, which is what the user waited for before the check came first. The budget is
judged on the CPU time of the run, what it costs wherever it runs; the wall time printed
beside it adds whatever else the machine is doing.

Run from the repository root: .venv/bin/python bench/bench_model_check.py
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_SECONDS = 1.0
RUNS = 5
CASES = {
    "unknown name": ["--model", "nosuchmodel"],
    "misspelt name": ["--model", "claude-sonet-4-5"],
    "missing key": ["--model", "openai/gpt-4o-mini"],
}


def run_once(workspace: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one refused run."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "hi", *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 2:
        raise SystemExit(f"expected exit 2 for {args}, got {done.returncode}: {done.stderr}")
    return elapsed, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_API_BASE", "_BASE_URL"))}
    worst = 0.0  # the worst median CPU time
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        env["HOME"] = scratch
        for label, args in CASES.items():
            runs = [run_once(workspace, args, env) for _ in range(RUNS)]
            times = [wall for wall, _ in runs]
            median = statistics.median(times)
            cpu = statistics.median(cpu for _, cpu in runs)
            worst = max(worst, cpu)
            print(
                f"{label:14} median {median * 1000:6.0f} ms wall, {cpu * 1000:4.0f} ms CPU"
                f"  (wall min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})"
            )
    verdict = "ok" if worst <= BUDGET_SECONDS else "OVER BUDGET"
    print(f"worst median CPU {worst * 1000:.0f} ms against {BUDGET_SECONDS * 1000:.0f} ms: {verdict}")
    return 0 if worst <= BUDGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
