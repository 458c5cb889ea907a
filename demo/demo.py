"""opencode's offline demo: opencode with the scripted demo model (app/llm/demo.json) in a
scratch workspace. The script sets up a tiny project in ``opencode-demo/`` (the same as
in any folder where ``make run`` starts without a provider), then views, edits, patches
and deletes files there, each change asking for permission. No network, no API key.

    python demo/demo.py              # in the TUI, in a new temporary directory
    python demo/demo.py --headless   # one headless run (-p) that approves every step
    python demo/demo.py DIR          # use (and empty) DIR as the scratch workspace
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from app.llm.scripted import DEMO_MODEL

PROMPT = "Show me what you can do in this project."


def make_workspace(target: Path | None) -> Path:
    """An empty scratch folder: ``target`` (emptied first) or a new temp directory."""
    if target is None:
        return Path(tempfile.mkdtemp(prefix="opencode-demo-"))
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run opencode's offline demo in a scratch workspace."
    )
    parser.add_argument(
        "workspace", nargs="?", type=Path, help="scratch directory (reset first); default: a temp dir"
    )
    parser.add_argument(
        "--headless", action="store_true", help="run once without the TUI, approving every step"
    )
    args = parser.parse_args(argv)
    workspace = make_workspace(args.workspace)
    print(f"demo workspace: {workspace}", file=sys.stderr)
    if args.headless:
        from app.headless.run import run_headless

        return run_headless(workspace, PROMPT, yes=True, model=DEMO_MODEL)
    from app.cli import main as opencode

    return opencode(["-C", str(workspace), "--model", DEMO_MODEL])


if __name__ == "__main__":
    sys.exit(main())
