"""A real `opencode serve` in a subprocess, in a private runtime folder of its own, and
real `opencode` commands pointed at it. Waits are on conditions (the socket answering, the
process ending), each bounded by a generous timeout."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0
"""Seconds a server may take to listen on a busy machine (it imports the ACP SDK and pydantic)."""
RUN_TIMEOUT = 300.0


def clean_env(runtime_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A process environment with no provider keys and no OPENCODE_* settings of the
    machine's, its runtime folder (so its socket) at ``runtime_dir``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OPENCODE_") and not key.endswith("_API_KEY") and key != "OPENAI_BASE_URL"
    }
    env.update(
        XDG_RUNTIME_DIR=str(runtime_dir), HOME=str(runtime_dir / "home"), PYTHONPATH=str(REPO),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )  # fmt: skip
    env.update(extra or {})
    return env


@contextmanager
def runtime_folder() -> Iterator[Path]:
    """A short private folder under /tmp: a Unix socket path has at most 107 bytes, and
    pytest's own temporary paths can be longer."""
    folder = Path(tempfile.mkdtemp(prefix="oc-serve-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def socket_of(runtime_dir: Path) -> Path:
    return runtime_dir / "opencode" / "serve.sock"


def answers(path: Path) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        sock.close()


def start_server(runtime_dir: Path, *args: str, extra: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``opencode serve ARGS`` running, its socket answering; its stderr is in runtime_dir/serve.err."""
    with open(runtime_dir / "serve.err", "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", *args], cwd=REPO, env=clean_env(runtime_dir, extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, text=True,
        )  # fmt: skip
    wait_until(lambda: answers(socket_of(runtime_dir)) or process.poll() is not None, START_TIMEOUT, "serve listening")
    assert process.poll() is None, (runtime_dir / "serve.err").read_text()
    return process


def stop_server(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=RUN_TIMEOUT)


def opencode(
    runtime_dir: Path, workspace: Path, *args: str, extra: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``opencode -C WORKSPACE ARGS`` to its end, with the server's runtime folder."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), *args], cwd=REPO,
        env=clean_env(runtime_dir, extra), capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip


def scripted(tmp_path: Path, turns: list[dict], name: str = "script.json", **extra: object) -> str:
    """The scripted model whose script (``turns``, plus options such as ``chunkDelay``) is
    written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns, **extra}))
    return f"scripted/{path}"


def endless_turn(folder: Path, workspace: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    """A client whose turn on the server has begun (its first call is listed) and would
    stream for hours; and the model, whose prompt "next" answers "here" at once."""
    listing = {"toolCalls": [{"name": "ls", "arguments": {}}]}
    endless = {"text": "word " * 100_000}  # streamed a word at a time
    model = scripted(
        tmp_path,
        [{"match": "^slow", "steps": [listing, endless]}, {"match": "^next", "steps": [{"text": "here"}]}],
        chunkDelay=0.05,
    )
    client = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "slow one", "--model", model, "--attach"],
        cwd=REPO, env=clean_env(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert client.stderr is not None
    assert client.stderr.readline() == "→ ls\n"
    return client, model
