"""The TUI in a workspace whose `.opencode` folder cannot be written (a file stands where
it should be): it starts with its data in the user's folder and says so once."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.llm.scripted import DEMO_MODEL
from app.tui.app import OpencodeApp
from app.tui.widgets.message_notice import ChatNotice
from tests.tui.conftest import NO_USER_THEMES, wait_until


async def test_the_fallback_folder_is_said_once_in_the_chat(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    (workspace / ".opencode").write_text("not a folder\n")
    app = OpencodeApp(workspace, model=DEMO_MODEL, env={}, user_themes=NO_USER_THEMES)  # builds its own runtime
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None and app.query(ChatNotice))
        [notice] = app.query(ChatNotice)
        assert notice.kind == "warning" and "this workspace's sessions are kept in" in notice.text
        assert app.runtime.data_dir.is_relative_to(tmp_path / "data-home")
