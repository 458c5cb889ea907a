"""/context and the status bar's token count (app/llm/context_size.py), driven by Pilot:
the real app, the real loop and litellm on the fake OpenAI server (which counts what it
receives), a real MCP server, an AGENTS.md; the figures are held against the requests
the fake server receives."""

from __future__ import annotations

import re
from pathlib import Path

from app.llm.context_size import PARTS
from app.tui.widgets.message_notice import ChatNotice
from tests.llm.fake_openai import MEASURED, Text, measured_tokens
from tests.mcp.conftest import calc_server
from tests.tui.conftest import wait_until


def parts_of(notice: str) -> tuple[dict[str, int], int]:
    """The parts /context listed, and its total."""
    rows = dict(re.findall(r"^(\w[\w ]*?)\s{2,}([\d,]+)", notice, re.MULTILINE))
    numbers = {name: int(value.replace(",", "")) for name, value in rows.items()}
    return {name: numbers[name] for name in PARTS}, numbers["Total"]


async def context_notice(pilot, app) -> str:
    before = len(app.query(ChatNotice))
    await pilot.press(*"/context", "enter")
    await wait_until(pilot, lambda: len(app.query(ChatNotice)) > before)
    return app.query(ChatNotice).last().text


async def test_context_adds_up_to_the_status_bar_and_to_what_the_server_receives(make_runtime, make_app, fake_llm, workspace: Path):
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n" * 40)
    runtime = make_runtime(
        policy="interactive",
        config={"providers": fake_llm.providers, "mcpServers": {"calc": calc_server()}, "lsp": {"python": {"disabled": True}}},
    )
    await runtime.mcp.wait_ready()
    session = runtime.store.sessions.create(title="titled, so no title request")
    runtime.store.messages.add(session.id, "user", [{"type": "text", "text": "an earlier question " * 30}])
    fake_llm.reply(Text("An answer of some length. " * 20), usage=MEASURED)
    fake_llm.reply(Text("Short."), usage=MEASURED)
    app = make_app(fake_llm.model, runtime=runtime)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.open_session(session.id)

            # Before any request: the estimate, which the first request bears out.
            parts, estimated = parts_of(await context_notice(pilot, app))
            assert all(parts[name] > 0 for name in PARTS), parts
            assert sum(parts.values()) == estimated == app.status.context_tokens
            await pilot.press(*"hi", "enter")
            await wait_until(pilot, lambda: len(fake_llm.requests) == 1 and not app.turn_running)
            first = measured_tokens(fake_llm.requests[0])
            assert abs(estimated - first) <= 0.05 * first, (estimated, first)

            # After it: the provider's count wins, and the parts still add up to the bar.
            parts, counted = parts_of(await context_notice(pilot, app))
            assert sum(parts.values()) == counted == app.status.context_tokens
            await pilot.press(*"ok", "enter")
            await wait_until(pilot, lambda: len(fake_llm.requests) == 2 and not app.turn_running)
            second = measured_tokens(fake_llm.requests[1])
            assert abs(counted - second) <= 0.05 * second, (counted, second)
    finally:
        await runtime.mcp.aclose()
