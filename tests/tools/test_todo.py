"""The todo tools: todowrite replaces the session's list (validated, one-line errors),
todoread returns it, the list survives the process, and the coder's turn writes it with
nobody asked, even where every question is refused (headless)."""

from __future__ import annotations

import asyncio

import pytest

from app.agents.catalog import AgentCatalog
from app.core.errors import ToolError
from app.llm.agent import AgentLoop
from app.llm.scripted import Script, ScriptedProvider
from app.runtime import Runtime
from app.store import TodoItem, TodosUpdated
from app.tools.todo import MAX_TODOS, TodoReadTool, TodoWriteTool

PLAN = [
    {"id": "read", "content": "Read the parser", "status": "completed", "priority": "high"},
    {"id": "fix", "content": "Fix the off-by-one", "status": "in_progress", "priority": "high"},
    {"id": "test", "content": "Add a test", "status": "pending"},
    {"id": "docs", "content": "Update the docs", "status": "cancelled", "priority": "low"},
]


async def test_write_then_read_returns_the_list_in_order(ctx):
    written = await TodoWriteTool().call({"todos": PLAN}, ctx)
    read = await TodoReadTool().call({}, ctx)
    assert read.output == written.output
    assert read.output.splitlines() == [
        "Todo list (1 of 4 completed):",
        "[x] Read the parser (id read, high)",
        "[>] Fix the off-by-one (id fix, high)",
        "[ ] Add a test (id test, medium)",
        "[-] Update the docs (id docs, low)",
    ]
    assert read.metadata["todos"][2] == {"id": "test", "content": "Add a test", "status": "pending", "priority": "medium"}
    assert written.title == "2 of 4 todos open"


async def test_each_write_replaces_the_whole_list_and_is_announced(ctx, runtime):
    async with runtime.bus.subscribe(TodosUpdated) as events:
        await TodoWriteTool().call({"todos": PLAN}, ctx)
        await TodoWriteTool().call({"todos": [{"content": "Only this", "status": "pending"}]}, ctx)
        first = await asyncio.wait_for(events.get(), 10)
        second = await asyncio.wait_for(events.get(), 10)
    assert [todo.id for todo in first.todos] == ["read", "fix", "test", "docs"]
    assert second == TodosUpdated(ctx.session_id, (TodoItem("1", "Only this", "pending", "medium"),))
    assert runtime.store.todos.get(ctx.session_id) == list(second.todos)


async def test_an_empty_list_clears_it(ctx):
    await TodoWriteTool().call({"todos": PLAN}, ctx)
    await TodoWriteTool().call({"todos": []}, ctx)
    assert (await TodoReadTool().call({}, ctx)).output == "The todo list is empty."


async def test_lists_are_per_session(ctx, runtime):
    other = runtime.context(runtime.store.sessions.create().id)
    await TodoWriteTool().call({"todos": PLAN}, ctx)
    assert (await TodoReadTool().call({}, other)).output == "The todo list is empty."


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ([{"content": "x", "status": "done"}], "todos.0.status: Input should be 'pending', 'in_progress', 'completed' or 'cancelled'"),
        ([{"content": "x", "status": "pending", "priority": "urgent"}], "todos.0.priority: Input should be 'high', 'medium' or 'low'"),
        ([{"content": "  \n ", "status": "pending"}], "todos.0.content: Value error, is empty: say what the step is"),
        ([{"status": "pending"}], "todos.0.content is required"),
        ([{"content": "x", "status": "pending", "owner": "me"}], "todos.0.owner is not a parameter of this tool"),
        ([{"content": "x", "status": "pending", "id": "a"}, {"content": "y", "status": "pending", "id": "a"}],
         'todowrite: the id "a" is used twice: give every item its own id'),
        ([{"content": "x", "status": "pending"}] * (MAX_TODOS + 1), f"todos: List should have at most {MAX_TODOS} items"),
    ],
)
async def test_bad_lists_are_refused_in_one_line_and_keep_the_old_one(ctx, todos, message):
    await TodoWriteTool().call({"todos": PLAN}, ctx)
    with pytest.raises(ToolError) as caught:
        await TodoWriteTool().call({"todos": todos}, ctx)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert len(ctx.todos.get(ctx.session_id)) == len(PLAN)


async def test_content_is_kept_on_one_line(ctx):
    await TodoWriteTool().call({"todos": [{"content": "Fix\n  the   parser", "status": "pending"}]}, ctx)
    assert ctx.todos.get(ctx.session_id)[0].content == "Fix the parser"


async def test_the_list_comes_back_with_the_session_in_a_new_process(make_runtime, workspace):
    first = make_runtime()
    session = first.store.sessions.create(title="plan")
    await TodoWriteTool().call({"todos": PLAN}, first.context(session.id))
    first.close()
    again = Runtime.build(workspace, config=first.config)
    try:
        assert [todo.content for todo in again.store.todos.get(session.id)] == [item["content"] for item in PLAN]
        again.store.sessions.delete(session.id)
        assert again.store.todos.get(session.id) == []
    finally:
        again.close()


def test_the_coder_and_the_workhorse_have_both_tools():
    for name in ("coder", "workhorse"):
        assert {"todowrite", "todoread"} <= set(AgentCatalog().get(name).tools)
    assert "todowrite" not in AgentCatalog().get("explorer").tools


async def test_a_headless_turn_writes_the_list_without_a_question(make_runtime):
    runtime = make_runtime(policy="headless")  # every question would be refused
    session = runtime.store.sessions.create()
    script = Script.model_validate(
        {"turns": [{"steps": [{"toolCalls": [{"name": "todowrite", "arguments": {"todos": PLAN}}]}, {"text": "planned"}]}]}
    )
    loop = AgentLoop(runtime, ScriptedProvider(script))
    try:
        result = await loop.run(session.id, "plan the fix", model="scripted/test")
    finally:
        await loop.aclose()
    assert result.response == "planned"
    assert [todo.status for todo in runtime.store.todos.get(session.id)] == [item["status"] for item in PLAN]


async def test_a_deny_rule_holds(make_runtime):
    runtime = make_runtime(config={"permission": {"rules": {"todowrite": "deny"}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(ToolError, match='todowrite the todo list: denied by global rule "\\*"'):
        await TodoWriteTool().call({"todos": PLAN}, ctx)
    assert runtime.store.todos.get(ctx.session_id) == []


async def test_undo_and_redo_of_a_turn_take_its_todo_list_back_and_bring_it_again(make_runtime):
    from app.prompt.turn_undo import redo_turn, undo_turn

    runtime = make_runtime()
    session = runtime.store.sessions.create()
    later = [{**PLAN[1], "status": "completed"}]
    script = Script.model_validate({"turns": [
        {"match": "first", "steps": [{"toolCalls": [{"name": "todowrite", "arguments": {"todos": PLAN}}]}, {"text": "ok"}]},
        {"match": "second", "steps": [{"toolCalls": [{"name": "todowrite", "arguments": {"todos": later}}]}, {"text": "ok"}]},
    ]})  # fmt: skip
    loop = AgentLoop(runtime, ScriptedProvider(script))
    try:
        await loop.run(session.id, "first", model="scripted/test")
        await loop.run(session.id, "second", model="scripted/test")
    finally:
        await loop.aclose()
    contents = lambda: [todo.content for todo in runtime.store.todos.get(session.id)]  # noqa: E731
    assert contents() == [PLAN[1]["content"]]
    await undo_turn(runtime, session.id)
    assert contents() == [item["content"] for item in PLAN]
    await undo_turn(runtime, session.id)
    assert contents() == []
    await redo_turn(runtime, session.id)
    await redo_turn(runtime, session.id)
    assert contents() == [PLAN[1]["content"]]
