"""Under Landlock, commands are started by one fork server per opencode process
(app.sandbox.landlock_server): output, exit codes, signals, timeouts, cancellation and
background processes are as for a shell run directly (tests/tools/test_bash.py), and
the server is started again when it is gone and ends when opencode closes its socket.
An interrupted `opencode tool bash` is tested in tests/tools/test_bash.py."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from app.sandbox.landlock_server import LANDLOCK_SERVER, LandlockServer
from app.tools.bash import BashTool
from tests.sandbox.conftest import skip_unless_available
from tests.tools.test_bash import eventually, is_running, live_members


@pytest.fixture
def ctx(sandboxed, repo: Path):
    skip_unless_available("landlock")
    (repo / "work").mkdir()  # Landlock makes no new entry at the root, which holds carve-outs
    runtime = sandboxed("landlock")
    return runtime.context(runtime.store.sessions.create().id)


async def run(ctx, command: str, **params: object):
    result = await BashTool().call({"command": command, **params}, ctx)
    assert result.metadata["sandbox"] == "landlock"
    return result


async def test_output_of_both_streams_and_the_exit_code(ctx):
    result = await run(ctx, "echo out; echo err >&2; cat; exit 3")  # stdin is closed: cat ends at once
    assert result.output.startswith("out\nerr\n")
    assert result.metadata["exit_code"] == 3
    assert result.output.endswith("Exit code: 3")


async def test_a_shell_killed_by_a_signal_says_which(ctx):
    result = await run(ctx, "kill -TERM $$")
    assert result.metadata["exit_code"] == -signal.SIGTERM
    assert "Killed by signal SIGTERM" in result.output


async def test_timeout_kills_the_whole_process_group_and_keeps_the_output(ctx, repo: Path):
    command = "echo before; echo $$ > work/shell.pid; sleep 600 & echo $! > work/child.pid; wait"
    async with asyncio.timeout(60):  # a guard against hanging if the kill misses, not a speed check
        result = await run(ctx, command, timeout=1000)
    assert (result.metadata["timed_out"], result.metadata["exit_code"]) == (True, None)
    assert result.output.startswith("before\n")
    child, group = int((repo / "work/child.pid").read_text()), int((repo / "work/shell.pid").read_text())
    await eventually(lambda: not is_running(child))
    await eventually(lambda: live_members(group) == [])


async def test_cancelling_the_call_kills_the_whole_process_group(ctx, repo: Path):
    task = asyncio.create_task(run(ctx, "echo $$ > work/shell.pid; sleep 60 & echo $! > work/child.pid; wait"))
    child_file = repo / "work/child.pid"
    await eventually(lambda: child_file.exists() and child_file.read_text().strip() != "")
    group, child = int((repo / "work/shell.pid").read_text()), int(child_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await eventually(lambda: live_members(group) == [])
    assert not is_running(child)


async def test_a_background_process_holding_the_output_does_not_hold_the_call(ctx):
    result = await run(ctx, "sleep 30 & echo $!", timeout=20_000)
    try:
        assert (result.metadata["timed_out"], result.metadata["exit_code"]) == (False, 0)
        assert "a background process still holds the output" in result.output
    finally:
        os.kill(int(result.output.splitlines()[0]), signal.SIGKILL)


async def test_commands_run_side_by_side_each_with_its_own_output(ctx):
    results = await asyncio.gather(*(run(ctx, f"echo call-{n}; exit {n}") for n in range(4)))
    for n, result in enumerate(results):
        assert result.output.startswith(f"call-{n}\n")
        assert result.metadata["exit_code"] == n


async def test_a_server_that_is_gone_is_started_again(ctx):
    await run(ctx, "true")
    server = LANDLOCK_SERVER.pid
    assert server is not None
    os.kill(server, signal.SIGKILL)
    result = await run(ctx, "echo again")
    assert result.output.startswith("again\n")
    assert LANDLOCK_SERVER.pid != server


async def test_the_server_ends_when_opencode_closes_its_socket(ctx, monkeypatch: pytest.MonkeyPatch):
    own = LandlockServer()
    monkeypatch.setattr("app.tools.bash.LANDLOCK_SERVER", own)
    await run(ctx, "true")
    pid = own.pid
    assert pid is not None and is_running(pid)
    own.stop(wait=True)  # waits for the server's exit, which only the socket's close causes
    assert own.pid is None and not is_running(pid)

