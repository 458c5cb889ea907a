"""The bell and desktop notification when a turn ends or a question waits while the
terminal is not focused (app/tui/attention.py): the real app on the fake OpenAI server,
its terminal output read from the driver it runs on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.drivers.headless_driver import HeadlessDriver
from textual.widgets import Button

from app.permission import PermissionReply
from app.tui.attention import attention_sequence
from app.tui.screens.permission_screen import PermissionScreen
from tests.llm.fake_openai import Text, ToolCall
from tests.tui.conftest import wait_until

OSC_9 = "\x1b]9;opencode: The reply is ready\x1b\\"


class RecordingDriver(HeadlessDriver):
    """A terminal that keeps what the app writes to it."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.written: list[str] = []

    def write(self, data: str) -> None:
        self.written.append(data)


def output(app) -> str:
    """What the app wrote, less the pointer shapes Textual sets itself (OSC 22)."""
    return re.sub(r"\x1b\]22;[^\x07\x1b]*\x07", "", "".join(app.terminal.written))


def start(make_runtime, make_app, fake_llm, notify: str | None = None, rules: dict | None = None):
    tui = {"notify": notify} if notify else {}
    config = {"providers": fake_llm.providers, "tui": tui, "lsp": {"python": {"disabled": True}}}
    if rules:
        config["permission"] = {"rules": rules}
    runtime = make_runtime(policy="interactive", config=config)
    session = runtime.store.sessions.create(title="titled, so no title request")
    return make_app(fake_llm.model, runtime=runtime, driver_class=RecordingDriver), session


async def blur(pilot, app) -> None:
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus)


async def test_a_turn_ending_unfocused_rings_and_notifies_focused_it_does_not(make_runtime, make_app, fake_llm):
    fake_llm.reply(Text("first answer"))
    fake_llm.reply(Text("second answer"))
    app, session = start(make_runtime, make_app, fake_llm)
    async with app.run_test(headless=False, size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"while you look", "enter")
        await wait_until(pilot, lambda: len(fake_llm.requests) == 1 and not app.turn_running)
        assert "\a" not in output(app) and "\x1b]" not in output(app)  # focused: nothing

        await blur(pilot, app)
        await app.send_prompt("while you are away")  # no key: a key would focus the app again
        await wait_until(pilot, lambda: len(fake_llm.requests) == 2 and not app.turn_running)
        assert output(app) == OSC_9 + "\a"


async def test_a_permission_question_waiting_unfocused_rings_the_bell(make_runtime, make_app, fake_llm, workspace: Path):
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "a.txt", "content": "a\n"}), id="call_1"))
    fake_llm.reply(Text("done"))
    app, session = start(make_runtime, make_app, fake_llm, notify="bell", rules={"write": "ask"})
    async with app.run_test(headless=False, size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await blur(pilot, app)
        await app.send_prompt("write a")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.query(Button))
        assert output(app) == "\a"
        app.screen.dismiss(PermissionReply("deny"))  # answered without a key: still unfocused
        await wait_until(pilot, lambda: len(fake_llm.requests) == 2 and not app.turn_running)
        assert output(app) == "\a\a"  # and the turn's end


async def test_off_writes_nothing(make_runtime, make_app, fake_llm):
    fake_llm.reply(Text("answer"))
    app, session = start(make_runtime, make_app, fake_llm, notify="off")
    async with app.run_test(headless=False, size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await blur(pilot, app)
        await app.send_prompt("quietly")
        await wait_until(pilot, lambda: len(fake_llm.requests) == 1 and not app.turn_running)
        assert output(app) == ""


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TERM": "xterm-256color"}, "\x1b]9;opencode: done\x1b\\\a"),
        ({"TERM": "foot"}, "\x1b]777;notify;opencode;done\x1b\\\a"),
        ({"VTE_VERSION": "7600"}, "\x1b]777;notify;opencode;done\x1b\\\a"),
        ({"TERM": "xterm", "TMUX": "/tmp/tmux-1/default,1,0"}, "\x1bPtmux;\x1b\x1b]9;opencode: done\x1b\x1b\\\x1b\\\a"),
    ],
)
def test_the_desktop_escape_fits_the_terminal(env: dict[str, str], expected: str):
    assert attention_sequence("desktop", "done", env) == expected


def test_the_message_cannot_end_the_escape_early():
    sequence = attention_sequence("desktop", "evil\x1b\\\x07;\x9c text\n", {})
    assert sequence == "\x1b]9;opencode: evil \\ text\x1b\\\a"
