"""Headless commands that drive core services directly: ``opencode tool``,
``opencode changes`` and ``opencode export``. They build a runtime, never import textual
or litellm, and print JSON that scripts can rely on."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core import boundedjson
from app.core.errors import OpencodeError, ToolError

if TYPE_CHECKING:
    from app.permission.service import Policy
    from app.runtime import Runtime
    from app.tools.base import ToolResult

T = TypeVar("T")

TOOL_OK, TOOL_FAILED, USAGE = 0, 1, 2
TERMINATED = 128 + signal.SIGTERM


class UsageError(OpencodeError):
    """The command line itself is wrong (exit 2)."""


def _emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")


def _read_arguments(raw: str | None) -> dict[str, Any]:
    # One character past the limit is enough to refuse it: a gigabyte piped in is not held.
    # A closed standard input (None) holds nothing.
    text = (sys.stdin.read(boundedjson.MAX_BYTES + 1) if sys.stdin else "") if raw == "-" else (raw or "{}")
    if raw == "-" and not text.strip():
        raise UsageError(
            "standard input held no tool arguments: pipe one JSON object, e.g. '{\"filePath\": \"README.md\"}'"
        )
    try:
        value = boundedjson.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"the tool arguments are not valid JSON ({err.msg} at line {err.lineno}:{err.colno})") from None
    except boundedjson.JsonLimitError as err:
        raise UsageError(f"the tool arguments break a limit ({err}): send smaller, flatter arguments") from None
    if not isinstance(value, dict):
        raise UsageError("the tool arguments must be one JSON object, e.g. '{\"filePath\": \"README.md\"}'")
    return value


def _build_runtime(root: Path, policy: Policy) -> Runtime:
    from app.runtime import Runtime  # only now: importing it builds the config models

    runtime = Runtime.build(root, policy=policy)
    for notice in runtime.notices:
        print(f"opencode: {notice}", file=sys.stderr)
    return runtime


async def _then_stop_servers(runtime: Runtime, call: Awaitable[ToolResult]) -> Callable[[], ToolResult]:
    """The call, then the language servers it started, stopped while the loop runs. The
    result comes back inside a function: when ``asyncio.run`` ends it puts back the ^C
    handler, and ``signal.getsignal`` formats the old one, which holds the main task,
    with the task's result (a patch's holds the diff of every file it changed)."""
    try:
        result = await call
        return lambda: result
    finally:
        await runtime.stop_language_servers()


async def _cancelled_on_sigterm(call: Awaitable[T]) -> T:
    """SIGTERM (a supervisor, `timeout`, a closing terminal's shell) cancels the call as
    ^C does, so the bash tool kills its process group instead of leaving it running."""
    task = asyncio.ensure_future(call)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await task
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _session(runtime: Runtime, session_id: str | None) -> str | None:
    """The --session id once checked (an unknown one is a usage error); None without it."""
    if session_id is not None and runtime.store.sessions.get(session_id) is None:
        raise UsageError(f"no session {session_id} in this workspace: omit --session to start a new one")
    return session_id


def run_tool(root: Path, name: str, raw_arguments: str | None, *, yes: bool, session_id: str | None) -> int:
    """``opencode tool NAME [JSON | -]``: one tool call through the same pipeline as the agent."""
    runtime = _build_runtime(root, "headless-yes" if yes else "headless")
    try:
        tool = runtime.tools.get(name)
        if tool is None:
            raise UsageError(f"unknown tool {name!r}: choose one of {', '.join(sorted(runtime.tools))}")
        arguments = _read_arguments(raw_arguments)
        session = _session(runtime, session_id)
        try:
            params = tool.parse(arguments)
        except ToolError as err:  # a usage error: nothing ran, so no new session is left behind
            _emit({"ok": False, "output": str(err), "metadata": {}, "session_id": session})
            return USAGE
        session = session or runtime.store.sessions.create(title=f"opencode tool {name}", kind="tool").id
        try:
            call = tool.run_guarded(params, runtime.context(session))
            result = asyncio.run(_cancelled_on_sigterm(_then_stop_servers(runtime, call)))()
        except asyncio.CancelledError:
            print("opencode: terminated", file=sys.stderr)
            return TERMINATED
        except OpencodeError as err:  # the tool's error, or the store's while it ran: never a usage error
            _emit({"ok": False, "output": str(err), "metadata": {}, "session_id": session})
            return TOOL_FAILED
        _emit({"ok": True, "output": result.output, "metadata": result.metadata, "session_id": session})
        return TOOL_OK
    finally:
        runtime.close()


def show_changes(root: Path, *, session_id: str | None, as_json: bool, include_tool: bool = False) -> int:
    """``opencode changes``: the files a session changed (by default the last
    conversation; with ``include_tool``, the last session even if `opencode tool` made it)."""
    runtime = _build_runtime(root, "headless")
    try:
        sessions = runtime.store.sessions
        session = sessions.get(session_id) if session_id is not None else sessions.latest(include_tool=include_tool)
        if session is None:
            raise UsageError(_no_session(session_id, include_tool, sessions.latest(include_tool=True) is not None))
        history = runtime.store.history
        rows: list[dict[str, Any]] = [
            {
                "path": change.path,
                "versions": [v.version for v in history.versions(change.session_id, change.path)],
                "additions": change.additions,
                "deletions": change.deletions,
                "deleted": change.deleted,
            }
            for change in history.list_latest_session_files(session.id)
            if not change.unchanged  # net, nothing changed (created then deleted, put back): as the sidebar
        ]
        if as_json:
            _emit({"session_id": session.id, "title": session.title, "files": rows})
        elif not rows:
            print(f"session {session.id}: no files changed")
        else:
            print(f"session {session.id} {session.title}".rstrip())
            for row in rows:
                mark = "  (deleted)" if row["deleted"] else ""
                print(f"  {row['path']}  +{row['additions']} -{row['deletions']}  [{', '.join(row['versions'])}]{mark}")
        return 0
    finally:
        runtime.close()


def export_session(root: Path, *, session_id: str | None, fmt: str, output: Path | None, force: bool = False) -> int:
    """``opencode export``: a session's transcript (the last conversation by default), as
    markdown or JSON (docs/export.md), on stdout or in ``output``."""
    from app.prompt.export import render, transcript, write_new

    if force and output is None:
        raise UsageError("--force only applies with -o FILE: add -o, or leave --force out")
    runtime = _build_runtime(root, "headless")
    try:
        sessions = runtime.store.sessions
        if session_id is None:
            latest = sessions.latest()
            if latest is None:
                raise UsageError("no conversation to export in this workspace yet: start one with opencode or opencode -p")
            session_id = latest.id
        text = render(transcript(runtime.store, session_id), fmt)
    finally:
        runtime.close()
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        write_new(output.expanduser(), text, force=force)
    except FileExistsError:
        raise UsageError(f"{output} already exists: pass --force to replace it, or choose another -o path") from None
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror or err}; choose another -o path") from None
    print(f"exported session {session_id} to {output}", file=sys.stderr)
    return 0


def _no_session(session_id: str | None, include_tool: bool, any_session: bool) -> str:
    if session_id is not None:  # an empty id too: it names no session, not the last one
        return f"no session {session_id or repr(session_id)} in this workspace"
    if any_session and not include_tool:
        return "no conversation in this workspace yet, only `opencode tool` calls: add --include-tool to see theirs"
    return "no session in this workspace yet"
