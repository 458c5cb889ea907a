"""The todo panel at the top of the sidebar: a scripted todowrite shows its items live,
the panel is hidden while the list is empty (a new session), and the list comes back
when the session is reopened from the sessions screen (ctrl+s)."""

from __future__ import annotations

from app.tui.screens.sessions import SessionsScreen
from app.tui.widgets.todo_panel import TodoPanel
from app.tui.widgets.tool_render import ToolCallView
from tests.tui.conftest import wait_until

PLAN = [
    {"id": "read", "content": "Read the parser", "status": "completed", "priority": "high"},
    {"id": "fix", "content": "Fix the off-by-one in the tokenizer", "status": "in_progress", "priority": "high"},
    {"id": "test", "content": "Add a regression test", "status": "pending"},
    {"id": "docs", "content": "Update the docs", "status": "cancelled", "priority": "low"},
]
DONE = [{**item, "status": "completed"} if item["id"] == "fix" else item for item in PLAN]


def panel_text(app) -> str:
    return str(app.query_one("#todo-items").render())


async def test_a_scripted_todowrite_shows_live_and_comes_back_when_the_session_is_reopened(make_app, script):
    model = script([{"steps": [
        {"toolCalls": [{"name": "todowrite", "arguments": {"todos": PLAN}}]},
        {"toolCalls": [{"name": "todowrite", "arguments": {"todos": DONE}}]},
        {"text": "Planned and fixed."},
    ]}])
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(TodoPanel)
        assert not panel.display  # nothing planned yet: hidden
        await pilot.press(*"fix the tokenizer", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.session_id is not None)
        planned = app.session_id
        await wait_until(pilot, lambda: [todo.status for todo in panel.todos] == [i["status"] for i in DONE])
        assert panel.display
        assert panel_text(app).splitlines() == [
            "✓ Read the parser",
            "✓ Fix the off-by-one in the tokenizer",
            "○ Add a regression test",
            "✗ Update the docs",
        ]
        assert str(app.query_one("#todo-title").render()) == "Todo  2/4"
        headers = [str(view.query_one(".tool-header").render()) for view in app.query(ToolCallView)]
        assert [header.split("  ")[-1] for header in headers] == ["1/4 done", "2/4 done"]

        await pilot.press("ctrl+n")  # a new session has no list: the panel goes
        await wait_until(pilot, lambda: app.session_id is None and not panel.display)

        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await wait_until(pilot, lambda: app.screen.query_one("#sessions-list").option_count == 1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session_id == planned and panel.display)
        assert [todo.content for todo in panel.todos] == [item["content"] for item in DONE]


def _planned_session(runtime) -> str:
    """A stored conversation whose list holds one item of each status, and a changed file."""
    from app.store import TodoItem
    from tests.tui.chat_samples import SAMPLES, store_tool_conversation

    session_id = store_tool_conversation(runtime, SAMPLES["edit"], title="Todo panel")
    runtime.store.todos.replace(session_id, [TodoItem(**{"priority": "medium", **item}) for item in PLAN])
    runtime.store.history.create(session_id, "src/tokenizer.py", "a = 1\n")
    runtime.store.history.create_version(session_id, "src/tokenizer.py", "a = 2\nb = 3\n")
    return session_id


def _show(app, session_id: str):
    async def show(pilot) -> None:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        sidebar = app.query_one("#sidebar")
        await wait_until(pilot, lambda: len(sidebar.changes) == 1 and len(app.query_one(TodoPanel).todos) == 4)
        await pilot.pause()

    return show


def test_snapshot_of_the_todo_panel_in_a_dark_theme(snap_compare, make_app, tui_runtime):
    session_id = _planned_session(tui_runtime)
    app = make_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=_show(app, session_id))


def test_snapshot_of_the_todo_panel_in_a_light_theme(snap_compare, make_runtime, make_app):
    runtime = make_runtime(policy="interactive", config={"tui": {"theme": "one-light"}})
    session_id = _planned_session(runtime)
    app = make_app(runtime=runtime)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_show(app, session_id))
