"""`opencode -p PROMPT`: one turn without the TUI, for scripts and CI.

The answer goes to stdout (text, or one JSON object with -f json); progress lines
("→ edit src/a.py") and errors go to stderr, so stdout stays clean for a pipe.
Permissions follow the headless policy: what would be asked is denied, or allowed with
--yes; deny rules always apply.

Exit codes: 0 the model finished; 1 the turn failed or hit the step limit; 2 nothing
could start (no model configured, bad script, no session to continue); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

from app.bus import Event, Subscription
from app.errors import OpencodeError
from app.llm.agent import AgentLoop, TurnResult
from app.llm.events import ModelRetrying, ToolCallFinished, ToolCallStarted
from app.llm.models import ONBOARDING_MESSAGE, choose_model
from app.llm.scripted import provider_for
from app.llm.title import fallback_title
from app.runtime import Runtime

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
SUBJECT_KEYS = ("filePath", "path", "pattern", "command", "description")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def run_headless(
    root: Path,
    prompt: str,
    *,
    output_format: Literal["text", "json"] = "text",
    quiet: bool = False,
    yes: bool = False,
    model: str | None = None,
    continue_last: bool = False,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one coder turn in ``root`` and print its answer; returns the exit code."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    env = os.environ if env is None else env
    if not prompt.strip():
        print("opencode: error: the prompt is empty: pass the request after -p", file=err)
        return EXIT_USAGE
    try:
        runtime = Runtime.build(root, policy="headless-yes" if yes else "headless")
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=err)
        return EXIT_USAGE
    try:
        chosen = choose_model(model, runtime.config.agents.coder.model, env, runtime.config.providers)
        if chosen is None:
            print(ONBOARDING_MESSAGE, file=err)
            return EXIT_USAGE
        try:
            loop = AgentLoop(runtime, provider_for(chosen), env=env)
            session_id = _session(runtime, prompt, continue_last)
        except OpencodeError as error:
            print(f"opencode: error: {error}", file=err)
            return EXIT_USAGE
        try:
            result = asyncio.run(_turn(loop, session_id, prompt, chosen, None if quiet else err))
        except KeyboardInterrupt:
            print("opencode: interrupted; what was done is saved: resume with --continue", file=err)
            return EXIT_INTERRUPTED
        except OpencodeError as error:  # refused before the turn began (an image the model cannot take)
            print(f"opencode: error: {error}", file=err)
            return EXIT_USAGE
        return _report(result, session_id, output_format, out, err, loop.max_steps)
    finally:
        runtime.close()


def _session(runtime: Runtime, prompt: str, continue_last: bool) -> str:
    """The latest session for --continue, else a new one titled from the prompt (a
    one-shot run does not spend a model call on a title)."""
    if not continue_last:
        return runtime.store.sessions.create(title=fallback_title(prompt)).id
    latest = runtime.store.sessions.latest()
    if latest is None:
        raise OpencodeError("no session to continue in this workspace: run without --continue to start one")
    return latest.id


async def _turn(
    loop: AgentLoop, session_id: str, prompt: str, model: str, progress: TextIO | None
) -> TurnResult:
    if progress is None:
        return await loop.run(session_id, prompt, model=model)
    subscription = loop.runtime.bus.subscribe(ToolCallStarted, ToolCallFinished, ModelRetrying)
    printer = asyncio.create_task(_print_progress(subscription, session_id, progress))
    try:
        return await loop.run(session_id, prompt, model=model)
    finally:
        subscription.close()  # the printer prints what is queued, then stops
        await printer


async def _print_progress(subscription: Subscription, session_id: str, progress: TextIO) -> None:
    async for event in subscription:
        line = progress_line(event, session_id)
        if line:
            print(line, file=progress, flush=True)


def progress_line(event: Event, session_id: str) -> str | None:
    """The stderr line for one event: calls of sub-agents are indented under their task."""
    indent = "" if getattr(event, "session_id", session_id) == session_id else "  "
    if isinstance(event, ToolCallStarted):
        subject = call_subject(event.arguments)
        return f"{indent}→ {event.tool}{' ' + subject if subject else ''}"
    if isinstance(event, ToolCallFinished) and event.error:
        first_line = event.output.strip().splitlines()[0] if event.output.strip() else "failed"
        return f"{indent}  ✗ {first_line}"
    if isinstance(event, ModelRetrying):
        return f"… the model call failed ({event.reason}); retrying in {event.delay:.1f} s"
    return None


def call_subject(arguments: Mapping[str, Any]) -> str:
    """What a call is about, in a few words: its path, pattern, command or patched files."""
    patch = arguments.get("patch")
    if isinstance(patch, str):
        return ", ".join(_PATCH_FILE.findall(patch))
    for key in SUBJECT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            flat = " ".join(value.split())
            return flat if len(flat) <= 80 else flat[:79] + "…"
    return ""


def _report(
    result: TurnResult, session_id: str, output_format: str, out: TextIO, err: TextIO, max_steps: int
) -> int:
    problem = result.error
    if result.reason == "max_steps":
        problem = f"stopped at the step limit ({max_steps} model calls) before the model finished: resume with --continue"
    if output_format == "json":
        payload: dict[str, Any] = {
            "session_id": session_id,
            "response": result.response,
            "usage": result.usage,
            "cost": result.cost,
            "files_changed": result.files_changed,
        }
        if problem:  # the documented five keys on success; a failed run also says why
            payload["error"] = problem
        print(json.dumps(payload, ensure_ascii=False), file=out)
    elif result.response:
        print(result.response, file=out)
    if problem:
        print(f"opencode: error: {problem}", file=err)
        return EXIT_FAILED
    return EXIT_OK
