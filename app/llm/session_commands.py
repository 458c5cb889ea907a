"""The functions behind the ``session`` slash commands (see app.slash_commands): each
takes a CommandCall and returns the line the user sees, the same in every front-end."""

from __future__ import annotations

from app.slash_commands import CommandCall


async def compact(call: CommandCall) -> str:
    """``/compact``: summarise the conversation now, as auto-compaction would."""
    await call.loop.compact(call.session_id, model=call.model)
    return "Session compacted: the next request starts from the summary"


async def context(call: CommandCall) -> str:
    """``/context``: the next request's size by part, the total and the model's window."""
    size = await call.loop.context_size(call.session_id, model=call.model)
    return str(size.lines())
