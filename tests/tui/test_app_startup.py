"""The start of a real launch: the app builds its own runtime in a thread after the first
frame. Holding that build open (the real one runs once released) shows what the user
sees and can do meanwhile: the ready layout, the saved theme, typing, and a prompt sent
when ready. Then what start-up leaves out: the core packages on the way to the first
frame, full collections during litellm's import, litellm's tokenizer until a request."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path

import pytest
from textual import events
from textual.color import Color
from textual.geometry import Region

import app.store
from app.runtime import Runtime
from app.tui.app import OpencodeApp
from app.tui.themes import available_themes
from app.tui.widgets.message_user import UserMessage
from tests.tui.conftest import NO_USER_THEMES, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]

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
        held_start.set()  # or quitting waits out the held start-up thread (30 s)


async def test_a_prompt_typed_while_the_core_starts_waits_in_the_box_and_is_sent_once_it_is_ready(
    workspace, held_start, script
):
    app = launch(workspace, model=script([{"steps": [{"text": "Hello back."}]}]))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        for key in "hello":
            app.post_message(events.Key(key, key))
        await wait_until(pilot, lambda: app.prompt.text == "hello")
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: any("waits here" in str(t.render()) for t in app.screen.query("Toast")))
        assert app.runtime is None and not app.query(UserMessage) and app.prompt.text == "hello"

        held_start.set()
        await wait_until(pilot, lambda: app.query(UserMessage) and not app.turn_running)
        assert app.prompt.text == ""
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


@pytest.mark.parametrize("theme", ["dracula", "tokyonight-light"])
async def test_the_theme_saved_in_the_project_is_already_on_the_first_frame(workspace, held_start, theme):
    (workspace / ".opencode.json").write_text(json.dumps({"tui": {"theme": theme}}), encoding="utf-8")
    app = launch(workspace)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.runtime is None and app.theme == theme
        # Its colours, not only its name: a base one and one of our own variables.
        chosen = app.current_theme
        assert app.screen.styles.background == Color.parse(chosen.background)
        assert app.sidebar.styles.border_left[1] == Color.parse(chosen.variables["border-blurred"])
        assert app.has_class(f"-theme-{theme}") and app.has_class("-dark-mode") == chosen.dark
        held_start.set()
        await wait_until(pilot, lambda: app.runtime is not None and app.sidebar.runtime is app.runtime)
        assert app.theme == theme


async def test_an_unknown_saved_theme_starts_on_the_default_and_is_reported_once_ready(workspace, held_start):
    (workspace / ".opencode.json").write_text('{"tui": {"theme": "no-such-theme"}}', encoding="utf-8")
    app = launch(workspace)
    async with app.run_test(notifications=True) as pilot:
        await pilot.pause()
        assert app.theme == "opencode"
        held_start.set()
        await wait_until(pilot, lambda: any("no-such-theme" in str(t.render()) for t in app.screen.query("Toast")))
        assert app.theme == "opencode"


def run_python(script: str, *args: str) -> list[str]:
    """The lines a fresh interpreter prints for ``script`` (nothing imported before it)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_first_frame_imports_neither_the_store_nor_the_agent_packages():
    script = (
        "import sys, app.tui.app\n"
        "print(sorted(m for m in sys.modules if m.startswith(('app.store', 'app.llm', 'app.bus', 'app.runtime'))))\n"
        "import app.store.events\n"
        "print('app.store.db' in sys.modules, 'app.store.history' in sys.modules)"
    )
    assert run_python(script) == ["[]", "False False"]


def test_the_store_package_still_hands_out_every_name_it_lists():
    for name in app.store.__all__:
        home = next(module for module, names in app.store._HOMES.items() if name in names)
        assert getattr(app.store, name) is getattr(import_module(home), name)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        app.store.Nothing  # noqa: B018 - the attribute access is the test


LITELLM_SETTLING = """
import asyncio, gc, sys
from pathlib import Path
from app.core.gc_policy import YOUNG_THRESHOLD
from app.llm.provider import litellm_imported
from app.tui.app import OpencodeApp

TURN_MODULES = ("app.llm.agent", "app.tools.bash", "app.tools.patch", "app.tools.webfetch")

async def main():
    thresholds = gc.get_threshold()
    app = OpencodeApp(Path(sys.argv[1]), model="openai/gpt-5", env={}, user_themes=Path("/nonexistent"),
                      pause_gc=True)
    async with app.run_test() as pilot:
        litellm = await asyncio.wait_for(litellm_imported(), 120)
        for worker in [w for w in app.workers if w.group == "litellm"]:
            await asyncio.wait_for(worker.wait(), 120)
        print("collecting:", gc.isenabled(), gc.get_threshold() == (YOUNG_THRESHOLD, *thresholds[1:]))
        print("frozen:", not any(obj is vars(litellm) for obj in gc.get_objects()))
        print("ready for a turn:", all(name in sys.modules for name in TURN_MODULES))

asyncio.run(main())
"""


def test_litellms_objects_end_up_frozen_and_the_collector_runs_as_before(workspace):
    """In a fresh interpreter, as in a real launch: once litellm's background import is
    done, its objects are out of the collector's way and full passes are allowed again,
    with young passes spaced as after any start-up; what a turn imports is imported too."""
    lines = run_python(LITELLM_SETTLING, str(workspace))
    assert lines == ["collecting: True True", "frozen: True", "ready for a turn: True"]


async def test_another_tools_opencode_variable_is_a_warning_once_started(workspace, held_start, monkeypatch):
    monkeypatch.setenv("OPENCODE_DISABLE_AUTOUPDATE", "1")
    app = launch(workspace)
    async with app.run_test(notifications=True) as pilot:
        held_start.set()
        await wait_until(pilot, lambda: app.runtime is not None)
        await wait_until(
            pilot, lambda: any("OPENCODE_DISABLE_AUTOUPDATE" in str(t.render()) for t in app.screen.query("Toast"))
        )
