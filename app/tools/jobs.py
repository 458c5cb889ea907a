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
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import ToolError

if TYPE_CHECKING:
    from app.sandbox.landlock_server import Launched
    from app.tools.bash import ShellLaunch, ShellProtocol

RING_CHARS = 64_000
"""Output of a job kept in memory; what is older is only in its log file."""


class JobOutput:
    """What a job printed: all of it in its log file, the last ``RING_CHARS`` characters
    in memory, and how much of it ``bash_output`` has returned."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self._file = log.open("w", encoding="utf-8")
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.ring = ""
        self.written = 0
        """Characters of output so far (in the log: the ring holds the last of them)."""
        self.read = 0
        """Characters ``bash_output`` has returned."""

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if not self._file.closed:
            self._file.write(text)
            self._file.flush()
        self.ring = (self.ring + text)[-RING_CHARS:]
        self.written += len(text)
        if final:
            self._file.close()

    def unread(self) -> str:
        """What came since the last call (a note for what only the log holds)."""
        unread = self.written - self.read
        self.read = self.written
        if unread <= len(self.ring):
            return self.ring[len(self.ring) - unread :] if unread else ""
        lost = unread - len(self.ring)
        return f"... {lost} characters only in {self.log} ...\n{self.ring}"

    def last_lines(self, count: int = 3) -> list[str]:
        return self.ring.rstrip("\n").splitlines()[-count:]


@dataclass
class Job:
    id: int
    session_id: str
    command: str
    output: JobOutput
    launch: ShellLaunch
    """How its shell was started: in which sandbox, under which policy."""
    transport: asyncio.SubprocessTransport | Launched
    held: contextlib.ExitStack
    """What the sandbox keeps on disk until the job ends (bwrap's placeholders)."""
    exit_code: int | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def pgid(self) -> int:
        """The job's process group: its shell leads it (under bwrap, bwrap does, and the
        sandbox's processes end with it)."""
        return self.transport.get_pid()

    @property
    def log(self) -> Path:
        return self.output.log

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
        return self.output.last_lines(count)


class JobTable:
    """The background jobs of one runtime (every session's, each job knowing its own)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._jobs: dict[int, Job] = {}
        self._readers: set[asyncio.Task[None]] = set()
        self._exit_hook = False

    async def start(self, launch: Callable[[Path], ShellLaunch], cwd: Path, session_id: str, command: str) -> Job:
        """Start ``command`` (judged already) in its own process group, stdin closed, as
        ``launch(script)`` says (sandboxed as any bash call); returns at once. The
        command is the script its shell runs, kept beside the log until the job ends."""
        from app.tools.bash import ShellProtocol, start_shell

        self._folder.mkdir(parents=True, exist_ok=True)
        number = len(self._jobs) + 1
        log = self._folder / f"{session_id}-{number}.log"
        script = log.with_suffix(".sh")
        script.write_text(command, encoding="utf-8")
        script.chmod(0o600)
        with contextlib.ExitStack() as held:
            held.callback(script.unlink, missing_ok=True)
            how = launch(script)
            output = JobOutput(log)
            held.callback(output.feed, b"", final=True)  # closes the log file
            held.enter_context(how.holding())
            protocol = ShellProtocol(output)
            transport = await start_shell(protocol, how.argv, cwd, how.landlock)
            job = Job(number, session_id, command, output, how, transport, held.pop_all())
        self._jobs[number] = job
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True
        reader = asyncio.get_running_loop().create_task(self._follow(job, protocol))
        self._readers.add(reader)
        reader.add_done_callback(self._readers.discard)
        return job

    @staticmethod
    async def _follow(job: Job, protocol: ShellProtocol) -> None:
        """Wait until the job has ended: its shell exited and its output closed (no
        process of it holds the output any more)."""
        await protocol.exited.wait()
        await protocol.output_closed.wait()
        job.exit_code = job.launch.exit_code(job.transport.get_returncode())
        job.transport.close()
        job.held.close()
        job.done.set()

    def get(self, session_id: str, job_id: int) -> Job:
        job = self._jobs.get(job_id)
        if job is None or job.session_id != session_id:
            listed = ", ".join(str(each.id) for each in self.of(session_id)) or "none"
            raise ToolError(f"no background job {job_id} in this session (its jobs: {listed})")
        return job

    def of(self, session_id: str) -> list[Job]:
        return [job for job in self._jobs.values() if job.session_id == session_id]

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
            job.held.close()
