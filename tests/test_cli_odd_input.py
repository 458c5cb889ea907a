"""The command line given what users give it by accident: output piped to a reader that
has gone, odd paths and folders. Each ends in one line (or quietly), never a traceback.
Real subprocesses of `python -m app.cli`."""

from __future__ import annotations

import json
import os
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
