"""What a new user meets in the first minutes (issue 13), driven with Pilot against the
real app, a real runtime and a scripted model: the status bar while a question waits,
what "Allow for session" covers, clearing and pasting in the prompt, where the keyboard
goes after a screen closes, and a broken config that keeps the prompt instead of
swallowing it."""

from __future__ import annotations

from textual.widgets import Static

from app.tui.screens.permission_screen import PermissionScreen
from tests.tui.conftest import wait_until


def status_line(app) -> str:
    return app.status.render().plain


def read_step(*paths: str) -> dict:
    return {"toolCalls": [{"name": "view", "arguments": {"filePath": path}} for path in paths]}


def edit_step(path: str, old: str, new: str) -> dict:
    return {"toolCalls": [{"name": "edit", "arguments": {"filePath": path, "oldString": old, "newString": new}}]}


async def test_while_a_question_is_open_the_status_bar_waits_for_the_user_not_the_model(make_app, script, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    app = make_app(script([{"steps": [read_step("a.py"), edit_step("a.py", "x = 1", "x = 2"), {"text": "Done."}]}]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"change a", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await wait_until(pilot, lambda: "waiting for your answer" in status_line(app))
        assert "working" not in status_line(app)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running)
        assert "waiting for your answer" not in status_line(app)


async def test_the_dialog_says_what_allow_for_session_covers_and_it_covers_just_that(make_app, script, workspace):
    (workspace / "a.py").write_text("x = 1\ny = 1\n")
    (workspace / "b.py").write_text("z = 1\n")
    app = make_app(script([{"steps": [
        read_step("a.py", "b.py"),
        edit_step("a.py", "x = 1", "x = 2"),
        edit_step("a.py", "y = 1", "y = 2"),
        edit_step("b.py", "z = 1", "z = 2"),
        {"text": "Done."},
    ]}]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"change both", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        scope = str(app.screen.query_one("#permission-scope", Static).render())
        assert "edit on a.py is not asked again in this session" in scope and "other files still ask" in scope
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.request.subject == "b.py")
        assert (workspace / "a.py").read_text() == "x = 2\ny = 2\n"  # the second edit of a.py was not asked
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running)
        assert (workspace / "b.py").read_text() == "z = 2\n"


def test_snapshot_of_a_question_waiting_for_the_user_at_80x24(snap_compare, make_app, script, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    app = make_app(script([{"steps": [read_step("a.py"), edit_step("a.py", "x = 1", "x = 2"), {"text": "Done."}]}]))

    async def ask(pilot) -> None:
        app.prompt.cursor_blink = False
        await pilot.press(*"change a", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.focused is not None)
        await wait_until(pilot, lambda: "waiting for your answer" in status_line(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=ask)
