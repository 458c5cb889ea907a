"""Warm by default in a shell, and never the server's environment: a `-p` whose standard
input is a terminal (a real pty, so the production check is the one exercised) leaves a
detached `opencode serve` behind that the next `-p` attaches to; with CI set, with
--no-attach or with serve.autostart false, nothing is left behind. A client whose provider
key or base URL differs from the server's talks to its own provider (two fake servers)."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.llm.fake_openai import FakeOpenAI, Text
from tests.serve.running import (
    REPO,
    RUN_TIMEOUT,
    answers,
    clean_env,
    opencode,
    scripted,
    socket_of,
    start_server,
    stop_server,
)
from tests.waiting import wait_until

NOTE = {"name": "write", "arguments": {"filePath": "note.txt", "content": "served\n"}}


def shell_env(folder: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A person's shell: no CI variable (CI itself sets one for this test run)."""
    env = clean_env(folder)
    env.pop("CI", None)
    return {**env, **(extra or {})}


def in_a_terminal(workspace: Path, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``opencode -C WORKSPACE ARGS`` with a pty as its standard input; output captured."""
    controller, terminal = pty.openpty()
    try:
        return subprocess.run(
            [sys.executable, "-m", "app.cli", "-C", str(workspace), *args], cwd=REPO, env=dict(env),
            stdin=terminal, capture_output=True, text=True, timeout=RUN_TIMEOUT,
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(controller)


def processes_of(folder: Path) -> list[int]:
    """The live processes whose environment names ``folder`` as their runtime folder: the
    command's and whatever it started (a child inherits the environment), whether or not
    it left the command's session."""
    marker = f"XDG_RUNTIME_DIR={folder}".encode()
    found = []
    for entry in os.listdir("/proc"):
        try:
            environ = Path("/proc", entry, "environ").read_bytes() if entry.isdigit() else b""
        except OSError:  # ended meanwhile
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry))
    return found


@pytest.fixture
def left_behind(folder: Path) -> Iterator[Path]:
    """The runtime folder; any process a test left there is ended afterwards."""
    yield folder
    for pid in processes_of(folder):
        os.kill(pid, signal.SIGTERM)
    wait_until(lambda: not processes_of(folder), RUN_TIMEOUT, "the servers left behind ending")


@pytest.mark.parametrize("how", ["CI=true", "--no-attach", "serve.autostart false"])
def test_with_ci_no_attach_or_autostart_off_no_process_is_left_behind(
    left_behind: Path, workspace: Path, tmp_path: Path, how: str
):
    folder = left_behind
    model = scripted(tmp_path, [{"steps": [{"toolCalls": [NOTE]}, {"text": "noted"}]}])
    env = shell_env(folder, {"CI": "true"} if how == "CI=true" else None)
    options = ["--no-attach"] if how == "--no-attach" else []
    if how == "serve.autostart false":
        (folder / "home").mkdir()
        (folder / "home" / ".opencode.json").write_text(json.dumps({"serve": {"autostart": False}}))

    run = in_a_terminal(workspace, env, "-p", "note it", "--model", model, "--yes", *options)

    assert (run.returncode, run.stdout) == (0, "noted\n"), run.stderr
    assert processes_of(folder) == [] and not socket_of(folder).exists()


def test_a_p_in_a_terminal_leaves_a_server_the_next_p_attaches_to(left_behind: Path, workspace: Path, tmp_path):
    folder = left_behind
    model = scripted(tmp_path, [{"steps": [{"toolCalls": [NOTE]}, {"text": "noted"}]}])
    again = scripted(tmp_path, [{"steps": [{"text": "again"}]}], "again.json")
    env = shell_env(folder)

    first = in_a_terminal(workspace, env, "-p", "note it", "--model", model, "--yes")
    [server] = processes_of(folder)  # started before the command ended
    wait_until(lambda: answers(socket_of(folder)), RUN_TIMEOUT, "the server left behind listening")
    second = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "once more", "--model", again, "--attach"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    status = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--status"], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=RUN_TIMEOUT,
    )  # fmt: skip

    assert (first.returncode, first.stdout) == (0, "noted\n"), first.stderr
    assert (second.returncode, second.stdout) == (0, "again\n"), second.stderr
    assert json.loads(status.stdout)["pid"] == server
    assert json.loads(status.stdout)["idleTimeout"] == 15 * 60  # the default for a server left behind
    assert os.getsid(server) == server  # a session of its own: closing the terminal does not end it


@pytest.mark.usefixtures("interruptible")
def test_a_p_interrupted_with_ctrl_c_leaves_nothing_behind(left_behind: Path, workspace: Path, tmp_path: Path):
    listing = {"toolCalls": [{"name": "ls", "arguments": {}}]}
    endless = {"text": "word " * 100_000}  # streamed a word at a time: the turn is still running
    model = scripted(tmp_path, [{"steps": [listing, endless]}], chunkDelay=0.05)
    controller, terminal = pty.openpty()
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "slow one", "--model", model, "--yes"],
            cwd=REPO, env=shell_env(left_behind), stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert run.stderr is not None
        assert run.stderr.readline() == "→ ls\n"  # the turn is under way
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=RUN_TIMEOUT)
    finally:
        os.close(terminal)
        os.close(controller)

    assert run.returncode == 130
    assert processes_of(left_behind) == [] and not socket_of(left_behind).exists()


def test_a_script_without_a_terminal_leaves_nothing_behind(left_behind: Path, workspace: Path, tmp_path: Path):
    model = scripted(tmp_path, [{"steps": [{"text": "done"}]}])
    env = shell_env(left_behind)

    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "hi", "--model", model], cwd=REPO, env=env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip

    assert (run.returncode, run.stdout) == (0, "done\n")
    assert processes_of(left_behind) == []


@pytest.fixture
def providers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    servers = FakeOpenAI().start(), FakeOpenAI().start()
    try:
        yield servers
    finally:
        for server in servers:
            server.close()


def provider_env(fake: FakeOpenAI, key: str) -> dict[str, str]:
    return {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": fake.base_url}


@pytest.mark.parametrize("differs", ["key and base URL", "key"])
def test_a_client_whose_provider_differs_from_the_servers_talks_to_its_own(
    folder: Path, workspace: Path, providers: tuple[FakeOpenAI, FakeOpenAI], differs: str
):
    servers, ours = providers if differs == "key and base URL" else (providers[0], providers[0])
    process = start_server(folder, extra=provider_env(servers, "key-of-the-server"))
    try:
        ours.reply(Text("from my provider"))
        run = opencode(folder, workspace, "-p", "hi", "--model", "openai/fake-model", extra=provider_env(ours, "my-key"))
        required = opencode(
            folder, workspace, "-p", "hi", "--model", "openai/fake-model", "--attach",
            extra=provider_env(ours, "my-key"),
        )  # fmt: skip
        servers.reply(Text("from the server's provider"))
        same = opencode(
            folder, workspace, "-p", "hi", "--model", "openai/fake-model", "--attach",
            extra=provider_env(servers, "key-of-the-server"),
        )  # fmt: skip
    finally:
        stop_server(process)

    assert (run.returncode, run.stdout) == (0, "from my provider\n"), run.stderr
    assert "this run uses its own process" in run.stderr
    assert [request.headers["authorization"] for request in ours.received][0] == "Bearer my-key"
    named = "OPENAI_API_KEY, OPENAI_BASE_URL" if differs == "key and base URL" else "OPENAI_API_KEY"
    assert required.returncode == 2
    assert required.stderr == (
        f"opencode: error: the opencode server ({socket_of(folder)}) was started with another {named}: "
        "run without --attach, or 'opencode serve --stop' and start it from this environment\n"
    )
    assert (same.returncode, same.stdout) == (0, "from the server's provider\n"), same.stderr
    assert servers.received[-1].headers["authorization"] == "Bearer key-of-the-server"
    assert len(ours.received) == 1 + (differs == "key")  # the attached run is the server's own
