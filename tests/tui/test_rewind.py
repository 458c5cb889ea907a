"""/rewind in the TUI (docs/undo.md), driven by Pilot: the real app, the real loop on
the fake OpenAI server, real files and SQLite."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from app.tui.screens.rewind import RewindScreen
from app.tui.widgets.message_user import UserMessage
from tests.llm.fake_openai import Text
from tests.tui.conftest import wait_until
from tests.tui.test_turn_undo import ALLOW_EDITS, call


async def test_rewind_picks_a_turn_then_what_to_take_back(make_runtime, make_app, fake_llm, workspace: Path):
    runtime = make_runtime(
        policy="interactive",
        config={"providers": fake_llm.providers, "permission": {"rules": ALLOW_EDITS}, "lsp": {"python": {"disabled": True}}},
    )
    for number in (1, 2, 3):
        fake_llm.reply(call("write", filePath=f"f{number}.txt", content=f"{number}\n"))
        fake_llm.reply(Text(f"wrote {number}"))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        for number in (1, 2, 3):
            await pilot.press(*f"write {number}", "enter")
            await wait_until(pilot, lambda n=number: not app.turn_running and len(fake_llm.requests) == 2 * n)

        await pilot.press(*"/rewind", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        listing = app.screen.query_one(OptionList)
        assert [str(listing.get_option_at_index(i).prompt) for i in range(3)] == [
            "   3. write 3", "   2. write 2", "   1. write 1",
        ]
        await pilot.press("down", "enter")  # turn 2: then files and conversation, the first choice
        await wait_until(pilot, lambda: app.screen.query_one(OptionList).option_count == 3 and app.screen.chosen is not None)
        await pilot.press("enter")

        await wait_until(pilot, lambda: app.prompt.text == "write 2")
        assert sorted(path.name for path in workspace.glob("f*.txt")) == ["f1.txt"]
        await wait_until(pilot, lambda: [m.text for m in app.query(UserMessage)] == ["write 1"])

        await pilot.press("ctrl+a", "ctrl+k", *"/redo", "enter")
        await wait_until(pilot, lambda: sorted(path.name for path in workspace.glob("f*.txt")) == ["f1.txt", "f2.txt", "f3.txt"])
        await wait_until(pilot, lambda: [m.text for m in app.query(UserMessage)] == ["write 1", "write 2", "write 3"])

        await pilot.press(*"/rewind 3 files", "enter")  # typed with its turn: no list
        await wait_until(pilot, lambda: not (workspace / "f3.txt").exists())
        assert [m.text for m in app.query(UserMessage)] == ["write 1", "write 2", "write 3"]
        assert len(fake_llm.requests) == 6
