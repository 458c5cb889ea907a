"""The TUI on Anthropic's wire format (the fake from tests/llm): thinking shows as
collapsed reasoning, and the status bar shows what the prompt cache read and wrote."""

from __future__ import annotations

from app.tui.widgets.message_assistant import ReasoningBlock
from tests.llm.conftest import fake_anthropic  # noqa: F401 - the fixture
from tests.llm.fake_anthropic import Reasoning, Text
from tests.tui.conftest import wait_until


async def test_thinking_folds_away_and_the_status_bar_shows_cache_reads(make_runtime, make_app, fake_anthropic):  # noqa: F811
    config = {"providers": {"anthropic": {"apiKey": fake_anthropic.api_key, "baseURL": fake_anthropic.base_url}}}
    config["agents"] = {"coder": {"reasoningEffort": "low"}}
    runtime = make_runtime(policy="interactive", config=config)
    fake_anthropic.reply(Reasoning("They greet me."), Text("Hello!"))
    fake_anthropic.reply(Text("Hello again!"))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_anthropic.model, runtime=runtime)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_anthropic.reported) == 1, timeout=60)
        await wait_until(pilot, lambda: [b.text for b in app.query(ReasoningBlock)] == ["They greet me."])
        [thinking] = app.query(ReasoningBlock)
        assert thinking.collapsed
        written = fake_anthropic.reported[0]["cache_creation_input_tokens"]
        await wait_until(pilot, lambda: (app.status.cache_read, app.status.cache_write) == (0, written))

        await pilot.press(*"again", "enter")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_anthropic.reported) == 2, timeout=60)
        read = fake_anthropic.reported[1]["cache_read_input_tokens"]
        assert read > 0
        await wait_until(pilot, lambda: app.status.cache_read == read)
        assert f"cache {read / 1000:.1f}k read" in str(app.status.render())
