"""The TUI on a damaged database: the start goes on with a fresh one, and the chat says
which file was set aside, as a warning (not a crash, not a silent loss)."""

from __future__ import annotations

from pathlib import Path

from app.tui.app import OpencodeApp
from app.tui.widgets.message_notice import ChatNotice
from tests.tui.conftest import NO_USER_THEMES, wait_until


async def test_a_damaged_database_is_set_aside_and_the_chat_says_so(workspace: Path) -> None:
    database = workspace / ".opencode" / "opencode.db"
    database.parent.mkdir()
    database.write_text("not a database\n" * 100)
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)  # builds its own runtime
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: any(notice.kind == "warning" for notice in app.query(ChatNotice)))
        (notice,) = [notice for notice in app.query(ChatNotice) if notice.kind == "warning"]
        assert notice.text.startswith(f"{database} is damaged (file is not a database): kept it as opencode.db.damaged-")
        assert app.runtime is not None
        assert app.runtime.store.sessions.list() == []  # the fresh database is in use
