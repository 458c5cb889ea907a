"""The TUI's side of hooks at start-up: the notices about hook files, and the one
question before the project's own hooks may run (app/hooks/trust.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from app.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.tui.app import OpencodeApp


async def ask_hook_trust(app: OpencodeApp, runtime: Runtime) -> None:
    """Show what could not be used in the hook files, then ask whether to trust the
    project's hooks when it declares some not trusted yet in this exact form."""
    hooks = await asyncio.to_thread(lambda: runtime.hooks)  # reads the hook files
    for notice in runtime.hook_notices(asking=True):
        await app.chat.add_notice(notice, "warning")
    if not hooks.awaiting_trust:
        return

    async def answered(trusted: bool | None) -> None:
        if trusted:
            await asyncio.to_thread(hooks.trust)
            await app.chat.add_notice("The project's hooks are trusted: they run from now on.", "info")
        else:
            await app.chat.add_notice(hooks.skipped_line(), "warning")

    app.push_screen(ConfirmScreen(hooks.trust_question(), confirm_label="Trust"), answered)
