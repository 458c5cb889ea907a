"""The TUI says in a notice that its start rolled back a change a crash interrupted."""

from __future__ import annotations

from pathlib import Path

from app.runtime import Runtime
from app.store.journal import Before
from app.store.models import RecordedChange
from app.tui.app import OpencodeApp
from app.tui.widgets.message_notice import ChatNotice
from tests.tui.conftest import NO_USER_THEMES, wait_until


async def test_a_rolled_back_change_is_a_notice_and_the_file_is_as_before(workspace: Path) -> None:
    (workspace / "a.txt").write_text("old\n")
    crashed = Runtime.build(workspace)
    session = crashed.store.sessions.create(title="crashed").id
    crashed.store.journal.begin(
        str(workspace), session, "Edit a.txt", [Before("a.txt", "file", b"old\n", 0o644)],
        [RecordedChange("a.txt", "old\n", "new\n")],
    )
    (workspace / "a.txt").write_text("new\n")  # then the process died
    crashed.close()
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)  # builds its own runtime
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        notice = app.query_one(ChatNotice)
        assert notice.kind == "warning" and notice.text.startswith("Rolled back an interrupted change (Edit a.txt")
    assert (workspace / "a.txt").read_text() == "old\n"
