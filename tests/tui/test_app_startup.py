"""The start of a real launch: the app builds its own runtime in a thread after the first
frame. Holding that build open (the real one runs once released) shows what the user
sees and can do meanwhile: the ready layout, typing, and a prompt sent when ready."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual import events
from textual.geometry import Region

from app.runtime import Runtime
from app.tui.app import OpencodeApp
from app.tui.themes import available_themes
from app.tui.widgets.message_user import UserMessage
from tests.tui.conftest import NO_USER_THEMES, wait_until

SHIPPED = {"opencode", "opencode-light", "tokyonight", "catppuccin", "dracula", "gruvbox", "one-light"}


@pytest.fixture
def held_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Runtime.build waits until the returned event is set, then builds for real."""
    release = threading.Event()
    real_build = Runtime.build

    def build_when_released(*args, **kwargs) -> Runtime:
        release.wait(timeout=30)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(Runtime, "build", build_when_released)
    yield release
    release.set()  # never leave the start-up thread waiting


def launch(workspace: Path, **kwargs) -> OpencodeApp:
    """The app as ``opencode`` starts it: no runtime handed in."""
    return OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES, **kwargs)


def layout(app: OpencodeApp) -> dict[str, Region]:
    return {widget.id or "": widget.region for widget in (app.chat, app.prompt, app.sidebar, app.status)}


async def test_the_first_frame_has_the_ready_layout_and_the_runtime_changes_none_of_it(workspace, held_start):
    app = launch(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.runtime is None and app.status.model_label == "starting…"
        assert app.sidebar.display and app.sidebar.has_class("-empty")
        assert app.focused is app.prompt
        before = layout(app)
        await wait_until(pilot, lambda: SHIPPED <= set(available_themes(app)))  # right after the frame

        held_start.set()
        await wait_until(pilot, lambda: app.runtime is not None and app.sidebar.runtime is app.runtime)
        await pilot.pause()
        assert layout(app) == before
        assert app.sidebar.has_class("-empty")


async def test_a_narrow_first_frame_already_hides_the_sidebar(workspace, held_start):
    app = launch(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.runtime is None and not app.sidebar.display


async def test_a_prompt_typed_while_the_core_starts_is_sent_once_it_is_ready(workspace, held_start, script):
    app = launch(workspace, model=script([{"steps": [{"text": "Hello back."}]}]))
    async with app.run_test(size=(120, 40)) as pilot:
        for key in "hello":
            app.post_message(events.Key(key, key))
        await wait_until(pilot, lambda: app.prompt.text == "hello")
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: app.prompt.text == "")
        assert app.runtime is None and not app.query(UserMessage)

        held_start.set()
        await wait_until(pilot, lambda: app.query(UserMessage) and not app.turn_running)
        assert app.query_one(UserMessage).text == "hello"
        assert app.session_id is not None
        first = app.runtime.store.messages.list(app.session_id)[0]
        assert first.role == "user" and first.parts[0]["text"] == "hello"


async def test_a_start_that_pauses_the_collector_turns_it_back_on_once_ready(workspace, held_start):
    app = launch(workspace, pause_gc=True)
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            assert not gc.isenabled()
            held_start.set()
            await wait_until(pilot, lambda: app.runtime is not None)
            await wait_until(pilot, gc.isenabled)
            assert gc.get_freeze_count() > 0
    finally:
        gc.enable()
        gc.unfreeze()
