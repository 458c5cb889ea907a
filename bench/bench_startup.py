"""Start-up beside a baseline commit: a one-shot `opencode tool view FILE` and the TUI's
first frame (headless, as bench_tui.py --instructions runs it), for this tree and for a
baseline commit checked out with `git worktree add` into a temporary folder, in the same
run, alternating the two so that the machine's load falls on both alike.

Both trees run with this repository's .venv interpreter, each with PYTHONPATH set to its
own folder, in an empty workspace with a scratch HOME; both are byte-compiled first and
started once unmeasured, so no figure includes compiling our sources. For each command
the script prints the median of RUNS starts, wall-clock and CPU (user + system of the
process, which another process's load moves less), and this tree's figure as a ratio
of the baseline's.

    .venv/bin/python bench/bench_startup.py [--runs N] [--baseline COMMIT]

The baseline defaults to the merge-base of HEAD with main; --runs defaults to 10.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from bench_tui import MAKE_APP, PYTHON, REPO, SIZE, TO_FIRST_FRAME, first_frame_env

RUNS = 10
GOAL_RATIO = 1.10
"""This tree's start-up should be within 10% of the baseline's."""
VIEWED = "notes.txt"


class Start(NamedTuple):
    wall_ms: float
    cpu_ms: float


class Command(NamedTuple):
    name: str
    argv: list[str]


def commands() -> list[Command]:
    """What is measured, each a command line for the .venv interpreter."""
    one_shot = "import sys\nfrom app.cli import console_main\nsys.argv[0] = 'opencode'\nconsole_main()\n"
    return [
        Command("opencode tool view", [str(PYTHON), "-c", one_shot, "tool", "view", f'{{"filePath": "{VIEWED}"}}']),
        Command("TUI first frame", [str(PYTHON), "-c", TO_FIRST_FRAME.format(make=MAKE_APP["ours"], size=SIZE)]),
    ]


def start_once(argv: list[str], cwd: Path, env: dict[str, str]) -> Start:
    """One start to its end: wall-clock time and the process's own CPU time."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - started) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        assert process.stderr is not None
        raise SystemExit(f"{' '.join(argv[:2])}... failed ({process.returncode}): {process.stderr.read().decode()[-300:]}")
    return Start(wall, (usage.ru_utime + usage.ru_stime) * 1000)


def merge_base() -> str:
    return subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()


def baseline_tree(commit: str, into: Path) -> Callable[[], None]:
    """Check ``commit`` out at ``into``; returns what removes the checkout again."""
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(into), commit], cwd=REPO, check=True)
    return lambda: subprocess.run(["git", "worktree", "remove", "--force", str(into)], cwd=REPO, check=False)


def compile_tree(tree: Path) -> None:
    """Byte-compile a tree's sources, as an earlier start leaves them."""
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(tree / "app")], check=False)


def ratio_line(ours: list[Start], base: list[Start]) -> str:
    wall_ours, wall_base = (statistics.median(s.wall_ms for s in starts) for starts in (ours, base))
    cpu_ours, cpu_base = (statistics.median(s.cpu_ms for s in starts) for starts in (ours, base))
    verdict = "within" if wall_ours <= wall_base * GOAL_RATIO else "outside"
    return (f"  wall: {wall_ours:.0f} ms vs {wall_base:.0f} ms, ratio {wall_ours / wall_base:.3f}"
            f" ({verdict} {GOAL_RATIO - 1:.0%})\n"
            f"  CPU:  {cpu_ours:.0f} ms vs {cpu_base:.0f} ms, ratio {cpu_ours / cpu_base:.3f}")


def main(argv: list[str]) -> int:
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else RUNS
    commit = argv[argv.index("--baseline") + 1] if "--baseline" in argv else merge_base()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        home, workspace, base = Path(scratch) / "home", Path(scratch) / "ws", Path(scratch) / "baseline"
        home.mkdir()
        workspace.mkdir()
        (workspace / VIEWED).write_text("".join(f"line {n}\n" for n in range(200)), encoding="utf-8")
        remove = baseline_tree(commit, base)
        try:
            trees = {"this tree": REPO, f"baseline {commit[:7]}": base}
            for tree in trees.values():
                compile_tree(tree)
            print(f"start-up, median of {runs} (this tree vs baseline {commit[:7]}; load: "
                  f"{', '.join(f'{n:.2f}' for n in os.getloadavg())}):")
            for command in commands():
                starts: dict[str, list[Start]] = {name: [] for name in trees}
                for run in range(runs + 1):
                    for name, tree in trees.items():
                        env = {**first_frame_env(home), "PYTHONPATH": str(tree)}
                        start = start_once(command.argv, workspace, env)
                        if run:  # the first start of each warms the disk cache and is not counted
                            starts[name].append(start)
                ours, theirs = starts.values()
                print(f"{command.name}:\n{ratio_line(ours, theirs)}")
        finally:
            remove()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
