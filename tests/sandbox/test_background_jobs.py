"""Background jobs run in the sandbox as any bash call (app/tools/jobs.py): under
bubblewrap and under Landlock, a job's program the judge cannot see into cannot write a
denied file, and stopping the job, or closing the runtime, leaves no process of it
(each process is found by a word of its command line only it has)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from app.tools.bash import BashTool
from app.tools.bash_background import BashKillTool, BashOutputTool
from tests.sandbox.conftest import SECRET
from tests.waiting import wait_until


def processes_with(word: str) -> list[int]:
    """The pids whose command line holds ``word`` (inside a sandbox's own pid namespace too)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            arguments = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile
        if word.encode() in arguments:
            found.append(int(entry.name))
    return found


def unique_seconds() -> str:
    """A sleep's argument no other process on the machine has."""
    return f"3000.{uuid.uuid4().int % 10**9:09d}"


async def test_a_background_job_cannot_write_a_denied_file(mechanism, sandboxed, repo: Path):
    runtime = sandboxed(mechanism)
    ctx = runtime.context(runtime.store.sessions.create().id)
    command = "python3 -c 'open(\"secrets/key.txt\", \"w\").write(\"pwned\")'"

    started = await BashTool().call({"command": command, "background": True}, ctx)

    assert started.metadata["sandbox"] == mechanism, started.output
    await runtime.jobs.get(ctx.session_id, started.metadata["job_id"]).done.wait()
    read = await BashOutputTool().call({"job_id": started.metadata["job_id"]}, ctx)
    assert (repo / "secrets/key.txt").read_text() == SECRET, read.output
    assert 'Sandbox: it refused writing secrets/key.txt: edit rule "secrets/*"' in read.output, read.output
    assert read.output.endswith("exited with code 1."), read.output


async def test_stopping_a_sandboxed_job_leaves_none_of_its_processes(mechanism, sandboxed, repo: Path):
    runtime = sandboxed(mechanism)
    ctx = runtime.context(runtime.store.sessions.create().id)
    seconds = unique_seconds()
    started = await BashTool().call({"command": f"sleep {seconds} & sleep {seconds}; wait", "background": True}, ctx)
    wait_until(lambda: len(processes_with(seconds)) == 2, 30, "both sleeps of the job running")
    assert (repo / ".opencode.json").is_dir() == (mechanism == "bwrap")  # its mount's placeholder, while it runs

    stopped = await BashKillTool().call({"job_id": started.metadata["job_id"]}, ctx)

    assert stopped.output.endswith("killed by signal SIGKILL."), stopped.output
    wait_until(lambda: not processes_with(seconds), 30, "every process of the job gone")
    assert not (repo / ".opencode.json").exists()  # bwrap's placeholder went with the job


async def test_closing_the_runtime_ends_its_sandboxed_jobs(mechanism, sandboxed, repo: Path):
    runtime = sandboxed(mechanism)
    ctx = runtime.context(runtime.store.sessions.create().id)
    seconds = unique_seconds()
    await BashTool().call({"command": f"sleep {seconds} & sleep {seconds}; wait", "background": True}, ctx)
    wait_until(lambda: len(processes_with(seconds)) == 2, 30, "both sleeps of the job running")

    runtime.close()

    wait_until(lambda: not processes_with(seconds), 30, "every process of the job gone")
    assert not (repo / ".opencode.json").exists()
