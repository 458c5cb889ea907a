"""Each tool call in the chat: its action while it runs, its subject, its outcome and the
body drawn for its kind (diff, file list, truncated output, calm error); and the
snapshots of each rendering."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from app.llm.call_arguments import arguments_for_display
from app.llm.events import ToolCallFinished, ToolCallStarted
from app.tui.widgets.diff_view import DiffView
from app.tui.widgets.tool_render import ToolCallView, ToolHeader, ToolOutput
from tests.tui.chat_samples import SAMPLES, store_tool_conversation
from tests.tui.conftest import calls_opened, session_opened, wait_until

# (text in the header while running, text in the header after, what the body holds)
EXPECTED = {
    "view": ("Reading...", "6 lines", None),
    "grep": ("Searching...", "2 lines", None),
    "write": ("Writing...", "+4 -0", DiffView),
    "edit": ("Editing...", "+3 -3", DiffView),
    "multiedit": ("Editing...", "+3 -3", DiffView),
    "patch": ("Patching...", "+7 -4", DiffView),
    "delete_file": ("Deleting...", "1 file deleted, -6", DiffView),
    "delete_directory": ("Deleting...", "15 files deleted, -255", ToolOutput),
    "bash": ("Running...", "exit 0", ToolOutput),
    "error": ("Editing...", "failed", ".tool-error"),
}
SUBJECTS = {
    "view": "src/app.py", "grep": "def main  (*.py)", "write": "NOTES.md", "edit": "src/app.py",
    "multiedit": "src/app.py", "patch": "src/app.py, NOTES.md, old.txt", "delete_file": "src/app.py",
    "delete_directory": "build", "bash": "pytest -q", "error": "src/app.py",
}


def header(view: ToolCallView) -> str:
    return str(view.query_one(".tool-header").render())


async def opened_by_key(pilot, view: ToolCallView) -> None:
    """Open a call read back folded as a keyboard user does: enter on its header."""
    await wait_until(pilot, lambda: view.finished and view.folded)
    view.query_one(ToolHeader).focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: not view.folded and len(view.children) > 1)


async def opened_by_click(pilot, view: ToolCallView) -> None:
    """Open a call read back folded with a click on its header."""
    header = view.query_one(ToolHeader)
    await wait_until(pilot, lambda: view.finished and view.folded and header.region.height > 0)  # laid out
    await pilot.click(header)
    await wait_until(pilot, lambda: not view.folded and len(view.children) > 1)


@pytest.mark.parametrize("name", list(SAMPLES))
async def test_a_tool_call_shows_its_action_then_its_outcome_and_body(name, make_app, tui_runtime):
    sample = SAMPLES[name]
    running, finished, body = EXPECTED[name]
    session = tui_runtime.store.sessions.create(title="live")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.pause()
        bus = tui_runtime.bus
        bus.publish(ToolCallStarted(session.id, "m1", "c1", sample.tool, sample.arguments))
        await wait_until(pilot, lambda: app.query(ToolCallView))
        view = app.query_one(ToolCallView)
        assert running in header(view) and SUBJECTS[name] in header(view)
        bus.publish(ToolCallFinished(session.id, "m1", "c1", sample.tool, sample.output, sample.metadata, sample.error))
        await wait_until(pilot, lambda: view.finished)
        await pilot.pause()
        assert finished in header(view) and running not in header(view)
        if body is None:
            assert len(view.children) == 1  # the header alone: reads need no body
        else:
            assert view.query(body)


async def test_a_directory_delete_lists_its_files_and_long_bash_output_expands(make_app, tui_runtime):
    sample = SAMPLES["delete_directory"]
    session_id = store_tool_conversation(tui_runtime, sample)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session_id)
        await opened_by_key(pilot, app.query_one(ToolCallView))
        summary = str(app.query_one(".tool-summary").render())
        assert summary.startswith("15 files deleted, 255 lines removed")
        listing = app.query_one(ToolOutput)
        assert "build/out/chunk_00.js  (10 lines)" in str(listing.render())
        assert "chunk_14.js" not in str(listing.render())
        assert "3 more lines" in str(listing.render())
        listing.focus()
        await pilot.press("enter")
        assert "build/out/chunk_14.js  (24 lines)" in str(listing.render())


async def test_the_truncated_bash_output_expands_with_a_click(make_app, tui_runtime):
    session_id = store_tool_conversation(tui_runtime, SAMPLES["bash"])
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session_id)
        await opened_by_click(pilot, app.query_one(ToolCallView))
        output = app.query_one(ToolOutput)
        assert "test_39" not in str(output.render()) and "32 more lines" in str(output.render())
        await pilot.click(ToolOutput)
        assert "test_39" in str(output.render())


async def test_a_block_keeps_its_own_keys_and_other_characters_typed_in_the_chat_go_to_the_prompt(make_app, tui_runtime):
    session_id = store_tool_conversation(tui_runtime, SAMPLES["bash"])
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session_id)
        await opened_by_key(pilot, app.query_one(ToolCallView))
        output = app.query_one(ToolOutput)
        app.set_focus(output)
        await pilot.press("space")  # the block's own key: expand
        assert app.focused is output and "test_39" in str(output.render()) and app.prompt.text == ""
        await pilot.press(*"why?")
        assert app.focused is app.prompt and app.prompt.text == "why?"


@pytest.mark.parametrize("name", list(SAMPLES))
def test_snapshot_of_each_tool_rendering(name, snap_compare, make_app, tui_runtime):
    """Each body as drawn (the call read back folded, then opened)."""
    session_id = store_tool_conversation(tui_runtime, SAMPLES[name])
    app = make_app()

    async def opened(pilot) -> None:
        await session_opened(app, session_id)(pilot)
        await calls_opened(pilot, app)

    assert snap_compare(app, terminal_size=(120, 36), run_before=opened)


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [('{"filePath": "a.py"', {"raw": '{"filePath": "a.py"'}), ("[" * 100_000 + "]" * 100_000, None)],
    ids=["malformed", "nested_100000_deep"],
)
async def test_a_reopened_call_shows_the_arguments_the_model_garbled_as_when_it_ran(
    make_app, tui_runtime, arguments, shown
):
    """Arguments the tool refused (malformed, or nested past its limits) are stored as the
    model wrote them; the session opened again draws the call as the live chat did."""
    session = tui_runtime.store.sessions.create(title="garbled")
    messages = tui_runtime.store.messages
    messages.add(session.id, "user", [{"type": "text", "text": "view a.py"}])
    messages.add(session.id, "assistant", [{"type": "tool_call", "id": "call-1", "name": "view", "arguments": arguments}])
    result = {"type": "tool_result", "call_id": "call-1", "name": "view", "output": "view: invalid arguments",
              "metadata": {}, "error": True}  # fmt: skip
    messages.add(session.id, "tool", [result])
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await wait_until(pilot, lambda: app.query(ToolCallView))
        [view] = app.query(ToolCallView)
        assert view.arguments == arguments_for_display(arguments) == (shown or {"raw": arguments})


async def test_control_characters_the_model_wrote_are_shown_escaped(make_app, tui_runtime):
    """A command that would clear the screen and retitle the window, and an error output
    carrying escapes: the chat shows them as text, never sends them to the terminal."""
    session = tui_runtime.store.sessions.create(title="hostile")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        bus = tui_runtime.bus
        bus.publish(ToolCallStarted(session.id, "m1", "c1", "bash", {"command": "echo \x1b[2J\x1b]0;owned\x07hi"}))
        await wait_until(pilot, lambda: app.query(ToolCallView))
        view = app.query_one(ToolCallView)
        assert "echo \\x1b[2J\\x1b]0;owned\\x07hi" in header(view)
        bus.publish(ToolCallFinished(session.id, "m1", "c1", "bash", "boom \x1b[31mred\x9b", {}, True))
        await wait_until(pilot, lambda: view.finished)
        shown = " ".join(str(widget.render()) for widget in view.query(Static))
        assert "\\x1b[31mred\\x9b" in shown and not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in shown)
