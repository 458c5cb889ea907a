"""A real `opencode` on a pseudo-terminal that then goes away, without the SIGHUP a
controlling terminal would send (as under `make run` in a pane that is killed): the app
must end, not spin on a terminal that is gone."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def read_until(master: int, marker: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            seen += os.read(master, 65536)
    return seen


def test_the_app_ends_when_its_terminal_goes_away(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENCODE_")}
    env |= {"HOME": str(tmp_path), "TERM": "xterm-256color"}
    workspace = tmp_path / "ws"
    workspace.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "-C", str(workspace)],
        stdin=slave, stdout=slave, stderr=slave, cwd=REPO, env=env,
        start_new_session=True,  # the pty is not its controlling terminal: no SIGHUP will come
    )  # fmt: skip
    os.close(slave)
    try:
        drawn = read_until(master, b"Ask anything", 60)
        assert b"Ask anything" in drawn, drawn[-500:]
        os.close(master)
        process.wait(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode in (-1, 129)  # SIGHUP, as the kernel would have sent it
