"""Every screen at 80x24, the smallest terminal the TUI promises: everything it says fits
(help's ids whole, the diff viewer's own keys, long paths cut in the middle). One
session with a changed, a created and a deleted file, under a deep folder, feeds them
all; times are pinned (UTC, a fixed date), so the pictures hold no clock."""

from __future__ import annotations

import time

import pytest
from textual.command import CommandList
from textual.widgets import OptionList

from app.runtime import Runtime
from app.store.models import RecordedChange
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.diff_screen import DiffScreen
from app.tui.screens.help import HelpScreen
from app.tui.screens.models import ModelsScreen
from app.tui.screens.sessions import SessionsScreen
from app.tui.widgets.sidebar import FilesSidebar
from tests.tui.chat_samples import SAMPLES, store_tool_conversation
from tests.tui.conftest import wait_until

SIZE = (80, 24)
DEEP = "opencode-demo/a/rather/deeply/nested/folder/cache-1.txt"
PINNED_MS = 1_767_225_600_000
"""2026-01-01 00:00 UTC: the sessions screen shows each session's time."""


@pytest.fixture
def pinned_utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def runtime(make_runtime) -> Runtime:
    return make_runtime(policy="interactive")


@pytest.fixture
def session_id(runtime: Runtime, pinned_utc) -> str:
    """A changed, a created (deep path) and a deleted file, recorded as the change path does."""
    session_id = store_tool_conversation(runtime, SAMPLES["edit"], title="Every screen at 80 by 24")
    history = runtime.store.history
    history.record_changes(session_id, [
        RecordedChange("src/app.py", "import os\n\nprint(os.name)\n", "import os\nimport sys\n\nprint(os.name)\n"),
        RecordedChange(DEEP, "", "cached greeting\n", created=True),
        RecordedChange("old.py", "x = 1\ny = 2\n", "", deleted=True),
    ])  # fmt: skip
    runtime.store.db.execute("UPDATE sessions SET updated_at = ?, created_at = ?", (PINNED_MS, PINNED_MS))
    return session_id


@pytest.fixture
def make_app(make_app, runtime):
    return lambda: make_app(runtime=runtime)


def opened(app, session_id: str, *keys: str, until=None):
    """Open the session, show the sidebar, press ``keys`` and wait for ``until``."""

    async def run(pilot) -> None:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: len(sidebar.changes) == 3)
        await pilot.press(*keys)
        if until is not None:
            await wait_until(pilot, until)
        await pilot.pause()

    return run


def test_main_screen_with_the_files_sidebar(snap_compare, make_app, session_id):
    app = make_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, "ctrl+b"))


def test_help(snap_compare, make_app, session_id):
    app = make_app()
    until = lambda: isinstance(app.screen, HelpScreen)  # noqa: E731
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, "f1", until=until))


def test_sessions(snap_compare, make_app, session_id):
    app = make_app()
    until = lambda: isinstance(app.screen, SessionsScreen) and app.screen.query_one(OptionList).option_count  # noqa: E731
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, "ctrl+s", until=until))


def test_models(snap_compare, make_app, session_id):
    app = make_app()
    until = lambda: isinstance(app.screen, ModelsScreen)  # noqa: E731
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, "ctrl+o", until=until))


def test_diff_viewer(snap_compare, make_app, session_id):
    app = make_app()
    until = lambda: isinstance(app.screen, DiffScreen)  # noqa: E731
    keys = ("ctrl+g", "down", "enter")  # the second file: the deep one, created
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, *keys, until=until))


def test_revert_question(snap_compare, make_app, session_id):
    app = make_app()
    until = lambda: isinstance(app.screen, ConfirmScreen)  # noqa: E731
    keys = ("ctrl+g", "down", "r")
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, *keys, until=until))


def test_command_palette_listing_the_themes(snap_compare, make_app, session_id):
    app = make_app()

    def listed() -> bool:
        options = app.screen.query(CommandList)
        return bool(options) and options.first().option_count == 10  # every hit for "theme": the search is done

    keys = ("ctrl+p", *"theme")
    assert snap_compare(app, terminal_size=SIZE, run_before=opened(app, session_id, *keys, until=listed))
