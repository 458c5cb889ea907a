"""Where the agent loop runs hooks (app/hooks, docs/hooks.md), kept out of the loop
itself: around a tool call (PreToolUse, PostToolUse), before a prompt is stored
(SessionStart, UserPromptSubmit), when the model stops (Stop, SubagentStop), and on
notifications (a permission question waiting, a turn finished).

A tool call with no hook selecting it runs exactly as without hooks; the loop asks
``calls_hooked`` first, a dictionary lookup.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from app.bus import Bus
from app.core.errors import OpencodeError
from app.hooks.events import tool_input, tool_names
from app.hooks.service import HookService, Outcome
from app.llm.events import TurnFinished
from app.llm.messages import Part, tool_result_part
from app.llm.provider import ToolCall
from app.llm.tool_calls import execute
from app.permission.events import PermissionRequested
from app.permission.hook_decision import HookDecision, hook_decision
from app.tools.base import Tool, ToolContext
from app.tools.changes import record_found


class PromptBlockedError(OpencodeError):
    """A UserPromptSubmit hook blocked the prompt: it was neither stored nor sent."""


def context_part(source: str, text: str) -> Part:
    """Text a hook adds to what the model reads (app.llm.messages renders it)."""
    return {"type": "context", "source": source, "text": text}


def calls_hooked(hooks: HookService, name: str) -> bool:
    """Whether a hook selects calls of the tool ``name``."""
    if not (hooks.declared("PreToolUse") or hooks.declared("PostToolUse")):
        return False
    names = tool_names(name)
    return bool(hooks.selected("PreToolUse", names) or hooks.selected("PostToolUse", names))


async def run_hooked_call(
    hooks: HookService, call: ToolCall, tools: Mapping[str, Tool], ctx: ToolContext
) -> tuple[Part, bool]:
    """``execute`` with the call's hooks around it: (its tool_result part, whether
    permission was denied). What the hooks said for the user is in the part's metadata
    (``hooks``, lines), what they said for the model is in its output."""
    names = tool_names(call.name)
    fields: dict[str, Any] = {
        "names": names,
        "tool_name": names[-1],
        "tool_input": tool_input(_arguments(call), ctx.workspace.root),
        "tool_use_id": call.id,
    }
    pre = await hooks.run("PreToolUse", session_id=ctx.session_id, **fields)
    shown = pre.shown
    permission = pre.permission
    refused = pre.blocked or (permission[1] or "no reason given" if permission and permission[0] == "deny" else None)
    if refused:
        output = f"A PreToolUse hook refused this call, so it did not run: {refused}"
        return tool_result_part(call.id, call.name, output, {"hooks": shown}, error=True), False
    action = permission[0] if permission else None
    decision: HookDecision = "allow" if action == "allow" else "ask" if action == "ask" else None
    mark = ctx.history.last_id()
    with hook_decision(decision):
        part, denied = await execute(call, tools, ctx)
    if not part["error"]:
        response = {"output": part["output"], "metadata": part["metadata"], "success": True}
        post = await hooks.run("PostToolUse", session_id=ctx.session_id, tool_response=response, **fields)
        shown = [*shown, *post.shown]
        part["output"] += _for_model(post)
        if written := ctx.history.paths_since(ctx.session_id, mark):
            if changed := await record_found(ctx, written):
                shown.append(f"PostToolUse hooks changed {', '.join(changed)}: the change is in the session's history")
    if shown:
        part["metadata"] = {**part["metadata"], "hooks": shown}
    return part, denied


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as an object (empty when they are not one)."""
    try:
        value = json.loads(call.arguments) if isinstance(call.arguments, str) and call.arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _for_model(outcome: Outcome) -> str:
    """What PostToolUse hooks tell the model after the tool's own output: a block's
    reason (exit 2) and ``additionalContext``."""
    notes = [note for note in (outcome.blocked, outcome.context) if note]
    return "".join(f"\n\nPostToolUse hook: {note}" for note in notes)


async def prompt_context(hooks: HookService, session_id: str, prompt: str, *, new_session: bool) -> list[Part]:
    """The context SessionStart (for a session's first prompt) and UserPromptSubmit hooks
    add to the prompt; PromptBlockedError when a UserPromptSubmit hook blocks it."""
    parts: list[Part] = []
    if new_session and hooks.declared("SessionStart"):
        started = await hooks.run("SessionStart", session_id=session_id, names=("startup",), source="startup")
        hooks.announce(session_id, started.shown)
        if started.context:
            parts.append(context_part("SessionStart hook", started.context))
    if hooks.declared("UserPromptSubmit"):
        submitted = await hooks.run("UserPromptSubmit", session_id=session_id, prompt=prompt)
        hooks.announce(session_id, submitted.shown)
        refused = submitted.blocked or submitted.stopped
        if refused:
            raise PromptBlockedError(f"A UserPromptSubmit hook blocked the prompt, so it was not sent: {refused}")
        if submitted.context:
            parts.append(context_part("UserPromptSubmit hook", submitted.context))
    return parts


async def stop_refused(hooks: HookService, session_id: str, *, subagent: bool, active: bool) -> str | None:
    """Run the Stop (or SubagentStop) hooks as the model stops: the reason a hook gives to
    go on (exit 2, ``decision: block``), else None. ``active``: the turn already went on
    once because of a Stop hook (``stop_hook_active``, so a hook can let it end)."""
    event = "SubagentStop" if subagent else "Stop"
    if not hooks.declared(event):
        return None
    outcome = await hooks.run(event, session_id=session_id, stop_hook_active=active)
    hooks.announce(session_id, outcome.shown)
    return None if outcome.stopped else outcome.blocked


async def notify(hooks: HookService, bus: Bus, is_subagent: Callable[[str], bool]) -> None:
    """Run the Notification hooks for every permission question waiting and every turn
    that finished (a sub-agent's turn finishing is not one: its parent goes on), until
    cancelled."""
    async with bus.subscribe(PermissionRequested, TurnFinished) as events:
        async for event in events:
            if isinstance(event, PermissionRequested):
                session_id, kind = event.request.session_id, "permission_prompt"
                message = f"opencode needs your permission: {event.request.title}"
            else:
                assert isinstance(event, TurnFinished)
                if is_subagent(event.session_id):
                    continue
                session_id, kind, message = event.session_id, "idle_prompt", "opencode finished and waits for your input"
            outcome = await hooks.run(
                "Notification", session_id=session_id, names=(kind,), message=message, notification_type=kind
            )
            hooks.announce(session_id, outcome.shown)
