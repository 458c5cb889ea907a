"""The command line given what users give it by accident: output piped to a reader that
has gone, odd paths and folders. Each ends in one line (or quietly), never a traceback.
Real subprocesses of `python -m app.cli`."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_") and not k.endswith("_API_KEY")}
    env.update(HOME=str(home), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(REPO))
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_DATA_HOME", None)
    return env


def opencode(*args: str, home: Path, stdout: int = subprocess.PIPE, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd, env=_env(home), stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def worked_in(tmp_path: Path) -> Path:
    """A workspace with one conversation, which wrote notes.txt (a scripted model, --yes)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    script = tmp_path / "script.json"
    write = {"name": "write", "arguments": {"filePath": "notes.txt", "content": "x\n"}}
    script.write_text(json.dumps({"turns": [{"steps": [{"toolCalls": [write]}, {"text": "Noted."}]}]}))
    done = opencode(
        "-p", "take a note", "--model", f"scripted/{script}", "--yes", "--no-attach", "-C", str(workspace),
        home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return workspace


def test_output_piped_to_a_reader_that_has_gone_ends_every_command_quietly(worked_in: Path, tmp_path: Path):
    """`opencode ... | head -1` where head has already gone: as a Unix tool, exit 141
    (128 + SIGPIPE) and nothing on stderr."""
    ws = str(worked_in)
    commands = [
        ["schema"],
        ["permission", "check", "bash", "ls", "-C", ws],
        ["tool", "view", '{"filePath": "a.txt"}', "-C", ws],
        ["changes", "-C", ws],
        ["changes", "--json", "-C", ws],
        ["export", "-C", ws],
        ["export", "--format", "json", "-C", ws],
        ["-p", "again", "-q", "--model", f"scripted/{tmp_path / 'script.json'}", "--no-attach", "-C", ws],
    ]
    for command in commands:
        reader, writer = os.pipe()
        os.close(reader)  # the reader has gone before anything is written
        try:
            done = opencode(*command, home=tmp_path / "home", stdout=writer)
        finally:
            os.close(writer)
        assert (command, done.returncode, done.stderr) == (command, 141, "")


def test_headless_export_runs_with_no_model_configured(worked_in: Path, tmp_path: Path):
    """`/export` calls no model: with no provider key and no --model it still writes the
    transcript (`/compact`, which calls one, still says how to configure one)."""
    home = tmp_path / "home"
    exported = opencode("-p", "/export json", "--continue", "-f", "json", "-C", str(worked_in), home=home)
    compacted = opencode("-p", "/compact", "--continue", "-C", str(worked_in), home=home)

    assert (exported.returncode, exported.stderr) == (0, "")
    written = worked_in / json.loads(exported.stdout)["response"].removeprefix("Session exported to ")
    assert json.loads(written.read_text())["messages"][0]["text"] == "take a note"
    assert compacted.returncode == 2 and "API_KEY" in compacted.stderr


def test_text_arguments_that_are_not_utf8_are_one_line(worked_in: Path, tmp_path: Path):
    """A Latin-1 terminal's é reached the store as a surrogate: a traceback, after the
    session was made. Paths may be any bytes: -o writes the file named."""
    home = tmp_path / "home"
    env = _env(home)
    latin1 = [
        [b"-p", b"caf\xe9", b"-C", os.fsencode(worked_in)],
        [b"changes", b"--session", b"\xff", b"-C", os.fsencode(worked_in)],
        [b"tool", b"view", b'{"filePath": "caf\xe9"}', b"-C", os.fsencode(worked_in)],
    ]
    for argv in latin1:
        done = subprocess.run(
            [os.fsencode(sys.executable), b"-m", b"app.cli", *argv],
            cwd=REPO, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2 and done.stdout == b""
        assert done.stderr.startswith(b"opencode: error: the argument ") and b"is not UTF-8 text" in done.stderr
        assert len(done.stderr.splitlines()) == 1
    sessions = json.loads(opencode("changes", "--json", "-C", str(worked_in), home=home).stdout)
    assert sessions["title"] == "take a note"  # no session was made for the refused prompt
    exported = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"app.cli", b"export", b"-o", os.fsencode(tmp_path) + b"/\xff.md",
         b"-C", os.fsencode(worked_in)],
        cwd=REPO, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert exported.returncode == 0 and os.path.exists(os.fsencode(tmp_path) + b"/\xff.md")


@pytest.mark.parametrize("minutes", ["-5", "0", "nan", "inf", "soon"])
def test_serve_refuses_an_idle_timeout_that_is_no_time(tmp_path: Path, minutes: str):
    done = opencode("serve", "--idle-timeout", minutes, home=tmp_path / "home")
    assert done.returncode == 2 and "is no number of minutes above 0" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_tool_arguments_from_a_closed_standard_input_are_one_line(tmp_path: Path):
    home = tmp_path / "home"
    command = 'exec "$0" -m app.cli tool view - -C "$1" <&-'
    done = subprocess.run(
        ["sh", "-c", command, sys.executable, str(tmp_path)],
        cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "opencode: error: standard input held no tool arguments: pipe one JSON object, e.g. '{\"filePath\": \"README.md\"}'\n"
    )


@pytest.mark.parametrize("redirections", ["< /dev/null", "<&-"], ids=["not-a-terminal", "closed"])
def test_the_tui_without_a_terminal_for_input_is_one_line(tmp_path: Path, redirections: str):
    """Input from /dev/null waited for keys forever; a closed input was a traceback."""
    command = f'exec "$0" -m app.cli -C "$1" {redirections}'
    done = subprocess.run(
        ["sh", "-c", command, sys.executable, str(tmp_path)],
        cwd=REPO, env=_env(tmp_path / "home"), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("opencode: error: the TUI needs a terminal, and standard input is not one")
    assert len(done.stderr.splitlines()) == 1


def test_the_tui_with_its_output_redirected_is_one_line(tmp_path: Path):
    terminal, keyboard = pty.openpty()  # a terminal for input only: output goes to a pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "-C", str(tmp_path)],
            cwd=REPO, env=_env(tmp_path / "home"), stdin=keyboard, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(keyboard)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("opencode: error: the TUI needs a terminal, and standard output is not one")


def test_a_turn_that_creates_then_deletes_a_file_reports_no_change(tmp_path: Path):
    """As `opencode changes` leaves it out, -p's JSON does not list it as changed and deleted."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    steps = [
        {"toolCalls": [{"name": "write", "arguments": {"filePath": "tmp.txt", "content": "x\n"}}]},
        {"toolCalls": [{"name": "delete", "arguments": {"path": "tmp.txt"}}]},
        {"text": "Cleaned up."},
    ]
    script.write_text(json.dumps({"turns": [{"steps": steps}]}))
    done = opencode(
        "-p", "scratch", "-f", "json", "-q", "--yes", "--no-attach", "--model", f"scripted/{script}",
        "-C", str(workspace), home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reported = json.loads(done.stdout)
    assert (reported["files_changed"], reported["files_deleted"]) == ([], [])
    assert not (workspace / "tmp.txt").exists()


def test_changes_of_an_empty_session_id_names_no_session(worked_in: Path, tmp_path: Path):
    """--session '' listed the last conversation's files, as if no session were named."""
    done = opencode("changes", "--session", "", "-C", str(worked_in), home=tmp_path / "home")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "opencode: error: no session '' in this workspace\n")
