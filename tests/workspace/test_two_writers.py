"""Locks across processes: two opencode processes each view and edit one file
50 times at once. An edit may be refused (the file changed since that process read it),
but every edit reported as a success must be in the file: no silent lost update."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_tool_command import REPO

ROUNDS = 50

WRITER = """
import asyncio, json, sys
from pathlib import Path
from app.config import Config
from app.core.errors import ToolError
from app.runtime import Runtime

root, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
config = Config.model_validate({"lsp": {"python": {"disabled": True}}})
runtime = Runtime.build(root, config=config, policy="headless-yes")
session = runtime.store.sessions.create(title=tag).id
ctx = runtime.context(session)

async def main():
    done = []
    for n in range(rounds):
        try:
            await runtime.tools["view"].call({"filePath": "shared.txt"}, ctx)
            edit = {"filePath": "shared.txt", "oldString": "END", "newString": f"{tag}-{n}\\nEND"}
            await runtime.tools["edit"].call(edit, ctx)
        except ToolError:
            continue
        done.append(f"{tag}-{n}")
    return done

print(json.dumps(asyncio.run(main())))
runtime.close()
"""


def test_two_processes_editing_one_file_lose_no_reported_edit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "shared.txt").write_text("START\nEND\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env["HOME"] = str(tmp_path / "home")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), tag, str(ROUNDS)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("first", "second")
    ]
    reported = []
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        reported += json.loads(out)
    lines = set((root / "shared.txt").read_text().splitlines())
    assert reported, "no edit succeeded at all"
    assert [edit for edit in reported if edit not in lines] == []
