"""/export in the TUI (docs/export.md): the transcript lands in a new markdown file in
the workspace root, never over an existing one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.llm.fake_openai import Text, ToolCall
from tests.tui.conftest import wait_until


async def test_export_writes_the_transcript_in_the_workspace(make_runtime, make_app, fake_llm, workspace: Path):
    runtime = make_runtime(
        policy="interactive",
        config={
            "providers": fake_llm.providers,
            "permission": {"rules": {"write": "allow"}},
        },
    )
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "b.py", "content": "b = 2\n"}), id="call_1"))
    fake_llm.reply(Text("Wrote b.py."))
    session = runtime.store.sessions.create(title="export me")
    taken = workspace / f"opencode-session-{session.id}.md"
    taken.write_text("an earlier export\n")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"write b", "enter")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_llm.requests) == 2)

        await pilot.press(*"/export", "enter")
        written = workspace / f"opencode-session-{session.id}-2.md"
        await wait_until(pilot, written.exists)

        text = written.read_text()
        assert "## User\n\nwrite b\n" in text and "**Tool call: write**" in text and "+b = 2" in text
        assert taken.read_text() == "an earlier export\n"
        await wait_until(pilot, lambda: any(written.name in str(t.render()) for t in app.screen.query("Toast")))
        await pilot.press(*"/export json", "enter")
        as_json = workspace / f"opencode-session-{session.id}.json"
        await wait_until(pilot, as_json.exists)
        assert json.loads(as_json.read_text())["session"]["title"] == "export me"
        assert len(fake_llm.requests) == 2  # /export never reached the model
