"""The main program's side of the Landlock fork server (app/sandbox/landlock_exec.py):
started on the first sandboxed command, one per opencode process, and ended when the
process exits (the server sees its socket close). Each command gets its stdio, a socket
of its own for the request, the pid once the command leads its own process group (what
a timeout or an interrupt kills, as for a shell run directly) and then the exit code.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.child_environment import for_children

SERVER = Path(__file__).with_name("landlock_exec.py")


class ServerStopped(OSError):
    """The fork server could not take the command (it ended, or would not start)."""


@dataclass
class Launched:
    """A command the server started, read as a subprocess transport is: ``pid`` leads
    its process group; ``exit_code`` is known once ``exited`` was called."""

    pid: int
    output: asyncio.ReadTransport
    answers: asyncio.StreamWriter
    exit_code: int | None = None
    waiter: asyncio.Task[None] | None = field(default=None, repr=False)

    def get_pid(self) -> int:
        return self.pid

    def get_returncode(self) -> int | None:
        return self.exit_code

    def close(self) -> None:
        self.output.close()
        self.answers.close()
        if self.waiter is not None:
            self.waiter.cancel()


class LandlockServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._retired: list[subprocess.Popen[bytes]] = []

    def _connection(self) -> socket.socket:
        """The socket to the running server, started (again) when there is none."""
        with self._lock:
            if self._process is None or self._process.poll() is not None or self._control is None:
                if self._control is not None:
                    self._control.close()
                if self._process is not None:
                    self._retired.append(self._process)  # it ends once its commands have
                ours, theirs = socket.socketpair()
                with theirs:
                    self._process = subprocess.Popen(
                        [sys.executable, "-I", "-S", "-B", str(SERVER), str(theirs.fileno())],
                        pass_fds=(theirs.fileno(),),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        start_new_session=True,  # a ^C at the terminal is opencode's to handle, not the server's
                    )
                if self._control is None:
                    atexit.register(self.stop)
                self._control = ours
            return self._control

    def stop(self, *, wait: bool = False) -> None:
        """Close the socket: the server ends once the commands it runs have (as a command
        run directly outlives opencode until it ends). ``wait``: until then."""
        with self._lock:
            if self._control is not None:
                self._control.close()
                self._control = None
            if self._process is not None:
                self._retired.append(self._process)
                self._process = None
            if wait:
                for process in self._retired:
                    process.wait()
                self._retired.clear()

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs (bench/bench_sandbox.py counts its CPU time)."""
        return self._process.pid if self._process is not None else None

    async def launch(
        self,
        protocol: asyncio.Protocol,
        exited: Callable[[], None],
        argv: list[str],
        cwd: Path,
        policy: dict[str, object],
    ) -> Launched:
        """Start ``argv`` in ``cwd`` under ``policy`` (app.sandbox.runner.landlock_policy),
        stdin closed, stdout and stderr into ``protocol``; ``exited`` is called when it ends.
        A server that is gone is started again, and asked again: the command runs only
        once the server has told its pid (app/sandbox/landlock_exec.py)."""
        try:
            return await self._launch(protocol, exited, argv, cwd, policy)
        except ServerStopped:
            self._forget()
        return await self._launch(protocol, exited, argv, cwd, policy)

    def _forget(self) -> None:
        with self._lock:
            if self._control is not None:
                self._control.close()
            self._control = None

    async def _launch(
        self, protocol: asyncio.Protocol, exited: Callable[[], None], argv: list[str], cwd: Path, policy: dict[str, object]
    ) -> Launched:
        read_end, write_end = os.pipe()
        ours, theirs = socket.socketpair()
        try:
            with open(os.devnull, "rb") as stdin, theirs:
                socket.send_fds(self._connection(), [b"r"], [stdin.fileno(), write_end, write_end, theirs.fileno()])
            reader, writer = await asyncio.open_unix_connection(sock=ours)
            env = {**for_children(), **policy.get("env", {})}  # type: ignore[dict-item]
            request = json.dumps({"argv": argv, "cwd": str(cwd), "env": env, "policy": policy}).encode()
            writer.write(len(request).to_bytes(4, "big") + request)
            await writer.drain()
            answer = await reader.readline()
        except OSError as err:
            os.close(read_end)
            ours.close()
            raise ServerStopped(err.errno, f"the Landlock sandbox server is not running ({err.strerror})") from None
        finally:
            os.close(write_end)
        if not answer:
            os.close(read_end)
            writer.close()
            raise ServerStopped(0, "the Landlock sandbox server ended before starting the command")
        output, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: protocol, os.fdopen(read_end, "rb", buffering=0)
        )
        launched = Launched(int(answer), output, writer)

        async def wait_for_exit() -> None:
            line = await reader.readline()
            # No answer: the server was killed, and with it the command's parent.
            launched.exit_code = int(line) if line else -signal.SIGKILL
            exited()

        launched.waiter = asyncio.create_task(wait_for_exit())
        return launched


LANDLOCK_SERVER = LandlockServer()
