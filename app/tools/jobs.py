"""Background jobs: commands the bash tool started with ``background: true`` (or a
trailing ``&``), which run while the turn goes on (docs/tools.md, "Background jobs").

Each job is its own process group (a new session), so stopping it kills the shell and
everything it started. Its output (stdout and stderr merged) goes whole to a log file
under the data folder (``jobs/<session>-<id>.log``), and the last ``RING_CHARS``
characters stay in memory for ``bash_output``, which returns what came since its last
read. The table belongs to the runtime: ``close`` (the runtime's, and at the
interpreter's exit) kills every job still running, so none outlives its opencode.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from app.child_environment import for_children
from app.errors import ToolError

RING_CHARS = 64_000
"""Output of a job kept in memory; what is older is only in its log file."""


@dataclass
class Job:
    id: int
    session_id: str
    command: str
    pgid: int
    log: Path
    process: asyncio.subprocess.Process
    ring: str = ""
    written: int = 0
    """Characters of output so far (in the log: the ring holds the last of them)."""
    read: int = 0
    """Characters ``bash_output`` has returned."""
    exit_code: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def running(self) -> bool:
        return self.exit_code is None

    def status(self) -> str:
        if self.running:
            return "running"
        code = self.exit_code
        assert code is not None
        return f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"

    def last_lines(self, count: int = 3) -> list[str]:
        return self.ring.rstrip("\n").splitlines()[-count:]


class JobTable:
    """The background jobs of one runtime (every session's, each job knowing its own)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._jobs: dict[int, Job] = {}
        self._readers: set[asyncio.Task[None]] = set()
        self._exit_hook = False

    async def start(self, shell: Callable[[Path], list[str]], cwd: Path, session_id: str, command: str) -> Job:
        """Start ``command`` in its own process group, stdin closed; returns at once. The
        command is the script ``shell(script)`` runs, kept beside the log until it ends."""
        self._folder.mkdir(parents=True, exist_ok=True)
        number = len(self._jobs) + 1
        log = self._folder / f"{session_id}-{number}.log"
        script = log.with_suffix(".sh")
        script.write_text(command, encoding="utf-8")
        script.chmod(0o600)
        argv = shell(script)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=for_children(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        except OSError as err:
            script.unlink(missing_ok=True)
            raise ToolError(f"bash: could not start the shell {argv[0]}: {err.strerror or err}") from None
        job = Job(number, session_id, command, process.pid, log, process)
        self._jobs[number] = job
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True
        reader = asyncio.get_running_loop().create_task(self._follow(job))
        self._readers.add(reader)
        reader.add_done_callback(self._readers.discard)
        return job

    async def _follow(self, job: Job) -> None:
        """Copy the job's output to its log and its ring until it ends."""
        assert job.process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with job.log.open("w", encoding="utf-8") as log:
            while chunk := await job.process.stdout.read(65536):
                self._append(job, decoder.decode(chunk), log)
            self._append(job, decoder.decode(b"", final=True), log)
        job.exit_code = await job.process.wait()
        job.log.with_suffix(".sh").unlink(missing_ok=True)
        job.done.set()

    @staticmethod
    def _append(job: Job, text: str, log: IO[str]) -> None:
        log.write(text)
        log.flush()
        job.ring = (job.ring + text)[-RING_CHARS:]
        job.written += len(text)

    def get(self, session_id: str, job_id: int) -> Job:
        job = self._jobs.get(job_id)
        if job is None or job.session_id != session_id:
            listed = ", ".join(str(each.id) for each in self.of(session_id)) or "none"
            raise ToolError(f"no background job {job_id} in this session (its jobs: {listed})")
        return job

    def of(self, session_id: str) -> list[Job]:
        return [job for job in self._jobs.values() if job.session_id == session_id]

    def new_output(self, job: Job) -> str:
        """What the job printed since the last call (a note for what only the log holds)."""
        unread = job.written - job.read
        job.read = job.written
        if unread <= len(job.ring):
            return job.ring[len(job.ring) - unread :] if unread else ""
        lost = unread - len(job.ring)
        return f"... {lost} characters only in {job.log} ...\n{job.ring}"

    async def kill(self, job: Job) -> None:
        """SIGKILL the job's whole process group and wait for it to be reaped."""
        from app.tools.bash import kill_process_group

        kill_process_group(job.pgid)
        await job.done.wait()

    def close(self) -> None:
        """Kill every job still running: nothing outlives the process that started it."""
        running = [job for job in self._jobs.values() if job.running]
        if not running:
            return  # (and bash's module is not loaded for nothing: `opencode tool` is timed whole)
        from app.tools.bash import kill_process_group

        for job in running:
            kill_process_group(job.pgid)


