"""How long the prompt's @ list takes to list a workspace and to rank it as a key is
typed. The TUI ranks up to 2,000 paths on the UI thread (so that must stay within a
frame or two) and a larger workspace in a thread; listing runs in a thread once per @.

Run from the repository root: .venv/bin/python bench/bench_completion.py
"""

from __future__ import annotations

import random
import string
import tempfile
from functools import partial
from pathlib import Path

from timing import median_ms

from app.prompt.completion import MAX_PATHS, prepare, rank, workspace_paths

QUERIES = ("s", "sa", "sapp", "src/app", "zz")
SIZES = (2_000, MAX_PATHS)


def make_tree(root: Path, files: int) -> None:
    """``files`` files in folders up to four deep, with names of 3 to 10 letters."""
    rng = random.Random(files)

    def name() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))

    folders = [root]
    for _ in range(files // 20):
        parent = rng.choice(folders)
        if len(parent.relative_to(root).parts) < 4:
            folder = parent / name()
            folder.mkdir(exist_ok=True)
            folders.append(folder)
    for _ in range(files):
        (rng.choice(folders) / (name() + rng.choice((".py", ".md", ".ts", "")))).touch()


def main() -> None:
    for size in SIZES:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            make_tree(root, size)
            listed = median_ms(partial(workspace_paths, root), runs=3)
            paths = workspace_paths(root)
            prepared = median_ms(partial(prepare, paths), runs=1)
            print(f"{len(paths):>6} paths: listed in {listed:.0f} ms, prepared in {prepared:.0f} ms")
            for query in QUERIES:
                print(f"    rank {query!r:<10} {median_ms(partial(rank, query, paths), runs=5):6.1f} ms")


if __name__ == "__main__":
    main()
