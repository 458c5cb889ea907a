"""Tab in the prompt switches the primary agent the next prompt goes to (coder, plan,
custom primary agents), driven with Pilot against the real app, runtime and loop."""

from __future__ import annotations

from pathlib import Path

from app.llm.events import TurnStarted
from app.tui.widgets.tool_render import ToolCallView
from tests.tui.conftest import wait_until


async def test_tab_in_the_prompt_switches_the_agent_of_the_next_prompt_and_shift_tab_still_moves_focus(
    make_app, make_runtime, script, workspace: Path
):
    (workspace / "api.py").write_text("x = 1\n")
    edit = {"filePath": "api.py", "oldString": "x = 1", "newString": "x = 2"}
    model = script([{"steps": [
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "api.py"}}]},
        {"toolCalls": [{"name": "edit", "arguments": edit}]},
        {"text": "Planned."},
    ]}])  # fmt: skip
    runtime = make_runtime(policy="interactive", config={"lsp": {"python": {"disabled": True}}})
    started = runtime.bus.subscribe(TurnStarted)
    app = make_app(model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        bar = lambda: str(app.status.render())  # noqa: E731
        assert app.agent == "coder" and "coder" not in bar()
        await pilot.press("tab")
        assert app.agent == "plan" and "plan · " in bar()
        assert app.focused is app.prompt  # tab in the prompt switched agents, not focus
        await pilot.press(*"sketch the change", "enter")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running and len(app.chat.query(ToolCallView)) == 2)
        first = await started.get()
        assert first.agent == "plan"
        _, edit_view = app.chat.query(ToolCallView)
        assert edit_view.has_class("failed") and "plan mode" in str(edit_view.query_one(".tool-error").render())
        assert (workspace / "api.py").read_text() == "x = 1\n"
        for _ in range(len(runtime.agents.primary()) - 1):  # round to the coder again
            await pilot.press("tab")
        assert app.agent == "coder" and "plan · " not in bar()
        await pilot.press("shift+tab")
        assert app.focused is not None and app.chat in app.focused.ancestors_with_self  # shift+tab: into the chat
        await pilot.press(*"ok?")  # a character typed in the chat lands in the prompt
        assert app.focused is app.prompt and app.prompt.text == "ok?"


async def test_tab_goes_round_the_primary_agents_custom_ones_included(make_app, make_runtime, workspace: Path):
    agents = workspace / ".opencode" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\ndescription: Reviews the diff\nmode: primary\ntools: [view, grep]\n---\nYou review code.\n"
    )
    (agents / "helper.md").write_text("---\ndescription: Helps\nmode: subagent\n---\nYou help.\n")
    app = make_app("scripted/demo", runtime=make_runtime(policy="interactive"))
    async with app.run_test(size=(120, 40)) as pilot:
        seen = []
        for _ in range(4):
            await pilot.press("tab")
            seen.append(app.agent)
        assert seen == ["plan", "reviewer", "coder", "plan"]  # a sub-agent is not offered
        assert "plan · " in str(app.status.render())
