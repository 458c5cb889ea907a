"""`opencode -p` attached to `opencode serve`: a thin ACP client over the server's socket.

It speaks the same newline-delimited JSON-RPC as an editor, with the standard library
alone (no litellm, no textual, not even the ACP SDK: the point is to start in a blink):
``initialize``; ``_opencode/headless``, where the server picks the model and the session
with the code a run in its own process uses; ``session/prompt``. Meanwhile it prints the
progress lines from ``session/update`` (``_meta.opencode.progress``) and answers ``session/request_permission`` as its
policy does (``--yes`` or not), naming the policy so the server answers exactly as that
policy does in-process. The turn's report (``_meta.opencode`` of the answer) is printed
by app/headless/run_report.py, as in-process. ctrl+c sends ``session/cancel``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from app.core.control_chars import escape_controls
from app.headless.run_report import (
    EMPTY_PROMPT_LINE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    INTERRUPTED_LINE,
    report,
)
from app.headless.run_request import HeadlessRequest
from app.serve.address import ServeError, connect, socket_path
from app.serve.environment import digests

ACP_PROTOCOL_VERSION = 1
"""The ACP version `opencode acp` speaks (the SDK's PROTOCOL_VERSION)."""
CONTROL_WAIT = 60.0
"""Seconds --status and --stop wait for the server's answer, and --stop for it to end."""


class ServerGone(Exception):
    """The connection ended before the answer came."""


class EnvironmentDiffers(ServeError):
    """The server was started with other values of variables it reads: this client must
    not run on it (with ``--attach``, the line said; else it runs in its own process)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(
            f"the opencode server ({socket_path()}) was started with another {', '.join(names)}: "
            "run without --attach, or 'opencode serve --stop' and start it from this environment"
        )
        self.names = names


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message", "error")))
        data = error.get("data")
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}


@dataclass
class Outcome:
    response: str
    usage: dict[str, int]
    cost: float
    files_changed: list[str]
    reason: str
    error: str | None
    files_deleted: list[str]


@dataclass
class Unapproved:
    tool: str
    subject: str


class Wire:
    """JSON-RPC over a connected socket, one message per line, read in order."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lines = sock.makefile("rb")
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        try:
            self._sock.sendall(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        except OSError as error:
            raise ServerGone(str(error)) from None

    def receive(self) -> dict[str, Any]:
        try:
            line = self._lines.readline()
        except OSError as error:
            raise ServerGone(str(error)) from None
        if not line:
            raise ServerGone("the connection closed")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ServerGone(f"the server sent {line[:80]!r}, not a JSON-RPC message")
        return message

    def request(
        self, method: str, params: dict[str, Any], on_message: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Send a request; hand every other message to ``on_message`` until its answer."""
        self._next_id += 1
        request_id = self._next_id
        self.send({"id": request_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RpcError(message["error"])
                return message.get("result") or {}
            if on_message is not None:
                on_message(message)

    def close(self) -> None:
        self._lines.close()
        self._sock.close()


def server_socket(required: bool) -> socket.socket | None:
    """A connection to the user's server; None when none listens (an error with ``required``)."""
    path = socket_path()
    sock = connect(path)
    if sock is None and required:
        raise ServeError(f"no opencode server is listening on {path}: start one with 'opencode serve'")
    return sock


def run_attached(
    sock: socket.socket,
    root: Path,
    request: HeadlessRequest,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environment: Mapping[str, str] | None = None,
) -> int:
    """One headless turn on the server; prints and returns exactly what ``run_headless`` would.
    Raises EnvironmentDiffers, before anything is printed, when the server's environment
    (what it reads of it) is not ``environment`` (default: this process's)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    if not request.prompt.strip():
        sock.close()
        print(EMPTY_PROMPT_LINE, file=err)
        return EXIT_USAGE
    wire = Wire(sock)
    try:
        asked = {"cwd": str(root), "prompt": request.prompt, "model": request.model,
                 "continue": request.continue_last, "sessionId": request.session_id, "agent": request.agent,
                 "environment": digests(os.environ if environment is None else environment)}  # fmt: skip
        return _turn(wire, asked, request.output_format, request.quiet, request.yes, out, err)
    except ServerGone:
        print(
            f"opencode: error: the opencode server ({socket_path()}) went away during the turn: "
            "each file change is whole or undone; run the prompt again",
            file=err,
        )
        return EXIT_FAILED
    finally:
        wire.close()


def _turn(
    wire: Wire, request: dict[str, Any], output_format: str, quiet: bool, yes: bool, out: TextIO, err: TextIO
) -> int:
    wire.request("initialize", {"protocolVersion": ACP_PROTOCOL_VERSION, "clientCapabilities": {}})
    try:
        started = wire.request("_opencode/headless", request)
    except RpcError as error:
        if "environmentDiffers" in error.data:
            raise EnvironmentDiffers(error.data["environmentDiffers"]) from None
        for notice in error.data.get("notices", []):
            print(f"opencode: {notice}", file=err)
        print(error.data.get("line") or f"opencode: error: {error.data.get('message', error)}", file=err)
        return EXIT_USAGE
    for notice in started.get("notices", []):
        print(f"opencode: {notice}", file=err)
    session = started["sessionId"]
    follower = _Follower(wire, session, None if quiet else err, err, yes)
    params = {
        "sessionId": session,
        "prompt": [{"type": "text", "text": request["prompt"]}],
        "_meta": {"opencode": {"model": started["model"]}},
    }
    with follower.cancelling_on_interrupt():
        try:
            answer = wire.request("session/prompt", params, follower.handle)
        except RpcError as error:
            summary = error.data.get("opencode")
            if not isinstance(summary, dict):  # refused before the turn began (an image the model cannot take)
                print(f"opencode: error: {error.data.get('message', error)}", file=err)
                return EXIT_USAGE
            answer = {"_meta": {"opencode": summary}}
    if follower.interrupted:
        print(INTERRUPTED_LINE, file=err)
        return EXIT_INTERRUPTED
    summary = (answer.get("_meta") or {}).get("opencode") or follower.command_summary()
    outcome = Outcome(
        summary["response"], summary["usage"], summary["cost"], summary["filesChanged"], summary["reason"],
        summary["error"], summary["filesDeleted"],
    )  # fmt: skip
    unapproved = [Unapproved(item["tool"], item["subject"]) for item in summary["unapproved"]]
    return report(outcome, session, output_format, out, err, summary["maxSteps"], unapproved)


class _Follower:
    """What arrives while the prompt runs: progress lines, mentions not attached,
    permission questions."""

    def __init__(self, wire: Wire, session_id: str, progress: TextIO | None, warnings: TextIO, yes: bool) -> None:
        self._wire = wire
        self._session_id = session_id
        self._progress = progress
        self._warnings = warnings
        self._yes = yes
        self.interrupted = False
        self._text: list[str] = []

    def handle(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "session/update" and self.interrupted:
            return  # as in-process: after ctrl+c, only the line saying so
        if method == "session/update" and params.get("sessionId") == self._session_id:
            update = params.get("update") or {}
            refused = ((update.get("_meta") or {}).get("opencode") or {}).get("mentionRefused")
            if refused:  # an @path not attached: said on stderr, as in-process
                print(f"opencode: {refused}", file=self._warnings, flush=True)
            elif update.get("sessionUpdate") == "agent_message_chunk":
                self._text.append((update.get("content") or {}).get("text", ""))
            line = _progress_line(update)
            if line and self._progress is not None:
                print(line, file=self._progress, flush=True)
        elif method == "session/request_permission":
            self._wire.send({"id": message["id"], "result": self._answer()})
        elif "id" in message and method is not None:  # a request we offer no capability for
            self._wire.send({"id": message["id"], "error": {"code": -32601, "message": f"{method} is not supported"}})

    def command_summary(self) -> dict[str, Any]:
        """The report of a prompt the server answered without a turn (a slash command such
        as /changes): its text is the response; no model was called."""
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
        return {
            "response": "".join(self._text), "usage": usage, "cost": 0.0, "filesChanged": [], "filesDeleted": [], "reason": "stop",
            "error": None, "maxSteps": 0, "unapproved": [],
        }  # fmt: skip

    def _answer(self) -> dict[str, Any]:
        """Allow once with --yes, else refuse; the policy named lets the server answer as
        that policy does in-process (a call only a person may approve stays refused)."""
        option = "allow_once" if self._yes else "reject_once"
        policy = "headless-yes" if self._yes else "headless"
        return {"outcome": {"outcome": "selected", "optionId": option}, "_meta": {"opencode": {"policy": policy}}}

    def cancelling_on_interrupt(self) -> _InterruptGuard:
        return _InterruptGuard(self)

    def interrupt(self, signum: int, frame: object) -> None:
        """ctrl+c: cancel the turn on the server and wait for it to end there; a second
        ctrl+c stops waiting."""
        if self.interrupted:
            raise KeyboardInterrupt
        self.interrupted = True
        self._wire.send({"method": "session/cancel", "params": {"sessionId": self._session_id}})


class _InterruptGuard:
    def __init__(self, follower: _Follower) -> None:
        self._follower = follower
        self._previous: Any = None

    def __enter__(self) -> None:
        self._previous = signal.signal(signal.SIGINT, self._follower.interrupt)

    def __exit__(self, *_: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


def _progress_line(update: dict[str, Any]) -> str | None:
    """The stderr line ``run_headless`` prints for the same event, which the server made
    with the same function (``_meta.opencode.progress``): a call starting, a call failed,
    a model call retried (shown escaped whatever the server sent)."""
    line = ((update.get("_meta") or {}).get("opencode") or {}).get("progress")
    return escape_controls(line) if isinstance(line, str) else None


def request_once(method: str) -> dict[str, Any] | None:
    """One request of the server's own (``_opencode/status``, ``_opencode/stop``); None
    when no server listens. For stop, returns once the server has closed the connection."""
    sock = connect(socket_path())
    if sock is None:
        return None
    sock.settimeout(CONTROL_WAIT)
    wire = Wire(sock)
    try:
        wire.request("initialize", {"protocolVersion": ACP_PROTOCOL_VERSION, "clientCapabilities": {}})
        answer = wire.request(f"_{method}", {})
        if method == "opencode/stop":
            _wait_for_end(wire)
        return answer
    except (ServerGone, TimeoutError) as error:
        raise ServeError(f"the server on {socket_path()} did not answer ({error}): check its log, serve.log beside it") from None
    except RpcError as error:
        raise ServeError(f"the server refused {method}: {error}") from None
    finally:
        wire.close()


def _wait_for_end(wire: Wire) -> None:
    try:
        while True:
            wire.receive()
    except ServerGone:
        return

