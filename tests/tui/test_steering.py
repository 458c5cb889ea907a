"""Messages sent while a reply runs (docs/tui.md, "Steering"), driven by Pilot: the real
app and loop on the fake OpenAI server, a real bash process holding the turn's first
tool step open until the test lets it go, so the messages are sent at a known point."""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.tui.widgets.message_user import UserMessage
from tests.gated_turn import bash, release, users
from tests.llm.fake_openai import Text
from tests.tui.conftest import wait_until


def gated_runtime(make_runtime, fake_llm, workspace: Path):
    """An interactive runtime on the fake model whose bash calls may run, and the FIFO
    ``gate`` a first step of `cat gate` waits on until the test releases it."""
    gate = workspace / "gate"
    os.mkfifo(gate)
    runtime = make_runtime(
        policy="interactive",
        config={"providers": fake_llm.providers, "permission": {"rules": {"bash": "allow"}}, "lsp": {"python": {"disabled": True}}},
    )
    return runtime, gate


async def test_alt_enter_reaches_the_next_step_and_enter_waits_for_the_turn(make_runtime, make_app, fake_llm, workspace: Path):
    runtime, gate = gated_runtime(make_runtime, fake_llm, workspace)
    fake_llm.reply(bash("cat gate", "c1"))
    fake_llm.reply(bash("echo two", "c2"))
    fake_llm.reply(bash("echo three", "c3"))
    fake_llm.reply(Text("All three done."))
    fake_llm.reply(Text("Now the queued one."))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"run three steps", "enter")
        await wait_until(pilot, lambda: len(fake_llm.requests) == 1 and app.turn_running)

        await pilot.press(*"use the staging server", "alt+enter")
        await pilot.press(*"then summarise", "enter")
        await wait_until(pilot, lambda: [kind for kind, _ in app.queued.items] == ["steering", "queued"])
        assert app.prompt.text == ""
        release(gate).join(timeout=60)

        await wait_until(pilot, lambda: len(fake_llm.requests) == 5 and not app.turn_running)
        first, after_first_tool, *rest = fake_llm.requests
        assert users(first) == ["run three steps"]
        messages = after_first_tool["messages"]
        assert messages[-1] == {"role": "user", "content": "use the staging server"}
        assert messages[-2]["role"] == "tool" and messages[-2]["tool_call_id"] == "c1"
        assert all("then summarise" not in users(request) for request in (first, after_first_tool, *rest[:2]))
        assert users(rest[2]) == ["run three steps", "use the staging server", "then summarise"]
        await wait_until(pilot, lambda: not app.queued.items)
        assert [m.text for m in app.query(UserMessage)] == ["run three steps", "use the staging server", "then summarise"]


async def test_a_queued_message_can_be_taken_back_to_edit(make_runtime, make_app, fake_llm, workspace: Path):
    runtime, gate = gated_runtime(make_runtime, fake_llm, workspace)
    fake_llm.reply(bash("cat gate", "c1"))
    fake_llm.reply(Text("Done."))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"wait", "enter")
        await wait_until(pilot, lambda: len(fake_llm.requests) == 1 and app.turn_running)
        await pilot.press(*"typo mesage", "enter")
        await wait_until(pilot, lambda: app.queued.items == [("queued", "typo mesage")])

        await pilot.press("alt+up")  # back in the prompt: cleared, it is gone
        assert app.prompt.text == "typo mesage" and app.queued.items == []
        await pilot.press("ctrl+a", "ctrl+k")
        release(gate).join(timeout=60)
        await wait_until(pilot, lambda: len(fake_llm.requests) == 2 and not app.turn_running)
        assert len(fake_llm.requests) == 2 and "typo mesage" not in json.dumps(fake_llm.requests)
