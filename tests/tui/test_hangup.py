"""A real `opencode` on a pseudo-terminal that then goes away, without the SIGHUP a
controlling terminal would send (as under `make run` in a pane that is killed): the app
must end, not spin on a terminal that is gone, and end as its quit key ends it, with the
conversation saved."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from contextlib import closing
from pathlib import Path

from app.tui.hangup import HANGUP_EXIT_CODE
from tests.llm.fake_openai import FakeOpenAI, Text

REPO = Path(__file__).resolve().parents[2]


def read_until(master: int, marker: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            seen += os.read(master, 65536)
    return seen


def test_the_app_ends_normally_when_its_terminal_goes_away_and_keeps_the_session(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    model = FakeOpenAI().start()
    model.reply(Text("Hello from the fake model."))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENCODE_")}
    env |= {
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "OPENAI_API_KEY": model.api_key,
        "OPENAI_BASE_URL": model.base_url,
    }
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
        os.write(master, b"hi\r")
        drawn = read_until(master, b"fake model", 60)
        assert b"fake model" in drawn, drawn[-500:]
        os.close(master)
        process.wait(timeout=30)
    finally:
        model.close()
        if process.poll() is None:
            process.kill()
    # The app's own exit, with the status SIGHUP would have given, not a kill
    assert process.returncode == HANGUP_EXIT_CODE
    database = workspace / ".opencode" / "opencode.db"
    assert not database.with_name("opencode.db-wal").exists()  # the store was closed, its log folded in
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
        stored = "".join(row[0] for row in db.execute("SELECT parts FROM messages"))
    assert "Hello from the fake model." in stored
