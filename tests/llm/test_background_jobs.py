"""Background jobs of bash (app/tools/jobs.py): a real server started by the model
through the real loop on the fake OpenAI server, real process groups, and a real
`opencode tool` process whose job must not outlive it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from app.llm.agent import AgentLoop
from app.llm.provider import Provider
from app.tools.jobs import RING_CHARS
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.waiting import eventually, wait_until

REPO = Path(__file__).resolve().parents[2]


def call(name: str, call_id: str, **arguments: object) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), id=call_id)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def result_of(runtime, session_id: str, call_id: str) -> dict:
    for message in runtime.store.messages.list(session_id):
        for part in message.parts:
            if part.get("type") == "tool_result" and part.get("call_id") == call_id:
                return part
    raise AssertionError(f"no result for {call_id}")


async def test_a_server_runs_in_the_background_while_the_turn_goes_on(make_runtime, fake_llm: FakeOpenAI):
    runtime = make_runtime()
    session_id = runtime.store.sessions.create(title="jobs").id
    port = free_port()
    fake_llm.reply(call("bash", "start", command=f"python3 -m http.server {port} --bind 127.0.0.1", background=True))
    fake_llm.reply(call("bash", "next", command="echo still here"))
    fake_llm.reply(Text("started"))
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env=fake_llm.env)

    result = await loop.run(session_id, "start the server", model=fake_llm.model)

    assert result.reason == "stop", result.error
    started = result_of(runtime, session_id, "start")
    assert "Started in the background as job 1" in started["output"]
    pgid = started["metadata"]["pgid"]
    assert "still here" in result_of(runtime, session_id, "next")["output"]  # ran while the server lives
    assert not group_gone(pgid)

    wait_until(lambda: _answers(port), 30, "the server answering")
    fake_llm.reply(call("bash_output", "read", job_id=1))
    fake_llm.reply(call("bash_kill", "stop", job_id=1))
    fake_llm.reply(Text("stopped"))
    await loop.run(session_id, "read it, then stop it", model=fake_llm.model)
    output = result_of(runtime, session_id, "read")["output"]
    assert '"GET / HTTP/1.1" 200' in output and output.endswith("running.")
    stopped = result_of(runtime, session_id, "stop")["output"]
    assert stopped.endswith("killed by signal SIGKILL.")
    wait_until(lambda: group_gone(pgid), 30, "the job's process group gone")


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


async def test_a_job_of_another_session_is_not_reachable(make_runtime):
    runtime = make_runtime()
    mine, other = (runtime.store.sessions.create(title=t).id for t in ("mine", "other"))
    from app.tools.bash import BashTool
    from app.tools.bash_background import BashOutputTool

    started = await BashTool().call({"command": "sleep 30", "background": True}, runtime.context(mine))
    assert started.metadata["job_id"] == 1
    with pytest.raises(Exception, match=r"no background job 1 in this session \(its jobs: none\)"):
        await BashOutputTool().call({"job_id": 1}, runtime.context(other))
    runtime.close()
    wait_until(lambda: group_gone(started.metadata["pgid"]), 30, "the job killed with its runtime")


async def test_a_trailing_ampersand_is_a_background_job_and_output_is_bounded(make_runtime):
    runtime = make_runtime()
    session_id = runtime.store.sessions.create(title="jobs").id
    from app.tools.bash import BashTool
    from app.tools.bash_background import BashOutputTool

    size = 3 * RING_CHARS
    started = await BashTool().call(
        {"command": f"python3 -c \"print('x' * {size})\" &"}, runtime.context(session_id)
    )
    job = runtime.jobs.get(session_id, started.metadata["job_id"])
    await job.done.wait()
    read = await BashOutputTool().call({"job_id": job.id}, runtime.context(session_id))
    assert f"characters only in {job.log}" in read.output and "exited with code 0" in read.output
    assert len(job.output.ring) == RING_CHARS and job.log.stat().st_size == size + 1  # the whole output, in the log
    again = await BashOutputTool().call({"job_id": job.id}, runtime.context(session_id))
    assert again.output.startswith("(no new output)")


def test_no_process_of_a_job_outlives_the_opencode_process(workspace: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    arguments = json.dumps({"command": "sleep 300 & sleep 300; wait", "background": True})
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "tool", "bash", arguments, "--yes"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pgid = json.loads(done.stdout)["metadata"]["pgid"]
    wait_until(lambda: group_gone(pgid), 30, "every process of the job gone")


async def test_jobs_lists_and_stops(make_runtime):
    """/jobs through its handler, as every front-end runs it."""
    from app.llm.scripted import ProviderPerModel
    from app.prompt.session_commands import jobs
    from app.prompt.slash_commands import CommandCall
    from app.tools.bash import BashTool

    runtime = make_runtime()
    session_id = runtime.store.sessions.create(title="jobs").id
    loop = AgentLoop(runtime, ProviderPerModel())
    assert await jobs(CommandCall(loop, session_id, "")) == "No background jobs in this session"

    started = await BashTool().call({"command": "echo ready; sleep 300", "background": True}, runtime.context(session_id))
    job = runtime.jobs.get(session_id, started.metadata["job_id"])
    await eventually(lambda: job.output.written, what="the job's first line")  # before listing
    listed = await jobs(CommandCall(loop, session_id, ""))
    assert listed.splitlines()[:2] == ["1. echo ready; sleep 300: running", "     ready"]
    stopped = await jobs(CommandCall(loop, session_id, "stop 1"))
    assert stopped == "Job 1 (echo ready; sleep 300): killed by signal SIGKILL"
