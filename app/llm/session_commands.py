"""The functions behind the ``session`` slash commands (see app.slash_commands): each
takes a CommandCall and returns the line the user sees, the same in every front-end."""

from __future__ import annotations

import asyncio

from app.slash_commands import CommandCall, CommandError

EXPORT_FORMATS = ("md", "json")


async def compact(call: CommandCall) -> str:
    """``/compact``: summarise the conversation now, as auto-compaction would."""
    await call.loop.compact(call.session_id, model=call.model)
    return "Session compacted: the next request starts from the summary"


async def export(call: CommandCall) -> str:
    """``/export [md|json]``: the transcript in a new file in the workspace root
    (docs/export.md), markdown unless the argument says json."""
    from app.export import export_to_workspace

    fmt = call.arguments.strip().lower() or "md"
    if fmt not in EXPORT_FORMATS:
        raise CommandError(f"/export takes md or json, not {call.arguments.strip()!r}: e.g. /export json")
    runtime = call.loop.runtime
    path = await asyncio.to_thread(export_to_workspace, runtime.store, call.session_id, runtime.root, fmt)
    return f"Session exported to {path.relative_to(runtime.root)}"
