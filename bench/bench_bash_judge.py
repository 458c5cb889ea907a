"""How long the bash tool takes to judge a command before running it: parsing, every part
against the rules, and the files it reads, writes or deletes (a whole tree for `git reset
--hard`, `rm -r` or, with a `view` rule, `grep -r`). Judging runs before every command, so it must stay far below the
cost of starting a shell (a few milliseconds).

Run from the repository root: .venv/bin/python bench/bench_bash_judge.py
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from timing import median_ms

from app.bus import Bus
from app.config import Config
from app.permission import PermissionService
from app.permission.shell.judge import CommandJudge
from app.workspace import Workspace

RULES = {
    "bash": {"*": "ask", "git *": "allow", "rm *": "deny", "ls *": "allow", "cat *": "allow", "echo *": "allow"},
    "delete": {"*.go": "deny"},
    "edit": {"secrets/*": "deny"},
}
COMMANDS = {
    "one part": "git status",
    "a pipeline with a redirection": "cat notes.txt | grep x | sort > out.txt",
    "a compound line": "cd src && ls -la && git diff --stat; echo done > log.txt 2>&1",
    "a wrapped shell": "bash -c 'echo a; ls src' && nohup git log --oneline",
    "git with -c": "git -c core.pager=cat -c alias.x='!echo a' x",
}
TREE_FILES = 2_000


def judge_time(judge: CommandJudge, command: str, runs: int) -> float:
    """The median time of one verdict, in milliseconds."""
    judge.verdict(command)  # the grammar loads on first use
    return median_ms(lambda: judge.verdict(command), runs)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for i in range(TREE_FILES):
            path = root / f"pkg{i % 40}" / f"file{i}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text("x = 1\n")
        config = Config.model_validate({"permission": {"rules": RULES}})
        judge = CommandJudge(PermissionService(config, Bus()), Workspace(root), "coder", [])
        for name, command in COMMANDS.items():
            print(f"{name} ({command!r}): {judge_time(judge, command, 200):.2f} ms")
        tree = judge_time(judge, "git reset --hard", 10)
        print(f"a whole-tree effect ('git reset --hard' over {TREE_FILES:,} files): {tree:.1f} ms")
        reading = Config.model_validate({"permission": {"rules": {**RULES, "view": {"secrets/*": "deny"}}}})
        judge = CommandJudge(PermissionService(reading, Bus()), Workspace(root), "coder", [])
        tree = judge_time(judge, "grep -r x .", 10)
        print(f"a whole-tree read with a view rule ('grep -r x .' over {TREE_FILES:,} files): {tree:.1f} ms")
        print(f"for scale, starting the shell that runs a command (bash -c true): {shell_time():.2f} ms")


def shell_time(runs: int = 50) -> float:
    return median_ms(lambda: subprocess.run(["bash", "-c", "true"], check=True), runs)


if __name__ == "__main__":
    main()
