"""Undo and redo of a whole turn in the TUI (docs/undo.md), driven by Pilot: the real
app, the real loop on the fake OpenAI server, real files and SQLite."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.message_user import UserMessage
from app.tui.widgets.status_bar import format_tokens
from tests.llm.fake_openai import Text, ToolCall
from tests.tui.conftest import wait_until

A_BEFORE = b"a = 1\r\n"
ALLOW_EDITS = {"write": "allow", "edit": "allow", "delete": "allow"}


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), id=f"call_{name}")


def disk(root: Path) -> dict[str, bytes | None]:
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in ("a.py", "b.py", "c.py")}


async def answered(pilot, app, prompt: str, requested: Callable[[], bool]) -> None:
    """Send ``prompt``; return once its turn ended with the model ``requested``."""
    await pilot.press(*prompt, "enter")
    await wait_until(pilot, lambda: not app.turn_running and requested())


def conversation(request: dict) -> str:
    return json.dumps([m for m in request["messages"] if m["role"] != "system"])


async def test_undo_redo_of_a_turn_from_the_prompt(make_runtime, make_app, fake_llm, workspace: Path):
    runtime = make_runtime(
        policy="interactive",
        config={
            "providers": fake_llm.providers,
            "permission": {"rules": ALLOW_EDITS},
            "lsp": {"python": {"disabled": True}},
        },
    )
    (workspace / "a.py").write_bytes(A_BEFORE)
    (workspace / "c.py").write_bytes(b"c = 3\n")
    for reply in (
        [call("view", filePath="a.py")],
        [call("edit", filePath="a.py", oldString="a = 1", newString="a = 2")],
        [call("write", filePath="b.py", content="b = 2\n")],
        [call("delete", path="c.py")],
        [Text("Changed the three files.")],
        [Text("Second answer.")],
    ):
        fake_llm.reply(*reply)
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"change the files", "enter")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_llm.requests) == 5)
        after = disk(workspace)
        assert after == {"a.py": b"a = 2\r\n", "b.py": b"b = 2\n", "c.py": None}
        await wait_until(pilot, lambda: [c.path for c in app.sidebar.changes] == ["a.py", "b.py", "c.py"])

        await pilot.press(*"/und")  # the command list offers /undo: enter takes it and runs it
        await wait_until(pilot, lambda: app.prompt.completion is not None and app.prompt.completion.is_open)
        assert app.prompt.completion.chosen.insert.startswith("/undo")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.text == "change the files")

        assert disk(workspace) == {"a.py": A_BEFORE, "b.py": None, "c.py": b"c = 3\n"}
        assert not app.query(UserMessage)  # the chat shows the session without the turn
        await wait_until(pilot, lambda: app.sidebar.changes == [])  # the files are as before the session

        await pilot.press("ctrl+a", "ctrl+k", *"/redo", "enter")
        await wait_until(pilot, lambda: disk(workspace) == after)
        await wait_until(pilot, lambda: [m.text for m in app.query(UserMessage)] == ["change the files"])
        await wait_until(pilot, lambda: [c.path for c in app.sidebar.changes] == ["a.py", "b.py", "c.py"])

        await pilot.press("ctrl+t")  # the key undoes too
        await wait_until(pilot, lambda: app.prompt.text == "change the files")
        assert disk(workspace)["b.py"] is None

        await pilot.press("ctrl+a", "ctrl+k", *"something else", "enter")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_llm.requests) == 6)
        sent = conversation(fake_llm.requests[-1])
        assert "change the files" not in sent and "b = 2" not in sent and "something else" in sent


async def test_an_outside_change_refuses_the_undo_in_the_chat(make_runtime, make_app, fake_llm, workspace: Path):
    runtime = make_runtime(
        policy="interactive",
        config={
            "providers": fake_llm.providers,
            "permission": {"rules": ALLOW_EDITS},
        },
    )
    fake_llm.reply(call("write", filePath="b.py", content="b = 2\n"))
    fake_llm.reply(Text("Wrote it."))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await answered(pilot, app, "write b", lambda: len(fake_llm.requests) == 2)
        (workspace / "b.py").write_text("mine\n")

        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "b.py changed since that turn" in _notices(app))

        assert (workspace / "b.py").read_text() == "mine\n"
        assert app.prompt.text == ""
        assert [m.text for m in app.query(UserMessage)] == ["write b"]


def _notices(app) -> str:
    return " ".join(notice.text for notice in app.chat.query(ChatNotice))


async def test_the_status_bar_weighs_the_history_left_after_an_undo(make_runtime, make_app, fake_llm, workspace: Path):
    """After an undo the next call sends the earlier turns: the bar shows their estimate,
    not "0 tokens", until the provider counts them on that call."""
    runtime = make_runtime(policy="interactive", config={"providers": fake_llm.providers})
    fake_llm.reply(Text("First answer, " + "long " * 400))
    fake_llm.reply(Text("Second answer."))
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(runtime.store.sessions.create(title="titled, so no title request").id)
        await answered(pilot, app, "first", lambda: len(fake_llm.requests) == 1)
        await answered(pilot, app, "second", lambda: len(fake_llm.requests) == 2)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: app.prompt.text == "second")
        assert app.status.context_tokens > 400  # the first turn's 2,000-character answer, and more
        assert f"{format_tokens(app.status.context_tokens)} tokens" in str(app.status.render())
