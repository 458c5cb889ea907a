"""``--continue`` shows the session's end from the store before the runtime exists: the
same widgets stay once the runtime takes over, a broken configuration does not hide it,
and it is read only where the runtime will read too (never another data folder's
session, never the offline demo's), from a database it neither creates nor changes."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config.models import ConfigShape
from app.core.config_paths import DEFAULT_DATA_FOLDER
from app.runtime import Runtime
from app.store.db import Database
from app.store.errors import StoreError
from app.tui import early_session
from app.tui.app import OpencodeApp
from app.tui.early_session import EarlySession, read_latest
from app.tui.message_pages import MessagePages
from app.tui.widgets import chat_log
from app.tui.widgets.message_assistant import AssistantMessage
from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.message_user import UserMessage
from tests.tui.conftest import NO_USER_THEMES, wait_until
from tests.tui.test_app_startup import run_python
from tests.tui.test_long_session import FIRST_PROMPT, store_long_session

MODEL = "scripted/unused.json"
"""A model named on the command line: the app does not fall back to the offline demo."""


class Gate:
    """The app's Runtime.build (in its start-up thread; the test's own builds pass) waits
    at the gate: ``entered`` once start-up reached it (the early view, read before it, is
    done), then builds for real once ``opened``."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    gate = Gate()
    real_build = Runtime.build

    def build_at_the_gate(*args, **kwargs) -> Runtime:
        if threading.current_thread() is threading.main_thread():
            return real_build(*args, **kwargs)
        gate.entered.set()
        gate.opened.wait(timeout=30)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(Runtime, "build", build_at_the_gate)
    yield gate
    gate.opened.set()  # never leave the start-up thread waiting


@pytest.fixture
def held_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """The early view's read of the store waits at the gate: ``entered`` once it is under
    way, then reads once ``opened``."""
    gate = Gate()
    real_read = early_session.read_latest

    def read_at_the_gate(*args, **kwargs) -> EarlySession | None:
        gate.entered.set()
        gate.opened.wait(timeout=30)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(early_session, "read_latest", read_at_the_gate)
    yield gate
    gate.opened.set()


@pytest.fixture
def held_page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Reading a page of messages (the chat drawing a session) waits at the gate."""
    gate = Gate()
    real_page = MessagePages.page

    async def page_at_the_gate(self: MessagePages, start: int, stop: int) -> list:
        gate.entered.set()
        await asyncio.to_thread(gate.opened.wait, 30)
        return await real_page(self, start, stop)

    monkeypatch.setattr(MessagePages, "page", page_at_the_gate)
    yield gate
    gate.opened.set()


@pytest.fixture(autouse=True)
def own_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global config file of this machine's user decides where the data is."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


def resume(workspace: Path, model: str | None = MODEL) -> OpencodeApp:
    """The app as ``opencode --continue`` starts it: no runtime handed in."""
    return OpencodeApp(workspace, model=model, continue_last=True, env={}, user_themes=NO_USER_THEMES)


def started(app: OpencodeApp) -> bool:
    """The runtime is adopted: the start-up worker waits for that, the session resumed."""
    return app.runtime is not None and all(worker.is_finished for worker in app.workers if worker.group == "startup")


def prompts(app: OpencodeApp) -> list[str]:
    return [widget.text for widget in app.chat.query(UserMessage)]


async def test_the_end_shows_before_the_runtime_and_stays_the_same_widgets_once_it_is_built(
    make_runtime, gate, monkeypatch
):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 600.0)  # the window stays as drawn, whatever the machine's speed
    stored = make_runtime()
    session_id = store_long_session(stored, 40)
    stored.store.sessions.add_usage(session_id, 10, 5, 0.25)
    app = resume(stored.root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Turn 9?" in prompts(app) and gate.entered.is_set())
        assert app.runtime is None and app.session_id == session_id
        assert app.status.title == "A long session" and app.status.cost == 0.25
        drawn = app.chat.message_widgets()

        gate.opened.set()
        await wait_until(pilot, lambda: app.runtime is not None and app.prompt.earlier_prompts)
        shown = app.chat.message_widgets()
        assert all(now is before for now, before in zip(shown, drawn, strict=True)), "no redraw"
        assert app.prompt.earlier_prompts[-1] == "Turn 9?"
        await app.chat.show_position(0)  # read through the runtime's store: the early one is closed
        await wait_until(pilot, lambda: FIRST_PROMPT in prompts(app))


async def test_the_runtime_is_built_while_the_turns_above_the_end_wait(make_runtime, gate, monkeypatch):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 600.0)  # the keyboard never quiet for long enough here
    stored = make_runtime()
    store_long_session(stored, 40)
    app = resume(stored.root)
    async with app.run_test(size=(100, 12)) as pilot:
        await wait_until(pilot, gate.entered.is_set)
        assert prompts(app) == ["Turn 9?"] and app.chat.window == range(36, 40)
        gate.opened.set()  # the build goes on, so the app's exit does not wait out the gate


async def test_a_prompt_sent_before_the_runtime_goes_to_the_session_shown(make_runtime, gate, script):
    stored = make_runtime()
    session_id = store_long_session(stored, 8)
    app = resume(stored.root, script([{"steps": [{"text": "Answered in the same session."}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Turn 1?" in prompts(app) and gate.entered.is_set())
        await pilot.press(*"and now?", "enter")
        assert app.prompt.text == "and now?" and app.runtime is None

        gate.opened.set()
        await wait_until(pilot, lambda: "and now?" in prompts(app) and not app.turn_running and app.runtime)
        assert app.session_id == session_id and prompts(app)[-1] == "and now?"
        stored_prompts = stored.store.messages.prompts(session_id)
        assert stored_prompts[-1] == "and now?" and len(stored_prompts) == 3


async def test_a_new_session_asked_for_before_the_early_read_ends_is_what_stays(
    make_runtime, gate, held_read, script
):
    stored = make_runtime()
    session_id = store_long_session(stored, 8)
    app = resume(stored.root, script([{"steps": [{"text": "Answered in a new session."}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, held_read.entered.is_set)
        await pilot.press("ctrl+n")
        held_read.opened.set()
        await wait_until(pilot, gate.entered.is_set)  # the early view's step is over
        await pilot.pause()
        assert app.session_id is None and not prompts(app) and app.status.title == ""
        await pilot.press(*"fresh start", "enter")

        gate.opened.set()
        await wait_until(pilot, lambda: app.runtime and app.session_id and not app.turn_running and app.query(AssistantMessage))
        assert app.session_id != session_id and prompts(app) == ["fresh start"]
        assert stored.store.messages.prompts(app.session_id) == ["fresh start"]
        assert len(stored.store.messages.prompts(session_id)) == 2, "the resumed session is left as it was"


async def test_a_new_session_asked_for_while_the_early_view_draws_replaces_it(make_runtime, gate, held_page):
    stored = make_runtime()
    store_long_session(stored, 8)
    app = resume(stored.root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, held_page.entered.is_set)
        assert app.session_id is not None, "the early view is drawing"
        app.simulate_key("ctrl+n")  # pressed: it waits for the drawing chat, as a pilot's press would
        await wait_until(pilot, lambda: app.session_id is None)
        held_page.opened.set()
        await wait_until(pilot, gate.entered.is_set)
        await pilot.pause()
        assert app.session_id is None and not prompts(app) and app.status.title == ""

        gate.opened.set()
        await wait_until(pilot, lambda: started(app))
        assert app.session_id is None and not prompts(app) and app.status.title == ""


async def test_a_broken_config_shows_the_session_with_its_error_and_the_fixed_start_keeps_it(make_runtime):
    stored = make_runtime()
    session_id = store_long_session(stored, 8)
    config = stored.root / ".opencode.json"
    config.write_text('{"tui": {"theme": 42}}')
    app = resume(config.parent)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice) and "Turn 1?" in prompts(app))
        assert app.runtime is None and app.session_id == session_id
        assert "tui.theme" in app.query_one(ChatNotice).text
        drawn = app.chat.message_widgets()

        config.write_text("{}")  # fixed and saved: opencode starts
        await wait_until(pilot, lambda: app.runtime is not None and "reads well" in app.query(ChatNotice).last().text)
        assert all(now is before for now, before in zip(app.chat.message_widgets(), drawn, strict=True))


async def test_a_data_folder_set_in_the_config_is_where_the_session_comes_from(make_runtime, gate):
    store_long_session(make_runtime(), 4, title="In the default folder")
    elsewhere = make_runtime(config={"data": {"directory": "elsewhere"}})
    session_id = store_long_session(elsewhere, 4, title="Elsewhere")
    (elsewhere.root / ".opencode.json").write_text('{"data": {"directory": "elsewhere"}}')
    app = resume(elsewhere.root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, gate.entered.is_set)
        await pilot.pause()
        assert app.session_id is None and not prompts(app) and app.status.title == ""

        gate.opened.set()
        await wait_until(pilot, lambda: app.session_id == session_id and app.status.title == "Elsewhere")


async def test_a_session_the_runtime_does_not_resume_is_replaced_by_its_own(make_runtime, gate):
    stored = make_runtime()
    store_long_session(stored, 4, title="Read early")
    app = resume(stored.root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.status.title == "Read early" and gate.entered.is_set())
        newer = stored.store.sessions.create(title="Newer").id  # another opencode, meanwhile
        stored.store.messages.add(newer, "user", [{"type": "text", "text": "Newest prompt"}])

        gate.opened.set()
        await wait_until(pilot, lambda: app.status.title == "Newer" and prompts(app) == ["Newest prompt"])
        assert app.session_id == newer


async def test_a_variable_that_disables_the_only_provider_shows_no_session_of_the_workspace(
    make_runtime, gate, home: Path, monkeypatch: pytest.MonkeyPatch
):
    stored = make_runtime()
    store_long_session(stored, 4, title="In the workspace")
    monkeypatch.setenv("OPENCODE_PROVIDERS__OPENAI__DISABLED", "true")
    app = OpencodeApp(
        stored.root, continue_last=True, env={"OPENAI_API_KEY": "sk-test", "HOME": str(home)}, user_themes=NO_USER_THEMES
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, gate.entered.is_set)
        await pilot.pause()
        assert app.session_id is None and not prompts(app) and app.status.title == ""

        gate.opened.set()  # the offline demo starts, in a workspace of its own
        await wait_until(pilot, lambda: started(app))
        assert app.runtime.root != stored.root.resolve() and app.session_id is None and not prompts(app)


def test_the_settings_that_decide_the_early_view_are_the_configs_own():
    """A top-level setting added to the config is looked at here: if it can move the
    store or choose the model or the session, the early view must know it."""
    keys = {name.lower() for field, info in ConfigShape.model_fields.items() for name in (field, info.alias or field)}
    deciding = early_session.PLACES_THE_STORE | early_session.CHOOSES_THE_MODEL
    assert deciding <= keys
    assert keys - deciding == {
        "$schema", "schema_ref", "permission", "shell", "lsp", "mcpservers", "mcp_servers", "contextpaths",
        "context_paths", "tui", "autocompact", "auto_compact", "debug", "tools", "serve", "sandbox", "hooks",
        "worktree",
    }  # fmt: skip


def test_the_early_read_knows_the_default_data_folder(make_runtime):
    assert make_runtime().data_dir.name == DEFAULT_DATA_FOLDER


def test_the_early_read_reads_the_latest_session_and_only_where_the_runtime_would(
    make_runtime, home: Path, monkeypatch: pytest.MonkeyPatch
):
    stored = make_runtime()
    session_id = store_long_session(stored, 4)
    root = stored.root
    early = read_latest(root, MODEL, {})
    assert early is not None and (early.title, early.cost) == ("A long session", 0.0)
    early.database.close()

    def latest(model: str | None = MODEL, env: dict[str, str] | None = None) -> str | None:
        early = read_latest(root, model, env or {})
        if early is None:
            return None
        early.database.close()
        return early.session_id

    assert latest() == session_id
    assert latest(None) is None, "no model known: the offline demo starts, elsewhere"
    assert latest(None, {"OPENAI_API_KEY": "sk-test"}) == session_id
    keys = {"OPENAI_API_KEY": "sk-test"}
    for variable, value in [
        ("OPENCODE_DATA__DIRECTORY", "elsewhere"),
        ("opencode_Data", '{"directory": "elsewhere"}'),  # the whole section, in any case
        ("OPENCODE_PROVIDERS__OPENAI__DISABLED", "true"),  # no provider left: the demo starts
        ("OPENCODE_AGENTS__CODER__MODEL", "anthropic/claude-sonnet-4"),
    ]:
        monkeypatch.setenv(variable, value)
        assert latest(None, keys) is None, f"{variable} may decide the store or the model"
        monkeypatch.delenv(variable)
    monkeypatch.setenv("OPENCODE_PROVIDERS__OPENAI__DISABLED", "true")
    assert latest(MODEL, keys) == session_id, "--model decides the model whatever the providers"
    monkeypatch.delenv("OPENCODE_PROVIDERS__OPENAI__DISABLED")
    monkeypatch.setenv("OPENCODE_TUI__THEME", "dracula")
    monkeypatch.setenv("OPENCODE_CONFIG", "/elsewhere/opencode.json")  # another tool's: the config ignores it
    assert latest(None, keys) == session_id
    (home / ".opencode.json").write_text('{"data": {"directory": "/srv/opencode"}}')
    assert latest() is None, "the user's global config moves the data"
    (home / ".opencode.json").write_text('{"tui": {"theme": "dracula"}}')
    assert latest() == session_id
    (root / ".opencode.json").write_text('{"tui": ')
    assert latest() is None, "a config that does not read may set anything"


def test_the_early_read_holds_the_end_the_chat_draws_first(make_runtime):
    stored = make_runtime()
    session_id = store_long_session(stored, 40)
    end = stored.store.messages.page(session_id, 35, 40)
    early = read_latest(stored.root, MODEL, {})
    assert early is not None
    early.database.close()  # what the chat draws first is read already: no more trips to the store

    async def first_page() -> tuple[int, list[str]]:
        return await early.pages.count(), [message.id for message in await early.pages.page(36, 40)]

    assert asyncio.run(first_page()) == (40, [message.id for message in end[1:]])


def test_the_early_read_creates_no_database(workspace: Path):
    assert read_latest(workspace, MODEL, {}) is None
    assert not (workspace / DEFAULT_DATA_FOLDER).exists()
    (workspace / DEFAULT_DATA_FOLDER).mkdir()
    assert read_latest(workspace, MODEL, {}) is None
    assert list((workspace / DEFAULT_DATA_FOLDER).iterdir()) == []


def test_a_read_only_database_refuses_another_schema_and_changes_nothing(workspace: Path):
    path = workspace / "opencode.db"
    Database(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 1")  # as an older opencode left it
    conn.close()
    with pytest.raises(StoreError, match="schema version 1"):
        Database(path, read_only=True)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.close()


def test_the_early_read_and_the_message_widgets_leave_the_configuration_package_unimported():
    """What the early view needs does not wait for pydantic: the runtime's thread loads it."""
    script = (
        "import sys, app.tui.early_session, app.tui.widgets.message_assistant, app.tui.widgets.message_user\n"
        "print(sorted(m for m in sys.modules if m.startswith(('app.config', 'pydantic'))))"
    )
    assert run_python(script) == ["[]"]
