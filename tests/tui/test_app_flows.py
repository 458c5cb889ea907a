"""The flows a user goes through, driven with Pilot against the real app, a real runtime
(SQLite file, bus, permission service, tools on disk) and a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events
from textual.widgets import Static

from app.llm.scripted import DEMO_MODEL, DEMO_SCRIPT
from app.tui.app import OpencodeApp
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.widgets.diff_view import DiffView
from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.message_user import UserMessage
from app.tui.widgets.sidebar import FilesSidebar
from app.tui.widgets.tool_render import ToolCallView, ToolOutput
from tests.llm.fake_openai import Text, ToolCall
from tests.tui.conftest import NO_USER_THEMES, wait_until


async def test_without_a_provider_the_demo_model_is_selected_and_the_note_names_the_variables(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None and app.query(ChatNotice))
        assert app.model == DEMO_MODEL
        assert app.status.model_label == "demo (offline)"
        note = app.query_one(ChatNotice).text
        assert "ANTHROPIC_API_KEY" in note and "OPENAI_BASE_URL" in note


async def test_prompt_streams_asks_and_approving_changes_the_file_and_the_sidebar(
    make_app, script, workspace: Path
):
    (workspace / "greet.py").write_text("def greet(name):\n    return 'Helo ' + name\n")
    edit = {"filePath": "greet.py", "oldString": "'Helo '", "newString": "'Hello, '"}
    model = script([{"steps": [
        {"text": "Let me read it.", "toolCalls": [{"name": "view", "arguments": {"filePath": "greet.py"}}]},
        {"text": "A typo: fixing it.", "toolCalls": [{"name": "edit", "arguments": edit}]},
        {"text": "Fixed the **greeting**."},
    ]}])
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"fix the greeting", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running and app.session_id is not None)
        assert (workspace / "greet.py").read_text() == "def greet(name):\n    return 'Hello, ' + name\n"
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: sidebar.changes)
        [change] = sidebar.changes
        assert (change.path, change.additions, change.deletions) == ("greet.py", 1, 1)
        view, edited = app.query(ToolCallView)
        assert (view.tool, edited.tool) == ("view", "edit")
        assert edited.finished and edited.query(DiffView)
        assert "Fixed the **greeting**." in app.chat.query("AssistantMessage").last().text


async def test_a_directory_delete_asks_once_and_the_chat_and_sidebar_show_every_file(
    make_app, script, workspace: Path
):
    for name, text in (("tmp/a.log", "1\n2\n"), ("tmp/b.log", "3\n"), ("tmp/deep/c.txt", "4\n5\n6\n")):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    model = script([{"steps": [
        {"toolCalls": [{"name": "delete", "arguments": {"path": "tmp"}}]},
        {"text": "Removed tmp/."},
    ]}])
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"clean up", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        assert app.screen.request.preview.files == [("tmp/a.log", 2), ("tmp/b.log", 1), ("tmp/deep/c.txt", 3)]
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running and app.session_id is not None)
        assert not (workspace / "tmp").exists()
        [view] = app.query(ToolCallView)
        assert "3 files deleted, -6" in str(view.query_one(".tool-header").render())
        assert str(view.query_one(".tool-summary").render()).startswith("3 files deleted, 6 lines removed")
        assert "tmp/deep/c.txt  (3 lines)" in str(view.query_one(ToolOutput).render())
        sidebar = app.query_one(FilesSidebar)
        await wait_until(pilot, lambda: len(sidebar.changes) == 3)
        assert all(change.deleted for change in sidebar.changes)


async def test_a_burst_of_keys_ending_in_enter_sends_the_whole_prompt(make_app, script):
    """tmux send-keys and fast pastes deliver every key at once: enter must come last."""
    app = make_app(script([{"steps": [{"text": "ok"}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        for key in "second prompt":
            app.post_message(events.Key("space" if key == " " else key, key))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: app.query(UserMessage))
        assert app.query_one(UserMessage).text == "second prompt"
        assert app.prompt.text == ""


async def test_denying_shows_in_the_chat_and_reaches_the_model(make_runtime, make_app, fake_llm, workspace):
    runtime = make_runtime(
        policy="interactive", config={"providers": fake_llm.providers}
    )
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "x.py", "content": "x = 1\n"})))
    fake_llm.reply(Text("Understood, I will leave it."))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"write x", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready, timeout=60)
        await pilot.press("d")
        await wait_until(pilot, lambda: not app.turn_running and len(fake_llm.requests) == 2, timeout=60)
        assert not (workspace / "x.py").exists()
        [view] = app.query(ToolCallView)
        assert view.has_class("failed")
        shown = str(view.query_one(".tool-error", Static).render())
        tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
        assert tool_messages and tool_messages[0]["content"].strip() == shown.strip()
        assert "denied" in shown.lower()
        assert "leave it" in app.chat.query("AssistantMessage").last().text


async def test_escape_cancels_a_streaming_reply_and_the_session_takes_the_next_prompt(make_app, script, tui_runtime):
    words = " ".join(f"word{n}" for n in range(300))
    app = make_app(script([{"steps": [{"text": words}]}], chunk_delay=0.02))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"talk", "enter")
        await wait_until(pilot, lambda: app.query("AssistantMessage") and app.chat.query("AssistantMessage").last().text)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        notices = [notice.text for notice in app.query(ChatNotice)]
        assert "Cancelled." in notices
        [assistant] = [m for m in tui_runtime.store.messages.list(app.session_id) if m.role == "assistant"]
        assert {"type": "finish", "reason": "cancelled"} in assistant.parts
        assert len(assistant.parts[0]["text"]) < len(words)
        await pilot.press(*"again", "enter")
        await wait_until(pilot, lambda: len(app.query(UserMessage)) == 2 and app.turn_running)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)


async def test_ctrl_c_warns_first_and_quits_on_the_second_press(make_app, monkeypatch):
    app = make_app(clock=lambda: 100.0)  # the second press comes within the window, however slow the machine
    notices: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **_: notices.append(message))
    async with app.run_test() as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and notices == ["Press ctrl+c again to quit"]
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_a_broken_config_is_shown_in_the_chat_not_a_crash(workspace: Path):
    (workspace / ".opencode.json").write_text('{"tui": {"theme": 42}}')
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)  # builds its own runtime
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        notice = app.query_one(ChatNotice)
        assert notice.kind == "error" and ".opencode.json" in notice.text and "tui.theme" in notice.text
        assert app.runtime is None and app.status.model_label == "not started"


async def test_a_patch_denied_with_a_message_shows_the_message_not_the_tools_json(make_app, script, workspace):
    """The patch tool answers the model in spec 002's JSON; the chat shows what it says."""
    (workspace / "README.md").write_text("# Project\n")
    patch = "*** Begin Patch\n*** Update File: README.md\n@@\n-# Project\n+# Renamed\n*** End Patch"
    model = script([{"steps": [
        {"toolCalls": [{"name": "patch", "arguments": {"patch": patch}}]},
        {"text": "Left it."},
    ]}])
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"rename", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await pilot.press("D", *"no README changes please", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.query(ToolCallView))
        [denied] = app.query(ToolCallView)
        await wait_until(pilot, lambda: denied.finished)
        shown = str(denied.query_one(".tool-error", Static).render())
        assert shown == 'The user denied this patch: "no README changes please"'
        assert (workspace / "README.md").read_text() == "# Project\n"


async def test_the_offline_demo_works_in_a_folder_of_its_own_not_where_opencode_started(workspace, tmp_path):
    """`make run` in a fresh clone with no provider: the demo's files go under the user's
    data folder, and the first message says where."""
    data = tmp_path / "data"
    demo_root = data / "opencode" / "demo"
    (demo_root / "opencode-demo").mkdir(parents=True)
    (demo_root / "opencode-demo" / "greet.py").write_text("from an earlier demo\n")
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(data)}
    app = OpencodeApp(workspace, env=env, user_themes=NO_USER_THEMES)  # builds its own runtime
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None and app.query(ChatNotice))
        assert app.model == DEMO_MODEL and app.runtime.root == demo_root.resolve()
        assert str(demo_root) in app.query_one(ChatNotice).text
        await pilot.press(*"show me", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready, timeout=30)
        await pilot.press("a")
        greet = demo_root / "opencode-demo" / "greet.py"
        await wait_until(pilot, lambda: greet.exists() and '"Helo, "' in greet.read_text())
    assert list(workspace.iterdir()) == []


async def test_the_demos_closing_summary_leaves_out_the_step_the_user_denied(make_app, workspace, tmp_path):
    fast_demo = tmp_path / "demo.json"
    fast_demo.write_text(json.dumps({**json.loads(DEMO_SCRIPT.read_text()), "chunkDelay": 0}))
    app = make_app(f"scripted/{fast_demo}")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"show me", "enter")
        for answer in ("a", "d", "a", "a"):  # set up, the typo fix (denied), document, clean up
            await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready, timeout=30)
            asked = app.screen
            await pilot.press(answer)
            await wait_until(pilot, lambda asked=asked: app.screen is not asked)
        await wait_until(pilot, lambda: not app.turn_running and app.session_id is not None, timeout=30)
        summary = app.chat.query("AssistantMessage").last().text
        assert "- set up a tiny project in `opencode-demo/` (patch)" in summary
        assert "- documented how to run it in `README.md`" in summary
        assert "- removed `tmp/` (delete)" in summary
        assert "typo" not in summary
        assert '"Helo, "' in (workspace / "opencode-demo" / "greet.py").read_text()
