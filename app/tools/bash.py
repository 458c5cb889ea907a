"""The bash tool: run a shell command in the workspace, with a timeout, a capped output,
and a permission check that judges every part of a compound command.

The command runs in its own process group (a new session), so a timeout or a cancelled
turn kills everything it started, not only the shell. It does not go through the change
path: the tool cannot know which files a command touches, so nothing is recorded in history.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Protocol

from pydantic import Field

from app.core.child_environment import for_children
from app.core.errors import PermissionDeniedError, ToolError
from app.core.shelter import sheltered
from app.permission import PermissionPreview
from app.permission.effects import protected_roots
from app.permission.hook_decision import current_hook_decision
from app.permission.shell.judge import CommandJudge, Verdict, one_line
from app.permission.shell.sandbox_plan import BashPlan, plan
from app.sandbox.landlock_server import LANDLOCK_SERVER, Launched, ServerStopped
from app.sandbox.mechanisms import Mechanism
from app.sandbox.policy import SandboxPolicy
from app.sandbox.refusals import refusal_note
from app.sandbox.runner import landlock_policy, placeholders, sandboxed_argv
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description

MAX_OUTPUT_CHARS = 30_000
# After the shell exits, how long to wait for the output still in the pipe. A background
# process (`server &`) that keeps the pipe open is left running; its later output is lost.
_DRAIN_SECONDS = 0.5
_DEFAULT_SHELL = "/bin/bash"


class BashParams(ToolParams):
    command: str = Field(min_length=1, description="The shell command line to run in the workspace root")
    timeout: int | None = Field(
        None,
        gt=0,
        description="Timeout in milliseconds (default 120000; at most 600000, larger values are lowered to it)",
    )
    description: str | None = Field(
        None, description="A few words saying what the command does, e.g. 'Run the unit tests'"
    )
    sandbox: bool = Field(
        True,
        description="false asks the user to run the command outside the sandbox (only when the sandbox "
        "refused something the command needs: the network, a write outside the workspace)",
    )
    background: bool = Field(
        False, description="Run it as a background job and return at once with its id (a server, a watcher)"
    )


class OutputCapture:
    """Keeps the first and the last ``limit // 2`` characters of output of any length, and
    counts the characters in between, so a command printing gigabytes costs no memory."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self._half = limit // 2
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = ""
        self._tail = ""
        self.omitted = 0

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        room = self._half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        tail = self._tail + text
        if len(tail) > self._half:
            self.omitted += len(tail) - self._half
            tail = tail[-self._half :]
        self._tail = tail

    def text(self) -> str:
        if not self.omitted:
            return self._head + self._tail
        return f"{self._head}\n\n... {self.omitted} characters omitted ...\n\n{self._tail}"


@dataclass(frozen=True)
class ShellOutcome:
    """How a command ended. ``exit_code`` is negative when a signal killed the shell
    (-9: SIGKILL); ``detached`` is True when a background process still held the output."""

    output: str
    omitted: int
    exit_code: int | None
    timed_out: bool
    detached: bool
    duration_ms: int


class OutputSink(Protocol):
    def feed(self, data: bytes, *, final: bool = False) -> None: ...


class ShellProtocol(asyncio.SubprocessProtocol, asyncio.Protocol):
    """Feeds the output to ``sink`` (an OutputCapture, a background job's log), and tells
    apart the shell's exit from the end of its output: a background child (`server &`)
    may hold the pipe long after the exit. The output comes from a subprocess transport,
    or (a command the Landlock server started) from the read end of its pipe."""

    def __init__(self, sink: OutputSink) -> None:
        self.sink = sink
        self.exited = asyncio.Event()
        self.output_closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.sink.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.sink.feed(b"", final=True)
        self.output_closed.set()

    def data_received(self, data: bytes) -> None:
        self.pipe_data_received(1, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe_connection_lost(1, exc)

    def process_exited(self) -> None:
        self.exited.set()


async def run_shell(argv: list[str], cwd: Path, timeout_s: float, landlock: dict[str, object] | None = None) -> ShellOutcome:
    """Run ``argv`` in its own process group with stdin closed, stderr merged into stdout.
    On timeout, or when the calling task is cancelled, the whole group is killed.
    ``landlock``: the Landlock policy it runs under (app.sandbox.runner.landlock_policy),
    started by the fork server (app.sandbox.landlock_server)."""
    started = time.monotonic()
    capture = OutputCapture()
    protocol = ShellProtocol(capture)
    transport = await start_shell(protocol, argv, cwd, landlock)
    pgid = transport.get_pid()
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_s):
                await protocol.exited.wait()
        except TimeoutError:
            timed_out = True
            kill_process_group(pgid)
            await protocol.exited.wait()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_SECONDS):
                await protocol.output_closed.wait()
    finally:
        await stop_shell(transport, protocol)  # cancelled while running: nothing of it goes on
    return ShellOutcome(
        output=capture.text(),
        omitted=capture.omitted,
        exit_code=None if timed_out else transport.get_returncode(),
        timed_out=timed_out,
        detached=not protocol.output_closed.is_set(),
        duration_ms=round((time.monotonic() - started) * 1000),
    )


async def start_shell(
    protocol: ShellProtocol, argv: list[str], cwd: Path, landlock: dict[str, object] | None = None
) -> asyncio.SubprocessTransport | Launched:
    """Start ``argv`` in ``cwd`` as the leader of a process group of its own, stdin closed,
    stdout and stderr into ``protocol``, which hears when it exits. ``landlock``: the
    policy the Landlock fork server starts it under; None starts it directly.
    Cancelled while it starts, the start still completes, then the group is killed
    (app.core.shelter says why)."""
    return await sheltered(_launch(protocol, argv, cwd, landlock), partial(stop_shell, protocol=protocol))


async def stop_shell(transport: asyncio.SubprocessTransport | Launched, protocol: ShellProtocol) -> None:
    """Kill the group of a shell still running and reap it, then close its transport.
    Reaped before returning, so that the loop may close next (opencode tool interrupted by
    ^C): otherwise asyncio warns that the loop handling its pid is closed."""
    if transport.get_returncode() is None:
        kill_process_group(transport.get_pid())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_SECONDS):
                await protocol.exited.wait()
    transport.close()


async def _launch(
    protocol: ShellProtocol, argv: list[str], cwd: Path, landlock: dict[str, object] | None
) -> asyncio.SubprocessTransport | Launched:
    try:
        if landlock is not None:
            return await LANDLOCK_SERVER.launch(protocol, protocol.process_exited, argv, cwd, landlock)
        transport, _ = await asyncio.get_running_loop().subprocess_exec(
            lambda: protocol,
            *argv,
            cwd=cwd,
            env=for_children(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return transport
    except ServerStopped as err:
        raise ToolError(f"bash: {err.strerror}; run the command again (the server restarts)") from None
    except OSError as err:
        raise no_shell(argv[0], err.strerror or str(err)) from None


def no_shell(shell: str, why: str) -> ToolError:
    return ToolError(f"bash: could not start the shell {shell}: {why}; set shell.path in .opencode.json to an installed shell")


def kill_process_group(pgid: int) -> None:
    """SIGKILL every process of the group: the shell and all it started (unless one of
    them moved itself to a new session, which no one can follow)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def authorize(ctx: ToolContext, command: str, title: str, *, sandbox: bool = True) -> BashPlan:
    """Refuse what the judge denies; run unasked what it allows (and, in the sandbox, what
    it asks about only because it cannot know what a program does: app.permission.shell.sandbox_plan);
    otherwise ask once about the whole command: a rule allowing the whole string (`git *`
    matches `git log; rm -rf src`) must not skip the question. A command whose program
    cannot be known, where a deny the sandbox does not hold could apply, and a command to
    run outside the sandbox, are asked of a person: --yes does not answer them.
    An answer for the session holds for this same command reaching no more than it did
    (its parts depend on each other: never for a part alone, or one after another `cd`),
    and never for running outside the sandbox. Returns how the command runs.
    Judging is pure CPU work over the whole command: it runs in a worker thread, so the
    event loop (a TUI's screen and keys) goes on while a long command is read."""
    judge = CommandJudge(
        ctx.permissions, ctx.workspace, ctx.agent, ctx.config.tools.bash.banned_commands, ctx.session_id,
        protected_roots(ctx.config.data.directory, ctx.workspace.root.as_posix()), ctx.history.changed_by_agent,
    )
    verdict = await asyncio.to_thread(judge.verdict, command)
    decided = plan(judge, verdict, command, ctx.config, ctx.session_id, sandbox=sandbox)
    if decided.refusal is not None:
        raise PermissionDeniedError(decided.refusal)
    if decided.action == "allow" and current_hook_decision() != "ask":  # a PreToolUse hook may ask anyway
        return decided
    await ctx.permissions.check(
        ctx.session_id,
        "bash",
        command,
        ctx.agent,
        title,
        PermissionPreview(kind="command", text=command),
        ask_anyway=True,
        person_only=decided.person_only,
        effects=verdict.effects,
        scope=f"{decided.scope}: {command}" if decided.scope else command,
    )
    if ctx.permissions.policy == "interactive":
        _refuse_changed_while_asked(await asyncio.to_thread(judge.verdict, command), verdict)
    return decided


def _refuse_changed_while_asked(now: Verdict, asked: Verdict) -> None:
    """While a person read the question, the scripts the command runs, the programs its
    paths lead to and the files its globs match may have changed (another call, another
    process, an editor): what it does now must still be what the question covered, and
    nothing a rule denies."""
    if now.refusal is not None:
        raise PermissionDeniedError(f"{now.refusal} (it changed while the question was open)")
    shown = set(asked.effects)
    new = [effect for effect in now.effects if effect not in shown]
    if new:
        raise PermissionDeniedError(
            f"bash: what the command does changed while the question was open ({new[0]} was not in it), "
            "so nothing was run: call it again to be asked about what it does now"
        )


def check_command(command: str) -> None:
    """Refuse what no shell can be given, before anything is parsed, asked or run."""
    if not command.strip():
        raise ToolError("bash: command is empty: give the shell command to run")
    if "\0" in command:
        raise ToolError("bash: command contains a NUL character, which no command line can hold: remove it")


def shell_argv(ctx: ToolContext, script: Path) -> list[str]:
    shell = ctx.config.shell.path or os.environ.get("SHELL") or _DEFAULT_SHELL
    return [shell, *ctx.config.shell.args, str(script)]


@contextlib.contextmanager
def command_file(command: str) -> Iterator[Path]:
    """The command line in a file of its own (readable by this user only) that the shell
    runs as its script, removed afterwards. Not `-c COMMAND`: one argument is limited to
    128 KiB on Linux, and a longer command failed to start as if the shell were missing."""
    fd, name = tempfile.mkstemp(prefix="opencode-command-", suffix=".sh")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(command)
        yield Path(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


@dataclass(frozen=True)
class ShellLaunch:
    """How the shell of a judged command starts: ``argv`` (inside bwrap or sandbox-exec
    when one of them is the sandbox), ``landlock`` (the policy the Landlock fork server
    applies; None: started directly), ``policy`` (the sandbox's; None: outside it)."""

    argv: list[str]
    mechanism: Mechanism | None = None
    policy: SandboxPolicy | None = None
    landlock: dict[str, object] | None = None

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """What the sandbox needs on disk while the command runs (bwrap's placeholders)."""
        if self.mechanism is None or self.policy is None:
            return contextlib.nullcontext()
        return placeholders(self.mechanism, self.policy)

    def exit_code(self, code: int | None) -> int | None:
        """The shell's exit code as when it runs directly: bwrap exits with 128 + N when
        the shell was killed by signal N (as a shell reports a child's), said as -N."""
        if self.mechanism == "bwrap" and code is not None and 128 < code < 128 + signal.NSIG:
            return 128 - code
        return code


def shell_launch(ctx: ToolContext, decided: BashPlan, script: Path) -> ShellLaunch:
    """How the shell runs ``script``, the command that ``decided`` judged."""
    argv = shell_argv(ctx, script)
    policy, mechanism = decided.policy, decided.availability.mechanism if decided.availability else None
    if policy is None or mechanism is None:
        return ShellLaunch(argv)
    if shutil.which(argv[0]) is None:  # said as when it runs outside, not as the sandbox's exec error
        raise no_shell(argv[0], "No such file or directory, or not executable")
    if mechanism == "landlock":
        return ShellLaunch(argv, mechanism, policy, landlock_policy(policy))
    return ShellLaunch(sandboxed_argv(mechanism, policy, argv), mechanism, policy)


def background_command(command: str) -> str | None:
    """The command without its trailing ``&`` when it ends with one (not ``&&``): the
    model asked for a background job; None otherwise."""
    stripped = command.rstrip()
    if stripped.endswith("&") and not stripped.endswith("&&") and not stripped.endswith("\\&"):
        return stripped[:-1].rstrip() or None
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _status(outcome: ShellOutcome, timeout_ms: int) -> str:
    if outcome.timed_out:
        return (
            f"Timed out after {timeout_ms} ms: the command and every process it started were killed. "
            "The output above is what it printed until then."
        )
    code = outcome.exit_code
    if code is not None and code < 0:
        return f"Killed by signal {_signal_name(-code)} (exit code {code})."
    return f"Exit code: {code}"


class BashTool(Tool):
    name = "bash"
    params = BashParams
    description = tool_description("bash")

    async def run(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        check_command(params.command)
        limits = ctx.config.tools.bash
        timeout_ms = min(params.timeout or limits.default_timeout_ms, limits.max_timeout_ms)
        title = params.description or one_line(params.command, 80)
        decided = await authorize(ctx, params.command, title, sandbox=params.sandbox)
        ctx.workspace.assert_present()  # its folder is where the command runs
        if params.background or background_command(params.command) is not None:
            from app.tools.bash_background import start_job

            return await start_job(ctx, decided, background_command(params.command) or params.command, title)
        with command_file(params.command) as script:
            launch = shell_launch(ctx, decided, script)
            with launch.holding():
                outcome = await run_shell(launch.argv, ctx.workspace.root, timeout_ms / 1000, launch.landlock)
        outcome = replace(outcome, exit_code=launch.exit_code(outcome.exit_code))
        policy = launch.policy
        lines = [outcome.output.rstrip("\n") or "(no output)", ""]
        if outcome.detached:
            lines.append("Note: a background process still holds the output; what it prints later is not shown.")
        if policy is not None and (note := refusal_note(policy, outcome.output)) is not None:
            lines.append(note)
        lines.append(_status(outcome, timeout_ms))
        return ToolResult(
            output="\n".join(lines),
            title=title,
            metadata={
                "command": params.command,
                "description": params.description,
                "exit_code": outcome.exit_code,
                "timed_out": outcome.timed_out,
                "timeout_ms": timeout_ms,
                "truncated": outcome.omitted > 0,
                "omitted_chars": outcome.omitted,
                "duration_ms": outcome.duration_ms,
                "sandbox": launch.mechanism,
            },
        )
