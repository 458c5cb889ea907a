"""The server dies mid-turn (kill -9): the attached `-p` says so in one line and exits
non-zero, every file is wholly old or wholly new, and the next `-p` (in its own process:
nobody listens any more) rolls the interrupted change back and works. A server stopped
mid-turn exits and its client says so. And 20 clients at once against one server, each
in its own workspace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from app.workspace.beneath import CRASH_VARIABLE
from tests.serve.running import (
    REPO,
    RUN_TIMEOUT,
    clean_env,
    endless_turn,
    opencode,
    socket_of,
    start_server,
)

FILES = 200
OLD = {f"src/m{n:03}.py": "".join(f"line {i}\n" for i in range(50)) for n in range(FILES)}
NEW = {path: text.replace("line 7\n", "LINE 7\n") for path, text in OLD.items()}
PATCH = "*** Begin Patch\n" + "".join(f"*** Update File: {p}\n@@\n-line 7\n+LINE 7\n" for p in OLD) + "*** End Patch"


def patching_model(tmp_path: Path, final_text_delay: float = 0.0) -> str:
    """Patch every file, then answer (slowly, with a delay: the turn is still running
    after the patch); a later prompt starting with "after" answers "fine"."""
    script = {
        "chunkDelay": final_text_delay,
        "turns": [
            {"match": "^patch", "steps": [
                {"toolCalls": [{"name": "patch", "arguments": {"patch": PATCH}}]},
                {"text": "patched " * (2000 if final_text_delay else 1)},
            ]},
            {"match": "^after", "steps": [{"text": "fine"}]},
        ],
    }  # fmt: skip
    path = tmp_path / "patch.json"
    path.write_text(json.dumps(script))
    return f"scripted/{path}"


def plant(root: Path) -> None:
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def states(root: Path) -> set[str]:
    """"old" and/or "new": what the files are; a file that is neither fails the test."""
    found = set()
    for rel in OLD:
        text = (root / rel).read_text()
        assert text in (OLD[rel], NEW[rel]), f"{rel} is half written"
        found.add("old" if text == OLD[rel] else "new")
    return found


def gone_line(folder: Path) -> str:
    return (
        f"opencode: error: the opencode server ({socket_of(folder)}) went away during the turn: "
        "each file change is whole or undone; run the prompt again\n"
    )


def test_a_server_killed_in_the_middle_of_a_200_file_patch(folder: Path, workspace: Path, tmp_path: Path):
    plant(workspace)
    model = patching_model(tmp_path)
    # The seam SIGKILLs the server before its 300th change on disk: after the 200 staged
    # copies, 99 of the 200 renames are done.
    server = start_server(folder, extra={CRASH_VARIABLE: "300"})

    client = opencode(folder, workspace, "-p", "patch them", "--model", model, "--yes", "-q")

    assert server.wait(timeout=RUN_TIMEOUT) == -signal.SIGKILL
    assert (client.returncode, client.stdout, client.stderr) == (1, "", gone_line(folder))
    assert states(workspace) == {"old", "new"}  # really stopped in the middle, each file whole

    after = opencode(folder, workspace, "-p", "after it", "--model", model)

    assert (after.returncode, after.stdout) == (0, "fine\n")
    assert "Rolled back an interrupted change" in after.stderr
    assert states(workspace) == {"old"}


def test_a_server_killed_by_a_signal_while_the_turn_runs(folder: Path, workspace: Path, tmp_path: Path):
    plant(workspace)
    model = patching_model(tmp_path, final_text_delay=0.05)
    server = start_server(folder)
    client = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "patch them", "--model", model, "--yes"],
        cwd=REPO, env=clean_env(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert client.stderr is not None
    assert client.stderr.readline() == f"→ patch {', '.join(OLD)}\n"

    os.kill(server.pid, signal.SIGKILL)
    out, err = client.communicate(timeout=RUN_TIMEOUT)
    server.wait(timeout=RUN_TIMEOUT)

    assert (client.returncode, out, err) == (1, "", gone_line(folder))
    assert len(states(workspace)) == 1  # all old, or all new
    after = opencode(folder, workspace, "-p", "after it", "--model", model)
    assert (after.returncode, after.stdout) == (0, "fine\n")


def test_a_server_stopped_in_the_middle_of_a_turn_exits_and_its_client_says_so(folder: Path, workspace: Path, tmp_path):
    """SIGTERM (as `--stop`) while a client's turn streams: the turn is cancelled, the
    server exits 0, and the client says in one line that the server went away."""
    server = start_server(folder)
    client, model = endless_turn(folder, workspace, tmp_path)

    server.terminate()

    assert server.wait(timeout=RUN_TIMEOUT) == 0
    out, err = client.communicate(timeout=RUN_TIMEOUT)
    assert (client.returncode, out, err) == (1, "", gone_line(folder))
    after = opencode(folder, workspace, "-p", "next", "--model", model, "--continue")
    assert (after.returncode, after.stdout) == (0, "here\n")


CLIENTS = 20


def test_20_clients_at_once_each_editing_its_own_workspace(folder: Path, tmp_path: Path):
    roots, models = [], []
    for n in range(CLIENTS):
        root = tmp_path / f"ws{n}"
        root.mkdir()
        roots.append(root)
        write = {"name": "write", "arguments": {"filePath": "owner.txt", "content": f"client {n}\n"}}
        script = tmp_path / f"client{n}.json"
        script.write_text(json.dumps({"turns": [{"steps": [{"toolCalls": [write]}, {"text": f"done {n}"}]}]}))
        models.append(f"scripted/{script}")
    server = start_server(folder)
    try:
        clients = [
            subprocess.Popen(
                [sys.executable, "-m", "app.cli", "-C", str(root), "-p", "claim it", "--model", model, "--yes",
                 "--attach", "-f", "json"],
                cwd=REPO, env=clean_env(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for root, model in zip(roots, models, strict=True)
        ]  # fmt: skip
        finished = [client.communicate(timeout=RUN_TIMEOUT) for client in clients]
        status = json.loads(opencode(folder, tmp_path, "serve", "--status").stdout)
    finally:
        server.terminate()
        server.wait(timeout=RUN_TIMEOUT)

    assert [client.returncode for client in clients] == [0] * CLIENTS, [err for _, err in finished]
    answers = [json.loads(out) for out, _ in finished]
    assert [answer["response"] for answer in answers] == [f"done {n}" for n in range(CLIENTS)]
    assert len({answer["session_id"] for answer in answers}) == CLIENTS
    assert [(root / "owner.txt").read_text() for root in roots] == [f"client {n}\n" for n in range(CLIENTS)]
    assert status["workspaces"] == CLIENTS and status["pid"] == server.pid
