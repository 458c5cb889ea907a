"""Sub-agents in the TUI, driven with Pilot against the real app, runtime and agent loop
with a scripted model: the task block in the parent's chat (live status, call counter,
answer), the child's transcript, the permission question naming the sub-agent, the
sidebar and the status bar following the children, and escape stopping them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from app.llm.events import (
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnStarted,
)
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.screens.transcript import TranscriptScreen
from app.tui.widgets.task_view import TaskView
from app.tui.widgets.tool_render import ToolCallView
from tests.llm.fake_openai import Text, ToolCall
from tests.tui.conftest import palette_offers, wait_until

ASK_VIEW = {"agents": {"explorer": {"permission": {"view": {"greet.py": "ask"}}}}, "lsp": {"python": {"disabled": True}}}
"""The explorer asks before it reads greet.py, so a test can hold a child mid-run on the
question (its grep of the whole tree asks nothing: only a deny leaves a file out)."""

EXPLORE = [
    {"match": "^where", "steps": [
        {"toolCalls": [{"name": "task", "arguments": {"description": "find the greeting", "prompt": "EXPLORE greet"}}]},
        {"text": "The explorer found it."},
    ]},
    {"match": "^EXPLORE", "steps": [
        {"toolCalls": [{"name": "grep", "arguments": {"pattern": "Hello"}}]},
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "greet.py"}}]},
        {"text": "**greet.py** line 1 greets."},
    ]},
]  # fmt: skip


def header(view: ToolCallView) -> str:
    return str(view.query_one(".tool-header").render())


def asked(app, tool: str) -> bool:
    """The permission question on screen is about ``tool`` and takes keys."""
    return isinstance(app.screen, PermissionScreen) and app.screen.request.tool == tool and app.screen.ready


def task_block(app) -> TaskView:
    return app.chat.query_one(TaskView)


@pytest.fixture
def greeting_app(make_app, make_runtime, script, workspace: Path):
    """The app whose model hands "where is the greeting" to the explorer, with greet.py to
    find (ASK_VIEW: the explorer asks before it views the file)."""
    (workspace / "greet.py").write_text("print('Hello')\n")
    return make_app(script(EXPLORE), runtime=make_runtime(policy="interactive", config=ASK_VIEW))


async def ask_where_the_greeting_is(pilot, app) -> None:
    """Send the prompt; return once the explorer waits on its question to view greet.py."""
    await pilot.press(*"where is the greeting", "enter")
    await wait_until(pilot, lambda: asked(app, "view"))


async def test_the_task_block_names_the_sub_agent_shows_its_live_call_and_its_answer(greeting_app):
    app = greeting_app
    async with app.run_test(size=(120, 40)) as pilot:
        await ask_where_the_greeting_is(pilot, app)
        # The child waits on its question: its block shows it running, on its second call.
        block = task_block(app)
        assert block.state == "running" and block.calls == 2
        assert "explorer · find the greeting" in header(block) and "2 calls" in header(block)
        assert "↳ view greet.py" in str(block.query_one(".task-status").render())
        assert [view.tool for view in app.chat.query(ToolCallView)] == ["task"]
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running and block.finished)
        assert block.state == "done" and "done · 2 calls" in header(block)
        assert not block.query(".task-status")
        assert "line 1 greets" in block.query_one(".task-answer").source


async def open_the_finished_task(pilot, app) -> TaskView:
    """Let the explorer finish, then open its transcript from its block; the block."""
    await ask_where_the_greeting_is(pilot, app)
    await pilot.press("a")
    block = task_block(app)
    await wait_until(pilot, lambda: not app.turn_running and block.finished)
    await pilot.press("shift+tab")  # from the prompt back into the chat: its last block
    assert app.focused is block
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
    return block


async def test_enter_on_the_task_block_opens_the_childs_transcript_and_escape_returns(greeting_app):
    app = greeting_app
    async with app.run_test(size=(120, 40)) as pilot:
        block = await open_the_finished_task(pilot, app)
        transcript = app.screen
        assert transcript.session_id == block.child_session_id
        assert [view.tool for view in transcript.chat.query(ToolCallView)] == ["grep", "view"]
        assert "line 1 greets" in transcript.chat.query("AssistantMessage").last().text
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        assert app.focused is app.prompt


async def test_text_typed_after_closing_a_transcript_arrives_whole_in_the_prompt(greeting_app):
    """The keys right after escape, spaces included, reach the prompt, not the task block
    that opened the transcript (space would toggle its answer, enter reopen it)."""
    app = greeting_app
    async with app.run_test(size=(120, 40)) as pilot:
        block = await open_the_finished_task(pilot, app)
        await pilot.press("escape", *"typed after closing the transcript")
        assert app.screen is app.prompt.screen
        assert app.prompt.text == "typed after closing the transcript"
        assert not block.expanded
        await pilot.press("shift+tab", "enter")  # the block still opens it again
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        await pilot.press("escape", *" more")
        assert app.prompt.text == "typed after closing the transcript more"


async def test_a_reopened_session_shows_the_finished_task_block_whose_transcript_still_opens(
    make_app, make_runtime, script, workspace: Path
):
    (workspace / "greet.py").write_text("print('Hello')\n")
    runtime = make_runtime(policy="headless-yes", config={"lsp": {"python": {"disabled": True}}})
    app = make_app(script(EXPLORE), runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"where is the greeting", "enter")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running and app.chat.query(TaskView))
        session_id = app.session_id
        await app.open_session(None)
        await app.open_session(session_id)
        block = task_block(app)
        assert block.state == "done" and block.title == "explorer · find the greeting"
        assert "line 1 greets" in block.query_one(".task-answer").source
        block.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        assert [view.tool for view in app.screen.chat.query(ToolCallView)] == ["grep", "view"]
        await pilot.press("escape")
        # The palette lists the session's tasks too, wherever their blocks are.
        await pilot.press("ctrl+p", *"sub-agent find")
        await wait_until(pilot, lambda: palette_offers(app, "Sub-agent: find the greeting"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        assert app.screen.session_id == block.child_session_id


def priced_fake(fake_llm) -> dict:
    """The fake server as the openai provider, at $1,000 per million prompt tokens: each
    reply (10 prompt tokens) costs $0.01."""
    return {
        "lsp": {"python": {"disabled": True}},
        "providers": {"openai": {
            "apiKey": fake_llm.api_key, "baseURL": fake_llm.base_url,
            "models": {"fake-model": {"contextWindow": 100_000, "cost": {"input": 1000, "output": 0}}},
        }},
    }  # fmt: skip


def two_tasks() -> list[ToolCall]:
    return [
        ToolCall("task", json.dumps({"description": f"look at {name}", "prompt": f"EXPLORE {name}"}), id=f"call_{name}")
        for name in ("api", "cli")
    ]


async def test_two_children_run_live_their_cost_rolls_up_and_escape_stops_both(
    make_app, make_runtime, fake_llm, workspace: Path
):
    runtime = make_runtime(policy="interactive", config=priced_fake(fake_llm))
    fake_llm.reply(*two_tasks())
    for _ in range(2):  # each child: a grep, then an answer that stalls half way (the server holds it)
        fake_llm.reply(ToolCall("grep", json.dumps({"pattern": "def "})))
    for _ in range(2):
        fake_llm.reply(Text("Found it "), Text("in "), Text("the end"), hang_after=2)
    session = runtime.store.sessions.create(title="titled, so no title request")
    cancelled = runtime.bus.subscribe(TurnCancelled)
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        frame = app.status.frame
        await pilot.press(*"look around", "enter")
        await wait_until(pilot, lambda: len(app.chat.query(TaskView)) == 2)
        blocks = list(app.chat.query(TaskView))
        # Both children are half way through their answers at once: they run in parallel.
        await wait_until(pilot, lambda: len(fake_llm.requests) == 5 and all(b.calls == 1 for b in blocks))
        assert {b.title for b in blocks} == {"explorer · look at api", "explorer · look at cli"}
        # The children's progress moves the parent's spinner: the parent's own is its two
        # task calls, and each child's grep started and finished (four more).
        await wait_until(pilot, lambda: app.status.frame - frame >= 6)
        assert all("↳ grep def" in str(b.query_one(".task-status").render()) for b in blocks)
        # Three replies of $0.01 have ended (the stalled ones have no usage yet), two of
        # them the children's: the bar shows all three.
        await wait_until(pilot, lambda: "$0.03" in str(app.status.render()))
        assert runtime.store.sessions.get(session.id).cost == pytest.approx(0.01)

        # The transcript of a running child shows what it did so far and what streams now.
        blocks[0].focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        chat = app.screen.chat
        await wait_until(pilot, lambda: chat.query("AssistantMessage") and "Found it" in chat.query("AssistantMessage").last().text)
        assert [view.tool for view in chat.query(ToolCallView)] == ["grep"]
        assert app.screen.state == "running"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        assert app.focused is app.prompt

        await pilot.press("escape")  # escape in the parent stops the children too
        await wait_until(pilot, lambda: not app.turn_running and all(b.finished for b in blocks))
        assert [b.state for b in blocks] == ["cancelled", "cancelled"]
        ended = [event.session_id for event in cancelled.drain()]
        assert sorted(ended) == sorted([session.id, *(b.child_session_id for b in blocks)])


ANSWER = "\n".join(
    ["Added **three** tests to `tests/test_api.py`:", ""]
    + [f"- `test_get_{n}` checks status {200 + n}" for n in range(8)]
)


def three_blocks(app, runtime):
    """A running, a finished and a failed task block, from the events the loop publishes."""

    async def show(pilot) -> None:
        app.prompt.cursor_blink = False
        session = runtime.store.sessions.create(title="Add API tests")
        await app.open_session(session.id)
        runtime.store.messages.add(session.id, "user", [{"type": "text", "text": "add tests for the API"}])
        bus = runtime.bus
        tasks = [("c-run", "workhorse", "add tests"), ("c-done", "workhorse", "test the API"), ("c-fail", "explorer", "find the routes")]
        for call_id, agent, description in tasks:
            arguments = {"description": description, "prompt": "...", "subagent_type": agent}
            bus.publish(ToolCallStarted(session.id, "m-1", call_id, "task", arguments))
            bus.publish(SubagentStarted(session.id, call_id, f"child-{call_id}", agent, description))
        for call_id, tool, arguments in (
            ("c-run", "view", {"filePath": "app/api.py"}),
            ("c-run", "edit", {"filePath": "tests/test_api.py", "oldString": "a", "newString": "b"}),
            ("c-done", "view", {"filePath": "app/api.py"}),
            ("c-done", "write", {"filePath": "tests/test_api.py", "content": "x"}),
            ("c-done", "bash", {"command": "pytest -q tests/test_api.py"}),
            ("c-fail", "grep", {"pattern": "@route"}),
        ):
            bus.publish(ToolCallStarted(f"child-{call_id}", f"m-{call_id}", f"{call_id}-{tool}", tool, arguments))
        bus.publish(ToolCallFinished(session.id, "m-1", "c-done", "task", ANSWER, {"session_id": "child-c-done", "agent": "workhorse"}))
        bus.publish(ToolCallFinished(
            session.id, "m-1", "c-fail", "task",
            "task: the explorer failed (the model call failed: 503); search with glob, grep and view instead", {}, True,
        ))  # fmt: skip
        blocks = lambda: list(app.chat.query(TaskView))  # noqa: E731
        await wait_until(pilot, lambda: [b.state for b in blocks()] == ["running", "done", "failed"] and blocks()[0].calls == 2)
        await wait_until(pilot, lambda: blocks()[1].query(".task-more"))
        await pilot.pause()

    return show


@pytest.mark.parametrize(("theme", "size"), [("opencode", (120, 40)), ("one-light", (80, 24))], ids=["dark", "light_80x24"])
def test_snapshot_of_task_blocks_running_done_and_failed(snap_compare, make_app, make_runtime, theme, size):
    runtime = make_runtime(policy="interactive", config={"tui": {"theme": theme}, "lsp": {"python": {"disabled": True}}})
    app = make_app("scripted/demo", runtime=runtime)
    assert snap_compare(app, terminal_size=size, run_before=three_blocks(app, runtime))


WORKHORSE = [{"match": "^WORK", "steps": [
    {"toolCalls": [{"name": "view", "arguments": {"filePath": "api.py"}}]},
    {"toolCalls": [
        {"name": "edit", "arguments": {"filePath": "api.py", "oldString": "return 1", "newString": "return 2\n# checked"}},
        {"name": "delete", "arguments": {"path": "old_test.py"}},
    ]},
    {"text": "Done."},
]}]  # fmt: skip


async def test_the_parents_sidebar_lists_a_childs_changes_live_and_reverts_them(
    make_app, make_runtime, script, workspace: Path
):
    from app.llm.agent import AgentLoop
    from app.llm.scripted import provider_for
    from tests.tui.test_sidebar import revert_with_answer

    (workspace / "api.py").write_text("def get():\n    return 1\n")
    (workspace / "old_test.py").write_text("x = 1\ny = 2\n")
    runtime = make_runtime(policy="interactive", config={"lsp": {"python": {"disabled": True}}})
    model = script(WORKHORSE)
    parent = runtime.store.sessions.create(title="parent")
    child = runtime.store.sessions.create(title="add checks", parent_id=parent.id)
    app = make_app(model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(parent.id)
        shown = lambda: {c.path: (c.additions, c.deletions, c.deleted) for c in app.sidebar.changes}  # noqa: E731
        # The child runs in the real loop, as the workhorse, while the parent is on screen.
        loop = AgentLoop(runtime, provider_for(model))
        work = asyncio.create_task(loop.run(child.id, "WORK on api.py", agent="workhorse", model=model))
        for tool in ("edit", "delete"):  # each asks, and is approved from the keyboard
            await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.request.tool == tool and app.screen.ready)  # noqa: B023 - awaited at once
            assert app.screen.request.agent == "workhorse"
            if tool == "delete":  # the edit shows in the parent's sidebar while the child still runs
                await wait_until(pilot, lambda: shown() == {"api.py": (2, 1, False)})
            await pilot.press("a")
        await work
        await wait_until(pilot, lambda: shown() == {"api.py": (2, 1, False), "old_test.py": (0, 2, True)})
        for path in ("api.py", "old_test.py"):
            await revert_with_answer(app, pilot, path, "y")
            await wait_until(pilot, lambda: path not in shown())  # noqa: B023 - awaited at once
        assert (workspace / "api.py").read_text() == "def get():\n    return 1\n"
        assert (workspace / "old_test.py").read_text() == "x = 1\ny = 2\n"



def test_the_answer_shown_leaves_out_the_task_tools_note_to_the_model():
    from app.tui.widgets.task_view import model_note_removed

    note = "\n\ntask_id: c-1 (subagent_type workhorse: pass this task_id to continue the task). It ended early (max_steps)."
    assert model_note_removed("Added **two** tests." + note, "c-1") == "Added **two** tests."
    assert model_note_removed("An answer mentioning task_id: c-1", None) == "An answer mentioning task_id: c-1"
    assert model_note_removed("No note here.", "c-1") == "No note here."


WORKHORSE_TASK = [
    {"match": "^add tests", "steps": [
        {"toolCalls": [{"name": "task", "arguments": {
            "description": "add tests", "prompt": "WORK: add a test", "subagent_type": "workhorse"}}]},
        {"text": "The workhorse added the test."},
    ]},
    {"match": "^WORK", "steps": [
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "tests/test_api.py"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {
            "filePath": "tests/test_api.py", "oldString": "    pass", "newString": "    assert get() == 200"}}]},
        {"text": "Added the assertion."},
    ]},
]  # fmt: skip


async def test_a_workhorse_asks_naming_itself_and_its_task_and_the_parent_shows_its_work(
    make_app, make_runtime, script, workspace: Path
):
    """The issue's "Done when": a workhorse's ask opens the modal naming the sub-agent and
    task; a approves; the sidebar shows the child's file with its counts; the task block
    shows the sub-agent and its live call; its transcript opens and escape returns."""
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_api.py").write_text("def test_get():\n    pass\n")
    runtime = make_runtime(policy="interactive", config={"lsp": {"python": {"disabled": True}}})
    app = make_app(script(WORKHORSE_TASK), runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"add tests for the API", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        question = app.screen
        assert (question.request.agent, question.request.task) == ("workhorse", "add tests")
        heading = str(question.query_one("#permission-heading").render())
        assert heading == "Permission required  workhorse · add tests: edit tests/test_api.py"
        block = task_block(app)
        assert block.state == "running" and block.title == "workhorse · add tests"
        # The question and the child's call reach the chat as separate bus events.
        await wait_until(pilot, lambda: block.calls == 2 and "↳ edit tests/test_api.py" in str(block.query_one(".task-status").render()))
        await pilot.press("a")
        await wait_until(pilot, lambda: [(c.path, c.additions, c.deletions) for c in app.sidebar.changes] == [("tests/test_api.py", 1, 1)])
        await wait_until(pilot, lambda: not app.turn_running and block.finished)
        assert (workspace / "tests" / "test_api.py").read_text() == "def test_get():\n    assert get() == 200\n"
        assert block.state == "done" and "Added the assertion." in block.query_one(".task-answer").source
        assert "task_id" not in block.query_one(".task-answer").source  # the model's note, not the person's
        block.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        assert [view.tool for view in app.screen.chat.query(ToolCallView)] == ["view", "edit"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        assert app.focused is app.prompt


async def test_a_continued_task_shows_its_new_calls_in_its_own_block(make_app, make_runtime, workspace: Path):
    from tests.llm.fake_routes import RoutedOpenAI
    from tests.llm.test_subagents import call, calls, last_tool_output, task, text

    def continue_the_task(body: dict) -> object:
        task_id = re.search(r"task_id: (\S+)", last_tool_output(body)).group(1)
        return calls(call("task", "again", description="follow up", prompt="and the tests?", task_id=task_id))

    (workspace / "greet.py").write_text("print('Hello')\n")
    server = RoutedOpenAI().start()
    try:
        server.route("FIRST", calls(task("t1", "RESEARCH: where is the greeting?")), text("found it"),
                     continue_the_task, text("both answers in"))  # fmt: skip
        server.route("RESEARCH", text("greet.py line 1"), calls(call("grep", "g1", pattern="def test")), text("none"))
        runtime = make_runtime(policy="interactive", config=priced_fake(server))
        app = make_app(server.model, runtime=runtime)
        async with app.run_test(size=(120, 40)) as pilot:
            await app.open_session(runtime.store.sessions.create(title="titled").id)
            await pilot.press(*"FIRST look", "enter")
            await wait_until(pilot, lambda: not app.turn_running and len(app.chat.query(TaskView)) == 1)
            await pilot.press(*"now the tests", "enter")
            await wait_until(pilot, lambda: not app.turn_running and len(app.chat.query(TaskView)) == 2)
            first, again = app.chat.query(TaskView)
            assert first.child_session_id == again.child_session_id
            assert (first.calls, again.calls) == (0, 1) and again.state == "done"
            assert again.title == "explorer · follow up"
    finally:
        server.close()



async def test_on_a_blank_session_another_sessions_usage_leaves_the_cost_alone(make_app, tui_runtime):
    from app.lsp.events import LspStatusChanged

    app = make_app("scripted/demo")
    async with app.run_test(size=(120, 40)) as pilot:
        bar = lambda: str(app.status.render())  # noqa: E731
        sessions = tui_runtime.store.sessions
        other = sessions.create(title="elsewhere")
        sessions.add_usage(other.id, 1000, 10, 0.5)
        sessions.add_usage(sessions.create(title="its task", parent_id=other.id).id, 1000, 10, 0.25)
        tui_runtime.bus.publish(LspStatusChanged("marker", "ready"))  # drawn after the usage events
        await wait_until(pilot, lambda: "LSP marker" in bar())
        assert app.session_id is None and "$0.00" in bar()


async def test_a_task_refused_before_it_starts_shows_failed_and_has_no_transcript_to_open(
    make_app, make_runtime, script, workspace: Path
):
    model = script([{"steps": [
        {"toolCalls": [{"name": "task", "arguments": {"description": "do it", "prompt": "x", "subagent_type": "nobody"}}]},
        {"text": "Could not."},
    ]}])  # fmt: skip
    app = make_app(model, runtime=make_runtime(policy="interactive"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"delegate", "enter")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running and app.chat.query(TaskView))
        block = task_block(app)
        assert block.state == "failed" and block.child_session_id is None
        assert "nobody" in str(block.query_one(".tool-error").render())
        block.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.prompt.screen


async def test_a_transcripts_heading_follows_its_sub_agents_turns(make_app, tui_runtime):
    app = make_app("scripted/demo")
    async with app.run_test(size=(120, 40)) as pilot:
        parent = tui_runtime.store.sessions.create(title="parent")
        child = tui_runtime.store.sessions.create(title="look", parent_id=parent.id)
        app.open_transcript(child.id, "explorer · look")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        transcript = app.screen
        heading = lambda: str(transcript.query_one("#transcript-title").render())  # noqa: E731
        await wait_until(pilot, lambda: heading())
        assert heading() == "explorer · look  sub-agent transcript"  # it had ended (or not begun) when opened
        for event, state in ((TurnStarted(child.id, "explorer", "m"), "running"), (TurnFailed(child.id, "boom"), "failed")):
            tui_runtime.bus.publish(event)
            await wait_until(pilot, lambda: heading().endswith(f" · {state}"))  # noqa: B023 - awaited at once
