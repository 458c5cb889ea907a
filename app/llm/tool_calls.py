"""Running one assistant message's tool calls: how they are grouped and how one call's
outcome (a result, a refusal, any failure) becomes a tool_result part. How arguments are
shown to front-ends is app/llm/call_arguments.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from app.core.errors import OpencodeError, PermissionDeniedError
from app.llm.messages import Part, tool_result_part
from app.llm.provider import ToolCall
from app.tools.base import Tool, ToolContext

MAX_CALLS_PER_MESSAGE = 64
"""Calls of one model message that run; each one past them is answered with an error
(``over_the_cap``): a message of ten thousand calls costs what sixty-four cost."""
MAX_CONCURRENT_CALLS = 8
"""Calls of one batch (read-only ones, tasks) running at the same moment."""


def over_the_cap(total: int) -> str:
    """The result of a call past MAX_CALLS_PER_MESSAGE, for the model."""
    return (
        f"not run: this message made {total:,} tool calls and only the first {MAX_CALLS_PER_MESSAGE} run; "
        "make the ones still needed in your next message, fewer at a time"
    )


def batches(calls: list[ToolCall], tools: Mapping[str, Tool]) -> list[list[ToolCall]]:
    """Consecutive calls that may run together (read-only tools, and tools that run
    alongside, such as task) share a batch, run concurrently; any other call is a batch
    of its own, so the caller's own file changes keep the model's order."""
    groups: list[list[ToolCall]] = []
    previous_together = False
    for call in calls:
        tool = tools.get(call.name)
        together = tool is not None and (tool.read_only or tool.runs_alongside)
        if together and previous_together:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous_together = together
    return groups


async def execute(call: ToolCall, tools: Mapping[str, Tool], ctx: ToolContext) -> tuple[Part, bool]:
    """Run one call: (its tool_result part, whether permission was denied). Every failure
    becomes an error result the model can read and fix (unknown tool, bad arguments, a
    refusal, even a bug in the tool); only cancellation propagates."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(tools) or "none"
        return tool_result_part(
            call.id, call.name, f"Unknown tool {call.name!r}: use one of {known}", error=True
        ), False
    try:
        result = await tool.call(call.arguments, ctx)
    except PermissionDeniedError as err:
        return tool_result_part(call.id, call.name, str(err), error=True), True
    except OpencodeError as err:  # the tool's error (a bug too, see Tool.run_guarded) or the store's while it ran
        return tool_result_part(call.id, call.name, str(err), error=True), False
    return tool_result_part(call.id, call.name, result.output, _json_safe(result.metadata)), False


def _json_safe(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata as the store can keep it (a tool may put a Path or a tuple in it)."""
    return json.loads(json.dumps(metadata, default=str))
