"""What a new user meets in the first minutes, driven with Pilot against the
real app, a real runtime and a scripted model: the status bar while a question waits,
what "Allow for session" covers, clearing and pasting in the prompt, where the keyboard
goes after a screen closes, and a broken config that keeps the prompt instead of
swallowing it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from app.runtime import Runtime
from app.tui.app import OpencodeApp
from app.tui.screens.diff_screen import DiffScreen
from app.tui.screens.help import HelpScreen
from app.tui.screens.models import ModelsScreen
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.screens.sessions import SessionsScreen
from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.message_user import UserMessage
from app.tui.widgets.sidebar_list import ModifiedFileList
from app.tui.widgets.tool_render import ToolCallView, ToolHeader, ToolOutput
from tests.tui.chat_samples import SAMPLES, store_tool_conversation
from tests.tui.conftest import NO_USER_THEMES, calls_opened, wait_until
from tests.tui.test_app_snapshots import record_history


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
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
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
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        scope = str(app.screen.query_one("#permission-scope", Static).render())
        assert "edit on a.py is not asked again in this session" in scope and "other files still ask" in scope
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.request.subject == "b.py" and app.screen.ready)
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
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await wait_until(pilot, lambda: "waiting for your answer" in status_line(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=ask)


# --- clearing and pasting in the prompt (item 14) -------------------------------------------


async def test_ctrl_c_clears_a_prompt_with_text_and_quits_only_from_an_empty_one(make_app, monkeypatch):
    app = make_app(clock=lambda: 100.0)  # presses fall within the quit window, however slow the machine
    notices: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **_: notices.append(message))
    async with app.run_test() as pilot:
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.prompt.text == "")
        await pilot.press("ctrl+c")  # the first press on the empty prompt only warns
        await pilot.pause()
        assert app.is_running and notices[-1] == "Press ctrl+c again to quit"
        await pilot.press("ctrl+z")  # the cleared text comes back
        assert app.prompt.text == "half a thought"
        await pilot.press("ctrl+c")  # a prompt with text again: cleared, not quit
        await pilot.pause()
        assert app.is_running and app.prompt.text == ""


async def test_ctrl_u_deletes_the_whole_line_as_typed_not_the_row_it_wraps_onto(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        long_line = " ".join(f"word{n}" for n in range(40))  # wraps over several rows at 80 columns
        app.prompt.insert("keep this\n" + long_line)
        await pilot.press("ctrl+u")
        assert app.prompt.text == "keep this\n"
        await pilot.press("ctrl+u")  # at the start of a line: joins it to the one above
        assert app.prompt.text == "keep this"
        await pilot.press("ctrl+u")
        assert app.prompt.text == ""


async def test_a_long_paste_shows_collapsed_in_the_prompt_and_the_chat_and_is_sent_whole(make_app, script, tui_runtime):
    pasted = "\n".join(f"line {n:04d} " + "x" * 90 for n in range(100))[:10_000]
    app = make_app(script([{"steps": [{"text": "Read it."}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"explain this: ")
        app.post_message(events.Paste(pasted))
        await wait_until(pilot, lambda: app.prompt.text != "explain this: ")
        assert app.prompt.text == "explain this: [pasted 10,000 characters]"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query(UserMessage) and not app.turn_running)
        [stored] = [m for m in tui_runtime.store.messages.list(app.session_id) if m.role == "user"]
        assert stored.parts[0]["text"] == "explain this: " + pasted  # what the model gets
        message = app.query_one(UserMessage)
        assert str(message.render()).startswith("explain this: [pasted 10,000 characters]")
        assert "line 0097" not in str(message.render())
        await pilot.click(UserMessage)
        await wait_until(pilot, lambda: "line 0097" in str(message.render()))
        await pilot.click("#prompt")
        await pilot.press("up")  # recalled as it read, and sent whole again
        assert app.prompt.text == "explain this: [pasted 10,000 characters]"
        assert app.prompt.full_text == "explain this: " + pasted
        await pilot.press("backspace")  # the label goes whole, with what it stands for
        assert app.prompt.full_text == app.prompt.text == "explain this: "
        await pilot.press("ctrl+z", "ctrl+r")
        assert app.prompt.text == "explain this: " + pasted


async def test_ctrl_v_of_a_long_text_copied_in_the_app_goes_in_as_one_label_too(make_app):
    app = make_app()
    async with app.run_test() as pilot:
        copied = "y" * 900
        app.copy_to_clipboard(copied)
        await pilot.press("ctrl+v")
        assert app.prompt.text == "[pasted 900 characters]" and app.prompt.full_text == copied
        await pilot.press("ctrl+v")  # the same text again: the same label
        assert app.prompt.text == "[pasted 900 characters]" * 2
        app.copy_to_clipboard("short")
        await pilot.press("ctrl+v")
        assert app.prompt.text.endswith("]short")


def test_snapshot_of_a_long_paste_collapsed_in_the_chat_and_the_prompt(snap_compare, make_app, script):
    text = "\n".join(f"log line {n}" for n in range(300))
    app = make_app(script([{"steps": [{"text": "Read it."}]}]))

    async def paste_twice(pilot) -> None:
        app.prompt.cursor_blink = False
        await pilot.press(*"why does this fail? ")
        app.post_message(events.Paste(text))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query(UserMessage) and not app.turn_running)
        app.post_message(events.Paste(text + "\n"))
        await wait_until(pilot, lambda: app.prompt.text)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=paste_twice)


# --- where the keyboard goes when a screen closes (item 9) ------------------------------------


@asynccontextmanager
async def three_files_changed(app: OpencodeApp, runtime: Runtime) -> AsyncIterator[Pilot]:
    """The app running on a stored session with an edit, its sidebar listing the three
    files record_history changed."""
    session_id = store_tool_conversation(runtime, SAMPLES["edit"])
    record_history(runtime, session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session_id)
        await wait_until(pilot, lambda: len(app.sidebar.changes) == 3)
        yield pilot


async def test_a_session_switched_from_a_focused_chat_block_hands_the_keyboard_to_the_prompt(make_app, tui_runtime):
    other = tui_runtime.store.sessions.create(title="the other one")
    shown = store_tool_conversation(tui_runtime, SAMPLES["bash"], title="with output")
    record_history(tui_runtime, shown)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(shown)
        await wait_until(pilot, lambda: app.query(ToolCallView) and app.query_one(ToolCallView).finished)
        await wait_until(pilot, lambda: app.sidebar.changes)
        app.query_one(ToolHeader).focus()  # the header of a call read back folded
        await wait_until(pilot, lambda: isinstance(app.focused, ToolHeader))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.focused is not None)
        await pilot.press("down", "enter")  # the list starts on the current session; the other is below
        await wait_until(pilot, lambda: app.session_id == other.id and not app.query(ToolCallView))
        await pilot.pause()
        assert app.focused is app.prompt
        await pilot.press(*"hi")
        assert app.prompt.text == "hi"


async def test_a_screen_closing_never_leaves_the_keyboard_on_a_list_hidden_meanwhile(make_app, tui_runtime):
    app = make_app()
    async with three_files_changed(app, tui_runtime) as pilot:
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: app.focused is app.query_one(ModifiedFileList))
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        await pilot.resize_terminal(80, 24)  # the sidebar hides behind the open screen
        await wait_until(pilot, lambda: not app.sidebar.display)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelsScreen))
        await pilot.pause()
        assert app.focused is app.prompt


async def test_after_any_screen_closes_the_keyboard_is_back_where_it_was(make_app, tui_runtime):
    app = make_app()
    async with three_files_changed(app, tui_runtime) as pilot:
        for key, screen in (("ctrl+o", ModelsScreen), ("ctrl+s", SessionsScreen), ("f1", HelpScreen)):
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: isinstance(app.screen, screen))
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.prompt.screen)
            await pilot.pause()
            assert app.focused is app.prompt, key
        await pilot.press("ctrl+g", "enter")  # from the files sidebar, the diff and back
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        await pilot.pause()
        assert app.focused is app.query_one(ModifiedFileList)


async def test_choosing_a_model_or_a_session_puts_the_keyboard_on_the_prompt_even_from_the_files(
    make_app, tui_runtime
):
    """The files sidebar has the keyboard (after a revert), ctrl+o chooses a model: then
    'hi' + enter sends the prompt, it does not open a diff."""
    app = make_app()
    async with three_files_changed(app, tui_runtime) as pilot:
        files = app.query_one(ModifiedFileList)
        for key, screen in (("ctrl+o", ModelsScreen), ("ctrl+s", SessionsScreen)):
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: app.focused is files)
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: isinstance(app.screen, screen) and app.screen.focused)
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.screen is app.prompt.screen and app.focused is app.prompt)
        await pilot.press("ctrl+g", "ctrl+o", "escape")  # closed without a choice: back to the files
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        await pilot.pause()
        assert app.focused is files


async def test_a_terminal_that_lost_focus_around_a_screen_gives_the_keyboard_back_to_the_prompt(
    make_app, tui_runtime
):
    session_id = store_tool_conversation(tui_runtime, SAMPLES["bash"])
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_session(session_id)
        await calls_opened(pilot, app)  # a chat longer than the screen: it can scroll, so take keys
        await wait_until(pilot, lambda: app.query(ToolOutput) and app.focused is app.prompt)
        app.post_message(events.AppBlur())  # another window takes the terminal's focus...
        await wait_until(pilot, lambda: app.focused is None)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        app.post_message(events.AppFocus())  # ...and gives it back while the models are open
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.prompt.screen)
        await pilot.pause()
        assert app.focused is app.prompt


# --- a broken .opencode.json (item 2) -------------------------------------------------------


def replies(app) -> str:
    return "\n".join(message.text for message in app.chat.query("AssistantMessage"))


def toasts(app) -> str:
    return "\n".join(str(toast.render()) for toast in app.screen.query("Toast"))


async def test_a_broken_config_keeps_the_prompt_and_a_fixed_save_starts_and_sends_it(workspace, script):
    config = workspace / ".opencode.json"
    config.write_text('{"tui": {"theme": "dracula",}')
    app = OpencodeApp(workspace, model=script([{"steps": [{"text": "Hello back."}]}]), env={},
                      user_themes=NO_USER_THEMES)  # builds its own runtime, as `opencode` does
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        notice = app.query_one(ChatNotice)
        assert notice.kind == "error" and ".opencode.json:1:" in notice.text and "save it" in notice.text
        assert app.status.model_label == "not started"

        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: "your prompt waits here" in toasts(app))
        assert app.prompt.text == "hi" and not app.query(UserMessage)  # kept, not promised and dropped
        for key, screen in (("ctrl+o", "Models"), ("ctrl+s", "Sessions")):
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: f"{screen} cannot open: opencode has not started" in toasts(app))
            assert app.screen is app.prompt.screen

        config.write_text('{"tui": {"theme": "dracula"}}')  # fixed and saved: the watcher sees it
        await wait_until(pilot, lambda: "Hello back." in replies(app) and not app.turn_running)
        assert app.query_one(UserMessage).text == "hi" and app.prompt.text == ""
        assert app.runtime is not None and app.theme == "dracula"
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))


async def test_a_save_that_is_still_broken_says_so_again_and_keeps_waiting(workspace):
    config = workspace / ".opencode.json"
    config.write_text('{"tui": {"theme": 42}}')
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        config.write_text('{"tui": {"theme": "dracula",}')
        await wait_until(pilot, lambda: len(app.query(ChatNotice)) == 2)
        assert ":1:" in app.query(ChatNotice).last().text and app.runtime is None
        config.write_text("{}")
        await wait_until(pilot, lambda: app.runtime is not None)


async def test_a_broken_global_config_is_watched_too(workspace, tmp_path, monkeypatch):
    config_home = tmp_path / "xdg"
    (config_home / "opencode").mkdir(parents=True)
    broken = config_home / "opencode" / ".opencode.json"
    broken.write_text('{"tui": {"theme": "dracula",}')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        assert str(broken) in app.query_one(ChatNotice).text and app.runtime is None
        broken.write_text('{"tui": {"theme": "dracula"}}')
        await wait_until(pilot, lambda: app.runtime is not None)


async def test_a_start_refused_by_a_variable_says_to_start_again_not_to_save_a_file(workspace, monkeypatch):
    monkeypatch.setenv("OPENCODE_TOOLS__DELETE__MAXFILES", "many")
    app = OpencodeApp(workspace, env={}, user_themes=NO_USER_THEMES)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.query(ChatNotice))
        notice = app.query_one(ChatNotice).text
        assert "OPENCODE_TOOLS__DELETE__MAXFILES" in notice and "start opencode again" in notice
        assert "save it" not in notice
