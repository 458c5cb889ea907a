"""`opencode serve` from the outside: the socket's and its folder's modes, one server per
socket, --status and --stop, the idle timeout, a stale socket, another user refused, TCP
only with the token, `-p` attaching (with a client light enough to import neither litellm
nor textual) and ctrl+c cancelling the turn on the server."""

from __future__ import annotations

import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.headless.run_report import INTERRUPTED_LINE
from tests.serve.running import (
    REPO,
    RUN_TIMEOUT,
    clean_env,
    endless_turn,
    opencode,
    runtime_folder,
    scripted,
    socket_of,
    start_server,
    stop_server,
)

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}) + "\n"
NOTE = {"name": "write", "arguments": {"filePath": "note.txt", "content": "served\n"}}


@pytest.fixture
def server(folder: Path) -> Iterator[subprocess.Popen[str]]:
    process = start_server(folder)
    try:
        yield process
    finally:
        stop_server(process)


@pytest.fixture(scope="module")
def warm() -> Iterator[Path]:
    """One server for the tests that only need one running (each in its own workspace);
    its runtime folder."""
    with runtime_folder() as made:
        process = start_server(made)
        try:
            yield made
        finally:
            stop_server(process)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def received_after(sock: socket.socket, *lines: bytes) -> bytes:
    """Send the lines, then read until the server closes the connection; what came."""
    sock.settimeout(RUN_TIMEOUT)
    try:
        for line in lines:
            sock.sendall(line)
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed already: nothing was served
    data = b""
    while chunk := _recv(sock):
        data += chunk
        if data.endswith(b"\n"):
            break
    return data


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def test_the_socket_is_0600_in_a_0700_folder_and_one_server_runs_per_socket(folder: Path, server, workspace: Path):
    sock = socket_of(folder)
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)
    assert (mode(sock), mode(sock.parent), mode(sock.parent / "serve.log")) == (0o600, 0o700, 0o600)

    second = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"], cwd=REPO, env=clean_env(folder),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    command = opencode(folder, workspace, "-p", "/nosuch", "--attach")  # a slash command: in-process
    status = opencode(folder, workspace, "serve", "--status")

    assert (command.returncode, command.stderr.startswith("opencode: error: unknown command /nosuch")) == (2, True)
    assert json.loads(status.stdout)["workspaces"] == 0  # the command never reached the server
    assert second.returncode == 0
    assert second.stderr == (
        f"opencode: a server is already running on {sock} (pid {server.pid}): 'opencode serve --stop' stops it\n"
    )
    assert status.returncode == 0 and json.loads(status.stdout)["pid"] == server.pid

    stopped = opencode(folder, workspace, "serve", "--stop")
    assert (stopped.returncode, stopped.stdout) == (0, f"opencode: stopped the server (pid {server.pid})\n")
    assert server.wait(timeout=RUN_TIMEOUT) == 0 and not sock.exists()
    after = opencode(folder, workspace, "serve", "--status")
    assert (after.returncode, after.stdout) == (1, f"opencode: no server is running on {sock}\n")


def test_a_stale_socket_is_replaced_and_p_runs_in_process_meanwhile(folder: Path, workspace: Path, tmp_path: Path):
    sock = socket_of(folder)
    sock.parent.mkdir(mode=0o700)
    leftover = socket.socket(socket.AF_UNIX)
    leftover.bind(str(sock))  # bound, never listening: what a killed server leaves
    leftover.close()
    model = scripted(tmp_path, [{"steps": [{"toolCalls": [NOTE]}, {"text": "noted"}]}])

    alone = opencode(folder, workspace, "-p", "note it", "--model", model, "--yes")
    (workspace / "note.txt").unlink()
    process = start_server(folder)
    try:
        attached = opencode(folder, workspace, "-p", "note it", "--model", model, "--yes", "--attach")
    finally:
        stop_server(process)

    assert (alone.returncode, alone.stdout) == (0, "noted\n")
    assert (attached.returncode, attached.stdout, attached.stderr) == (0, "noted\n", "→ write note.txt\n")


def test_the_server_exits_when_idle_as_the_user_config_says(folder: Path):
    home = folder / "home"
    home.mkdir()
    (home / ".opencode.json").write_text(json.dumps({"serve": {"idleTimeout": 0.001}}))

    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"], cwd=REPO, env=clean_env(folder),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip

    assert run.returncode == 0 and run.stderr.startswith(f"opencode: serving on {socket_of(folder)}")
    assert not socket_of(folder).exists()


def test_p_with_attach_and_no_server_is_a_usage_error(folder: Path, workspace: Path):
    run = opencode(folder, workspace, "-p", "hello", "--attach")
    assert run.returncode == 2
    assert run.stderr == (
        f"opencode: error: no opencode server is listening on {socket_of(folder)}: start one with 'opencode serve'\n"
    )


def test_a_folder_others_may_enter_is_refused_by_server_and_client(folder: Path, workspace: Path):
    (folder / "opencode").mkdir()
    os.chmod(folder / "opencode", 0o777)
    (folder / "opencode" / "serve.sock").touch()
    line = f"opencode: error: {folder / 'opencode'} is open to other users (mode 777): run chmod 700 on it\n"

    serve = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"], cwd=REPO, env=clean_env(folder),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    client = opencode(folder, workspace, "-p", "hello")

    assert (serve.returncode, serve.stderr) == (2, line)
    assert (client.returncode, client.stderr) == (2, line)


@pytest.mark.skipif(os.getuid() != 0, reason="dropping to another uid (nobody) needs root")
def test_another_user_cannot_complete_a_connection(folder: Path, server):
    sock = socket_of(folder)
    nobody = pwd.getpwnam("nobody")

    assert as_user(nobody, sock) == "PermissionError"  # the 0700 folder keeps them out
    for above in (folder, sock.parent):  # a careless chmod: the socket is reachable now...
        os.chmod(above, 0o711)
    os.chmod(sock, 0o666)
    assert as_user(nobody, sock) == "closed, nothing served"  # ...and the peer uid check holds


def as_user(user: pwd.struct_passwd, path: Path) -> str:
    """Fork, become ``user``, connect to ``path`` and send an initialize request; what happened."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only system calls, then _exit
        outcome = "error"
        try:
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(str(path))
                answer = received_after(sock, INITIALIZE.encode())
            outcome = "closed, nothing served" if answer == b"" else f"served: {answer[:80]!r}"
        except OSError as error:
            outcome = type(error).__name__
        finally:
            os.write(write_end, outcome.encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        outcome = pipe.read().decode()
    os.waitpid(pid, 0)
    return outcome


def test_tcp_serves_only_a_connection_that_sends_the_token_first(folder: Path, workspace: Path):
    process = start_server(folder, "--listen", "127.0.0.1:0")
    try:
        status = json.loads(opencode(folder, workspace, "serve", "--status").stdout)
        host, port = status["tcp"].rsplit(":", 1)
        token_file = socket_of(folder).parent / "serve.token"
        token = token_file.read_text().strip()

        def over_tcp(*lines: bytes) -> bytes:
            with socket.create_connection((host, int(port)), timeout=RUN_TIMEOUT) as sock:
                return received_after(sock, *lines)

        no_token = over_tcp(INITIALIZE.encode())
        wrong_token = over_tcp(b"not-the-token\n", INITIALIZE.encode())
        with_token = over_tcp(token.encode() + b"\n", INITIALIZE.encode())
    finally:
        stop_server(process)

    assert mode(token_file.parent) == 0o700 and not token_file.exists()  # removed when the server ends
    assert no_token == b"" and wrong_token == b""
    assert json.loads(with_token)["result"]["protocolVersion"] == 1


def test_tcp_listens_on_loopback_only(folder: Path):
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--listen", "0.0.0.0:4096"], cwd=REPO, env=clean_env(folder),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr == (
        "opencode: error: --listen 0.0.0.0:4096: only loopback addresses (127.0.0.1, ::1) are served: "
        "tunnel over SSH for remote use\n"
    )


def test_the_attached_client_imports_neither_litellm_nor_textual(warm: Path, workspace: Path, tmp_path):
    model = scripted(tmp_path, [{"steps": [{"toolCalls": [NOTE]}, {"text": "noted"}]}])
    program = (
        "import json, sys\n"
        "from app.cli import main\n"
        f"code = main(['-C', {str(workspace)!r}, '-p', 'note it', '--model', {model!r}, '--yes', '--attach'])\n"
        "heavy = sorted({name.split('.')[0] for name in sys.modules} & {'litellm', 'textual', 'acp', 'app.llm.agent'})\n"
        "print(json.dumps([code, heavy]), file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO, env=clean_env(warm), capture_output=True, text=True,
        timeout=RUN_TIMEOUT,
    )  # fmt: skip

    assert json.loads(run.stderr.splitlines()[-1]) == [0, []], run.stderr
    assert run.stdout == "noted\n" and (workspace / "note.txt").read_text() == "served\n"


@pytest.mark.usefixtures("interruptible")
def test_ctrl_c_cancels_the_turn_on_the_server(warm: Path, workspace: Path, tmp_path: Path):
    client, model = endless_turn(warm, workspace, tmp_path)

    client.send_signal(signal.SIGINT)
    out, err = client.communicate(timeout=RUN_TIMEOUT)
    after = opencode(warm, workspace, "-p", "next", "--model", model, "--continue", "--attach")

    assert (client.returncode, out, err) == (130, "", INTERRUPTED_LINE + "\n")
    assert (after.returncode, after.stdout) == (0, "here\n")  # the session is idle again: the turn ended


def test_a_client_that_dies_has_its_turn_cancelled_on_the_server(warm: Path, workspace: Path, tmp_path):
    client, model = endless_turn(warm, workspace, tmp_path)

    client.kill()
    client.communicate(timeout=RUN_TIMEOUT)
    after = opencode(warm, workspace, "-p", "next", "--model", model, "--continue", "--attach")

    assert (after.returncode, after.stdout) == (0, "here\n")  # not "is already running a turn"


def test_a_socket_path_too_long_is_refused_in_one_line(tmp_path: Path):
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve"], cwd=REPO, env=clean_env(deep),
        capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr == (
        f"opencode: error: the socket path {deep / 'opencode' / 'serve.sock'} is too long for a Unix socket: "
        "set XDG_RUNTIME_DIR to a shorter folder\n"
    )


def test_a_rule_added_between_two_runs_holds_for_the_next(warm: Path, workspace: Path, tmp_path: Path):
    """The server keeps each workspace warm, but reads its configuration again once a file
    of it has changed: a deny rule saved after one run holds for the next, as in-process."""
    model = scripted(tmp_path, [{"steps": [{"toolCalls": [NOTE]}, {"text": "done"}]}])
    first = opencode(warm, workspace, "-p", "note it", "--model", model, "--yes", "--attach")
    (workspace / "note.txt").unlink()
    (workspace / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"write": {"*": "deny"}}}}))

    second = opencode(warm, workspace, "-p", "note it", "--model", model, "--yes", "--attach")

    assert (first.returncode, first.stderr) == (0, "→ write note.txt\n")
    assert second.returncode == 0 and "the rules forbid write" in second.stderr
    assert not (workspace / "note.txt").exists()


def test_an_agent_file_added_after_the_server_started_is_seen_with_its_notices(
    warm: Path, workspace: Path, tmp_path: Path
):
    """Agent files are read again once one was added or changed, as the configuration is:
    the next attached run may name the new agent, and hears why a broken one was left out."""
    model = scripted(tmp_path, [{"steps": [{"text": "done"}]}])
    first = opencode(warm, workspace, "-p", "hello", "--model", model, "--attach")
    agents = workspace / ".opencode" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper2.md").write_text("---\ndescription: helps\nmode: primary\n---\nYou help.\n")
    (agents / "broken.md").write_text("---\nmode: [\n---\nBroken.\n")

    second = opencode(warm, workspace, "-p", "hello", "--model", model, "--attach", "--agent", "helper2")

    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert "broken.md" in second.stderr and "agent" in second.stderr
    assert second.stdout.strip() == "done"
