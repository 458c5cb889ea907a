"""The app wired to the rest of the core: the workspace watcher, language and MCP server
states, compaction from the palette, the chat's diffs, and the sidebar by keyboard."""

from __future__ import annotations

import subprocess
import sys

from app.llm.events import ToolCallFinished, ToolCallStarted
from app.lsp.events import LspStatusChanged
from app.mcp.events import McpStatusChanged
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.diff_screen import DiffScreen
from app.tui.widgets.diff_view import DiffView
from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.prompt_input import PromptInput
from app.tui.widgets.sidebar import FilesSidebar
from app.tui.widgets.sidebar_list import ModifiedFileList
from tests.llm.scripted_turns import summarizer_turn
from tests.tui.conftest import palette_offers, wait_until
from tests.tui.panels_harness import change

EDITS_ALLOWED = {"lsp": {"python": {"disabled": True}}, "permission": {"rules": {"edit": "allow"}}}


async def test_a_file_changed_on_disk_by_another_process_refreshes_the_sidebar_and_tells_the_chat(
    make_runtime, make_app, workspace
):
    runtime = make_runtime(policy="interactive", config=EDITS_ALLOWED)
    session = runtime.store.sessions.create(title="watched")
    (workspace / "a.py").write_text("one\n")
    await change(runtime.context(session.id), "a.py", "one\ntwo\n")
    app = make_app(runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: [(c.additions, c.deletions) for c in sidebar.changes] == [(1, 0)])
        await wait_until(pilot, lambda: runtime.watcher.running)

        rewrite = "import pathlib; pathlib.Path('a.py').write_text('zero\\n')"
        subprocess.run([sys.executable, "-c", rewrite], cwd=workspace, check=True)

        await wait_until(pilot, lambda: [(c.additions, c.deletions) for c in sidebar.changes] == [(1, 1)])
        assert sidebar.changes[0].latest_content == "zero\n"
        await wait_until(pilot, lambda: app.query(ChatNotice))
        assert "a.py changed on disk" in [str(n.render()) for n in app.query(ChatNotice)]


async def test_server_states_show_as_compact_marks_with_the_failure_in_the_tooltip(make_runtime, make_app):
    runtime = make_runtime(
        policy="interactive",
        config={"lsp": {"python": {"disabled": True}}, "mcpServers": {"calc": {"command": "/nonexistent/mcp-calc"}}},
    )
    app = make_app(runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.status
        # The app starts MCP itself; the server cannot start, so its mark is a cross.
        await wait_until(pilot, lambda: "MCP calc ✗" in status.services_segment().plain)
        runtime.bus.publish(LspStatusChanged("python", "starting"))
        await wait_until(pilot, lambda: "LSP python …" in status.services_segment().plain)
        runtime.bus.publish(LspStatusChanged("python", "ready"))
        runtime.bus.publish(McpStatusChanged("files", "connected", tools=3))
        await wait_until(pilot, lambda: "MCP files ✓" in status.services_segment().plain)
        assert status.services_segment().plain == "MCP calc ✗  LSP python ✓  MCP files ✓"
        assert "MCP calc failed: " in str(status.tooltip)
        assert "MCP calc ✗" in str(status.render())


async def test_the_palette_compacts_the_session(make_app, tui_runtime, script):
    model = script(
        [
            summarizer_turn("SUMMARY: we said hello."),
            {"steps": [{"text": "Hello back."}]},
        ]
    )
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.send_prompt("hello")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running)
        await pilot.press("ctrl+p")
        await pilot.press(*"Compact session")
        await wait_until(pilot, lambda: palette_offers(app, "Compact session"))
        await pilot.press("enter")
        sessions = tui_runtime.store.sessions
        await wait_until(pilot, lambda: sessions.get(app.session_id).summary_message_id is not None)
        summary = tui_runtime.store.messages.get(sessions.get(app.session_id).summary_message_id)
        assert summary.parts[0]["text"] == "SUMMARY: we said hello."


async def test_a_diff_in_the_chat_clips_long_lines_instead_of_scrolling_sideways(make_app, tui_runtime):
    session = tui_runtime.store.sessions.create(title="wide")
    long_line = "x = '" + "y" * 200 + "'\n"
    diff = "--- a/w.py\n+++ b/w.py\n@@ -1 +1 @@\n-x = 1\n+" + long_line
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_session(session.id)
        tui_runtime.bus.publish(ToolCallStarted(session.id, "m1", "c1", "edit", {"filePath": "w.py"}))
        metadata = {"diff": diff, "additions": 1, "deletions": 1, "path": "w.py"}
        tui_runtime.bus.publish(ToolCallFinished(session.id, "m1", "c1", "edit", "edited", metadata, False))
        await wait_until(pilot, lambda: app.query(DiffView))
        await pilot.pause()
        view = app.query_one(DiffView)
        assert view.virtual_size.width > view.size.width  # the line is wider than the chat...
        assert not view.show_horizontal_scrollbar  # ...and clipped, not scrolled


async def test_the_sidebar_is_reachable_by_keyboard_to_open_a_diff_and_revert(make_runtime, make_app, workspace):
    runtime = make_runtime(policy="interactive", config=EDITS_ALLOWED)
    session = runtime.store.sessions.create(title="keys")
    (workspace / "b.txt").write_text("before\n")
    await change(runtime.context(session.id), "b.txt", "after\n")
    app = make_app(runtime=runtime)
    async with app.run_test(size=(80, 24)) as pilot:  # narrow: the sidebar starts hidden
        await app.open_session(session.id)
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: len(sidebar.changes) == 1)
        assert not sidebar.display

        await pilot.press("ctrl+g")
        assert sidebar.display and isinstance(app.focused, ModifiedFileList)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, DiffScreen))

        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: (workspace / "b.txt").read_text() == "before\n")
        # Back as before: the file leaves the list, and the keyboard goes to the prompt.
        await wait_until(pilot, lambda: not sidebar.changes)
        await wait_until(pilot, lambda: isinstance(app.focused, PromptInput))
        await pilot.press("ctrl+g")
        assert isinstance(app.focused, ModifiedFileList)
        await pilot.press("escape")
        assert isinstance(app.focused, PromptInput)
        await pilot.press("ctrl+g", "ctrl+g")
        assert isinstance(app.focused, PromptInput)


async def test_at_80x24_the_diff_viewer_names_its_own_keys_and_cuts_a_long_path_in_the_middle(
    make_runtime, make_app
):
    runtime = make_runtime(policy="interactive", config=EDITS_ALLOWED)
    session = runtime.store.sessions.create(title="keys")
    deep = "opencode-demo/some/rather/deeply/nested/folder/for/the/test/cache-1.txt"
    await change(runtime.context(session.id), deep, "cached\n")
    app = make_app(runtime=runtime)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_session(session.id)
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: len(sidebar.changes) == 1)
        await pilot.press("ctrl+g", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.pause()
        keys = str(app.screen.query_one("#diff-screen-keys").render())
        assert keys == "t unified / split · esc/q close"
        title = str(app.screen.query_one("#diff-screen-title").render())
        assert title.startswith("opencode-demo/some/") and "/…/cache-1.txt  +1 -0  new  unified" in title
        assert len(title.rstrip()) <= 78
