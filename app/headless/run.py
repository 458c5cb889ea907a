"""`opencode -p PROMPT`: one turn without the TUI, for scripts and CI.

The answer goes to stdout (text, or one JSON object with -f json); progress lines
("→ edit src/a.py") and errors go to stderr, so stdout stays clean for a pipe.
Permissions follow the headless policy: what would be asked is denied, or allowed with
--yes; deny rules always apply.

A prompt that starts with a slash command runs it (app/prompt/slash_commands.py): a custom
command or /init sends its prompt; /compact, /undo and the other commands on a
conversation act on the latest one (with --continue) and print their one line; the TUI's
own commands (/theme, /models...) are a usage error. ``@path`` mentions attach files as
in every front-end; one that is not attached is said on stderr.

Exit codes: 0 the model finished (or the command acted); 1 the turn failed or hit the step limit; 2 nothing
could start (no model configured, a model litellm does not know or whose provider has no
API key, bad script, no session to continue or none of the id --session gives); 3 the model finished but a call that
needed approval was refused (run again with --yes, or allow it in the permission rules;
a call a deny rule refuses is the rules working, exit 0); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from app.agents.catalog import UnknownAgentError, configured_model
from app.bus import Event, Subscription
from app.core import gc_policy
from app.core.control_chars import escape_controls
from app.core.errors import OpencodeError
from app.headless.run_report import (
    EMPTY_PROMPT_LINE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NEEDS_APPROVAL,
    EXIT_OK,
    EXIT_USAGE,
    INTERRUPTED_LINE,
    call_subject,
    report,
)
from app.headless.run_request import HeadlessRequest
from app.hooks.service import HookNotice
from app.llm.agent import AgentLoop, ModelProvider, TurnResult
from app.llm.events import MentionRefused, ModelRetrying, ToolCallFinished, ToolCallStarted
from app.llm.models import ONBOARDING_MESSAGE, choose_model
from app.llm.preflight import model_problem
from app.llm.provider import litellm_imported
from app.llm.scripted import ProviderPerModel, is_scripted, provider_for
from app.llm.title import fallback_title
from app.permission import ApprovalMissing
from app.prompt.slash_commands import CommandCall, CommandError, Invocation, session_handler
from app.prompt.turn_undo import parse_rewind, redo_turn, rewind_to, rewindable, turn_list, undo_turn
from app.runtime import Runtime
from app.tools.readable import readable_output

__all__ = [
    "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_NEEDS_APPROVAL", "EXIT_OK", "EXIT_USAGE",
    "CannotStart", "call_subject", "pick_session", "progress_line", "run_headless", "usable_model",
]  # fmt: skip
TURN_COMMANDS = ("undo", "redo", "rewind")
"""Slash commands on the session's turns, run without choosing a model."""


class CannotStart(OpencodeError):
    """Why a headless turn cannot begin; ``str`` is the whole stderr line (exit 2)."""


def run_headless(
    root: Path,
    request: HeadlessRequest,
    *,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run one turn of the request's primary agent (coder, plan or a custom primary agent)
    in ``root`` and print its answer; returns the exit code."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    env = os.environ if env is None else env
    prompt, model, agent = request.prompt, request.model, request.agent
    continue_last, output_format = request.continue_last, request.output_format
    if not prompt.strip():
        print(EMPTY_PROMPT_LINE, file=err)
        return EXIT_USAGE
    try:
        runtime = Runtime.build(root, policy="headless-yes" if request.yes else "headless")
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=err)
        return EXIT_USAGE
    runtime.trust_project_hooks = request.trust_project_hooks
    for notice in [*runtime.notices, *runtime.commands.notices, *runtime.hook_notices(asking=False)]:
        print(f"opencode: {notice}", file=err)
    try:
        try:
            runtime.agents.primary_agent(agent)
            invocation = runtime.commands.resolve(prompt, "headless")
        except (CommandError, UnknownAgentError) as error:
            print(f"opencode: error: {error}", file=err)
            return EXIT_USAGE
        if invocation is not None and invocation.command.name in TURN_COMMANDS:  # no model needed
            return _turn_command(runtime, invocation, continue_last, output_format, out, err)
        model = (invocation.command.model if invocation else None) or model
        confined = invocation is not None and invocation.command.repository
        if invocation is not None and invocation.command.kind == "prompt":
            prompt, agent = invocation.prompt(), runtime.agents.command_agent(agent, invocation.command.agent)
        if invocation is not None and invocation.command.kind == "session" and not invocation.command.uses_model:
            # /export calls no model: none is chosen, so none need be configured
            loop = AgentLoop(runtime, ProviderPerModel(), env=env)
            return _session_command(loop, invocation, None, continue_last, output_format, (out, err))
        try:
            chosen, provider = usable_model(runtime, agent, model, env)
        except CannotStart as stop:
            print(stop, file=err)
            return EXIT_USAGE
        try:
            loop = AgentLoop(runtime, provider, env=env)
            if invocation is not None and invocation.command.kind == "session":
                return _session_command(loop, invocation, chosen, continue_last, output_format, (out, err))
            session_id = pick_session(runtime, prompt, continue_last, request.session_id, chosen)
        except OpencodeError as error:
            print(f"opencode: error: {error}", file=err)
            return EXIT_USAGE
        unapproved: list[ApprovalMissing] = []
        try:
            result = asyncio.run(
                _turn(loop, session_id, prompt, chosen, agent, None if request.quiet else err, err, unapproved, confined)
            )
        except KeyboardInterrupt:
            print(INTERRUPTED_LINE, file=err)
            return EXIT_INTERRUPTED
        except OpencodeError as error:  # refused before the turn began (an image the model cannot take)
            print(f"opencode: error: {error}", file=err)
            return EXIT_USAGE
        return report(result, session_id, output_format, out, err, loop.max_steps, unapproved)
    finally:
        runtime.close()


def usable_model(
    runtime: Runtime, agent: str, model: str | None, env: Mapping[str, str]
) -> tuple[str, ModelProvider]:
    """The model of the turn (--model, else the agent's, else the first provider with a
    key), checked before any request, and its provider. Raises CannotStart. ``opencode
    serve`` runs it for attached clients too."""
    defined = runtime.agents.agents.get(agent)
    agent_model = configured_model(runtime.config, defined) if defined is not None else None
    chosen = choose_model(model, agent_model, env, runtime.config.providers)
    if chosen is None:
        raise CannotStart(ONBOARDING_MESSAGE)
    try:
        problem = model_problem(chosen, runtime.config.providers, env)
        if problem is not None:
            raise OpencodeError(problem)
        return chosen, provider_for(chosen)
    except OpencodeError as error:
        raise CannotStart(f"opencode: error: {error}") from None


def _session_command(
    loop: AgentLoop,
    invocation: Invocation,
    model: str | None,
    continue_last: bool,
    output_format: str,
    streams: tuple[TextIO, TextIO],
) -> int:
    """A ``session`` slash command (``-p "/compact" --continue``) on the latest
    conversation: its line on stdout (with -f json, ``{"session_id", "response"}``); exit 1
    when it could not act. ``model`` is None for a command that calls no model."""
    out, err = streams
    name = invocation.command.name
    if not continue_last:
        print(f"opencode: error: /{name} acts on a conversation: add --continue to act on the latest one", file=err)
        return EXIT_USAGE
    try:
        session_id = pick_session(loop.runtime, "", continue_last=True)
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=err)
        return EXIT_USAGE
    handler = session_handler(invocation.command)
    try:
        line = asyncio.run(handler(CommandCall(loop, session_id, invocation.arguments, model=model)))
    except KeyboardInterrupt:
        print(f"opencode: interrupted: /{name} did not finish", file=err)
        return EXIT_INTERRUPTED
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=err)
        return EXIT_FAILED
    if output_format == "json":
        print(json.dumps({"session_id": session_id, "response": line}, ensure_ascii=False), file=out)
    else:
        print(line, file=out)
    return EXIT_OK


def _turn_command(
    runtime: Runtime, invocation: Invocation, continue_last: bool, output_format: str, out: TextIO, err: TextIO
) -> int:
    """``/undo``, ``/redo`` or ``/rewind`` in the session --continue picks (no model is
    called): the turns' prompt and each file changed, as text or one JSON object; bare
    ``/rewind`` lists the turns (docs/undo.md)."""
    name = invocation.command.name
    if not continue_last:
        print(f"opencode: error: /{name} acts on an earlier turn: add --continue to pick the last session", file=err)
        return EXIT_USAGE
    try:
        session_id = pick_session(runtime, "", continue_last)
        if name == "rewind":
            number, scope = parse_rewind(invocation.arguments)
            if number is None:
                return _print_turns(runtime, session_id, output_format, out)
            step = asyncio.run(rewind_to(runtime, session_id, number, scope))
        else:
            step = asyncio.run((undo_turn if name == "undo" else redo_turn)(runtime, session_id))
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=err)
        return EXIT_FAILED
    if output_format == "json":
        payload = {
            "session_id": step.session_id,
            "action": step.action,
            "prompt": step.prompt,
            "turns": step.turns,
            "scope": step.scope,
            "files": [{"path": item.path, "effect": item.effect} for item in step.files],
        }
        print(json.dumps(payload, ensure_ascii=False), file=out)
    else:
        print(step.summary(), file=out)
    return EXIT_OK


def _print_turns(runtime: Runtime, session_id: str, output_format: str, out: TextIO) -> int:
    """Bare ``/rewind``: the turns it can go back to, by number."""
    entries = rewindable(runtime, session_id)
    if output_format == "json":
        turns = [{"number": entry.number, "prompt": entry.prompt} for entry in entries]
        print(json.dumps({"session_id": session_id, "turns": turns}, ensure_ascii=False), file=out)
    else:
        print(turn_list(entries), file=out)
    return EXIT_OK


def pick_session(
    runtime: Runtime, prompt: str, continue_last: bool, session_id: str | None = None, model: str | None = None
) -> str:
    """The session --session names, the latest for --continue, else a new one titled from
    the prompt (a one-shot run does not spend a model call on a title) and stored with the
    ``model`` the run uses, as the TUI stores its sessions' (an export names it)."""
    if session_id is not None:
        if runtime.store.sessions.get(session_id) is None:
            raise OpencodeError(f"no session {session_id} in {runtime.root}: pass an id that 'opencode changes' lists")
        return session_id
    if not continue_last:
        return runtime.store.sessions.create(title=fallback_title(prompt), model=model).id
    latest = runtime.store.sessions.latest()
    if latest is None:
        raise OpencodeError("no session to continue in this workspace: run without --continue to start one")
    return latest.id


async def _turn(
    loop: AgentLoop,
    session_id: str,
    prompt: str,
    model: str,
    agent: str,
    progress: TextIO | None,
    warnings: TextIO,
    unapproved: list[ApprovalMissing],
    confined: bool = False,
) -> TurnResult:
    """The turn, with its progress lines printed (unless ``progress`` is None), each
    mention not attached said on ``warnings``, and the calls refused for want of approval
    collected in ``unapproved``. ``confined``: the prompt is a repository command's."""
    shown = () if progress is None else (ToolCallStarted, ToolCallFinished, ModelRetrying)
    subscription = loop.runtime.bus.subscribe(ApprovalMissing, MentionRefused, HookNotice, *shown)
    follower = asyncio.create_task(_follow(subscription, session_id, progress, warnings, unapproved))
    started = asyncio.create_task(_start_up_done(model))
    try:
        return await loop.run(session_id, prompt, agent=agent, model=model, confined=confined)
    finally:
        started.cancel()
        subscription.close()  # the follower handles what is queued, then stops
        await follower
        await loop.runtime.stop_language_servers()


async def _start_up_done(model: str) -> None:
    """Start-up ends when litellm is imported (at once for a scripted model): the
    collector, paused by the command line for it (app/core/gc_policy.py), resumes then."""
    if not is_scripted(model):
        await litellm_imported()
    gc_policy.resume_if_paused()


async def _follow(
    subscription: Subscription,
    session_id: str,
    progress: TextIO | None,
    warnings: TextIO,
    unapproved: list[ApprovalMissing],
) -> None:
    async for event in subscription:
        if isinstance(event, ApprovalMissing):
            unapproved.append(event)
            continue
        if isinstance(event, MentionRefused | HookNotice):
            print(f"opencode: {event.line}", file=warnings, flush=True)
            continue
        line = progress_line(event, session_id)
        if line and progress is not None:
            print(line, file=progress, flush=True)


def progress_line(event: Event, session_id: str) -> str | None:
    """The stderr line for one event: calls of sub-agents are indented under their task;
    what the model wrote is shown with its control characters escaped."""
    indent = "" if getattr(event, "session_id", session_id) == session_id else "  "
    if isinstance(event, ToolCallStarted):
        subject = call_subject(event.arguments)
        return escape_controls(f"{indent}→ {event.tool}{' ' + subject if subject else ''}")
    if isinstance(event, ToolCallFinished) and (event.error or event.metadata.get("hooks")):
        output = readable_output(event.output).strip()
        first_line = output.splitlines()[0] if output else "failed"
        failed = [f"✗ {first_line}"] if event.error else []
        return "\n".join(escape_controls(f"{indent}  {line}") for line in [*failed, *event.metadata.get("hooks", [])])
    if isinstance(event, ModelRetrying):
        return f"… the model call failed ({event.reason}); retrying in {event.delay:.1f} s"
    return None
