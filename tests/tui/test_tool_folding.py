"""Tool calls read back from a session's history show folded to their summary line, their
bodies not built until enter or a click opens them; a failed call shows its error at
once; the calls of a turn that runs show their bodies as they finish; find opens a folded
call whose output holds the text; and a picture of the folded calls."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input

from app.runtime import Runtime
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.widgets.diff_view import DiffView
from app.tui.widgets.find_bar import FOUND
from app.tui.widgets.tool_render import ToolCallView, ToolHeader, ToolOutput
from tests.tui.chat_samples import SAMPLES
from tests.tui.conftest import session_opened, wait_until

FOLDED_HINT = "▸ show"
CALLS = ("edit", "bash", "error", "view")


def store_calls(runtime: Runtime, *, bash_output: str | None = None) -> str:
    """A session of one prompt and one reply calling edit, bash, a failing edit and view
    (``bash_output``: the command's output in place of the sample's)."""
    session = runtime.store.sessions.create(title="Folded calls")
    messages = runtime.store.messages
    messages.add(session.id, "user", [{"type": "text", "text": "Fix it and run the tests."}])
    calls, results = [], []
    for name in CALLS:
        sample = SAMPLES[name]
        output = bash_output if name == "bash" and bash_output is not None else sample.output
        calls.append({"type": "tool_call", "id": name, "name": sample.tool, "arguments": json.dumps(sample.arguments)})
        results.append({"type": "tool_result", "call_id": name, "name": sample.tool, "output": output,
                        "metadata": sample.metadata, "error": sample.error})  # fmt: skip
    messages.add(session.id, "assistant", [{"type": "text", "text": "On it."}, *calls])
    messages.add(session.id, "tool", results)
    messages.add(session.id, "assistant", [{"type": "text", "text": "Done."}])
    return session.id


def views_by_call(app) -> dict[str, ToolCallView]:
    return {view.call_id: view for view in app.chat.query(ToolCallView)}


def header(view: ToolCallView) -> str:
    return str(view.query_one(ToolHeader).render())


async def opened_session(pilot, app, session_id: str) -> dict[str, ToolCallView]:
    await app.open_session(session_id)
    await wait_until(pilot, lambda: len(views_by_call(app)) == len(CALLS))
    views = views_by_call(app)
    await wait_until(pilot, lambda: all(view.finished for view in views.values()))
    return views


async def test_a_session_read_back_shows_its_calls_folded_to_their_summary_and_a_failure_open(make_app, tui_runtime):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        views = await opened_session(pilot, app, store_calls(tui_runtime))
        edit, bash, failed, read = (views[name] for name in CALLS)
        for view, summary in ((edit, "+3 -3"), (bash, "exit 0")):
            assert view.folded and summary in header(view) and FOLDED_HINT in header(view)
            assert list(view.children) == [view.query_one(ToolHeader)]  # no body built
            assert view.query_one(ToolHeader).can_focus
        assert not app.query(DiffView) and not app.query(ToolOutput)
        # A failure is what the reader looks for: its error shows without opening it.
        assert not failed.folded and "failed" in header(failed) and FOLDED_HINT not in header(failed)
        assert "oldString was not found" in str(failed.query_one(".tool-error").render())
        # A read has no body: nothing to open, and its header takes no focus.
        assert not read.folded and FOLDED_HINT not in header(read) and not read.query_one(ToolHeader).can_focus


async def test_enter_from_the_keyboard_and_a_click_open_a_folded_call_and_fold_it_again(make_app, tui_runtime):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        views = await opened_session(pilot, app, store_calls(tui_runtime))
        edit, bash = views["edit"], views["bash"]
        app.prompt.focus()
        await pilot.press("shift+tab")  # from the prompt, the last thing in the chat to open
        assert app.focused is bash.query_one(ToolHeader)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(bash.query(ToolOutput)))
        assert not bash.folded and FOLDED_HINT not in header(bash) and "exit 0" in header(bash)
        assert "test_01" in str(bash.query_one(ToolOutput).render())
        await pilot.press("space")  # folds it again: the body goes
        await wait_until(pilot, lambda: not bash.query(ToolOutput))
        assert bash.folded and FOLDED_HINT in header(bash)
        await wait_until(pilot, lambda: edit.query_one(ToolHeader).region.height > 0)  # laid out, so clickable
        await pilot.click(edit.query_one(ToolHeader))
        await wait_until(pilot, lambda: bool(edit.query(DiffView)))
        assert not edit.folded and "+3 -3" in header(edit)


async def test_the_calls_of_a_running_turn_show_their_bodies_and_fold_once_read_back(
    make_app, script, workspace: Path
):
    note = {"filePath": "NOTES.md", "content": "# Notes\n- fold what was read\n"}
    app = make_app(script([{"steps": [{"toolCalls": [{"name": "write", "arguments": note}]}, {"text": "Noted."}]}]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"take a note", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running and (workspace / "NOTES.md").exists())
        [live] = app.chat.query(ToolCallView)
        assert live.finished and live.query(DiffView) and not live.folded
        assert FOLDED_HINT not in header(live) and not live.query_one(ToolHeader).can_focus
        session_id = app.session_id
        await app.open_session(None)
        await app.open_session(session_id)
        await wait_until(pilot, lambda: [view.finished for view in app.chat.query(ToolCallView)] == [True])
        [read_back] = app.chat.query(ToolCallView)
        assert read_back.folded and not read_back.query(DiffView) and "+2 -0" in header(read_back)


async def test_find_opens_the_folded_call_whose_output_holds_the_text_and_folds_it_for_the_next_match(
    make_app, tui_runtime
):
    lines = [f"tests/test_{n:02}.py PASSED" for n in range(40)]
    lines[33] = "tests/test_33.py FAILED: the zanzibar fixture is missing"
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        views = await opened_session(pilot, app, store_calls(tui_runtime, bash_output="\n".join(lines)))
        bash = views["bash"]
        assert bash.folded
        await pilot.press("ctrl+f", *"zanzibar")
        await wait_until(pilot, lambda: bool(bash.query(ToolOutput)) and bash.query_one(ToolOutput).expanded)
        output = bash.query_one(ToolOutput)
        assert "the zanzibar fixture" in str(output.render())  # past the first lines: expanded
        assert bash.parent.has_class(FOUND) and str(app.query_one("#find-count").render()) == "1 of 1"
        await wait_until(pilot, lambda: output.region.height > 0)  # scrolled into view
        app.query_one("#find-input", Input).value = "Done."  # a match elsewhere: the call find opened folds again
        await wait_until(pilot, lambda: bash.folded and not bash.query(ToolOutput))
        await pilot.press("escape")
        assert app.focused is app.prompt


def test_snapshot_of_calls_read_back_folded(snap_compare, make_app, tui_runtime):
    session_id = store_calls(tui_runtime)
    app = make_app()

    async def shown(pilot) -> None:
        await session_opened(app, session_id)(pilot)
        await wait_until(pilot, lambda: all(view.finished for view in app.chat.query(ToolCallView)))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=shown)
