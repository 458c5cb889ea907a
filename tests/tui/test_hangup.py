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
from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]


def read_until(master: int, marker: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            seen += os.read(master, 65536)
    return seen


def reply_saved(database: Path) -> bool:
    """The model's reply is stored with the turn's end ("stop"), read from a second
    connection as any reader would."""
    if not database.exists():
        return False
    with closing(sqlite3.connect(database)) as db:
        parts = "".join(row[0] for row in db.execute("SELECT parts FROM messages"))
    return "Zebra-42" in parts and '"reason": "stop"' in parts


def test_the_app_ends_normally_when_its_terminal_goes_away_and_keeps_the_session(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    model = FakeOpenAI().start()
    for _ in range(2):  # the turn and the session's title each ask the model once, in either order
        model.reply(Text("Zebra-42 reporting."))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENCODE_")}
    env |= {
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        **model.env,
    }
    workspace = tmp_path / "ws"
    workspace.mkdir()
    database = workspace / ".opencode" / "opencode.db"
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
        drawn = read_until(master, b"Zebra-42", 60)
        assert b"Zebra-42" in drawn, drawn[-500:]
        wait_until(lambda: reply_saved(database), 60, "the reply saved")  # the turn has ended
        os.close(master)
        process.wait(timeout=30)
    finally:
        model.close()
        if process.poll() is None:
            process.kill()
    # The app's own exit, with the status SIGHUP would have given, not a kill
    assert process.returncode == HANGUP_EXIT_CODE
    assert not database.with_name("opencode.db-wal").exists()  # the store was closed, its log folded in
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
        assert db.execute("SELECT COUNT(*) FROM messages WHERE parts LIKE '%Zebra-42 reporting.%'").fetchone() == (1,)
