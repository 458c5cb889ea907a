"""``/hooks``: the hooks that run here and where each is declared (a ``session`` slash
command of app/prompt/slash_commands.py, in every front-end)."""

from __future__ import annotations

from app.prompt.slash_commands import CommandCall


async def hooks_command(call: CommandCall) -> str:
    return str(call.loop.runtime.hooks.listing())
