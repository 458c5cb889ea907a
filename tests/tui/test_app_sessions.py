"""Sessions, models, the palette, the sidebar toggle and help: the app's screens, driven
by keys against a real store."""

from __future__ import annotations

import io
import json

from rich.console import Console

from app.runtime import Runtime
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.help import HelpScreen
from app.tui.screens.models import ModelsScreen
from app.tui.screens.sessions import SessionsScreen
from app.tui.widgets.message_user import UserMessage
from app.tui.widgets.prompt_input import PromptInput
from app.tui.widgets.sidebar import FilesSidebar
from app.tui.widgets.tool_render import ToolCallView
from tests.tui.conftest import palette_offers, wait_until


def stored_conversation(runtime: Runtime, title: str, prompt: str) -> str:
    """A session as the agent loop stores it: prompt, a tool call, its result, an answer."""
    session = runtime.store.sessions.create(title=title)
    messages = runtime.store.messages
    messages.add(session.id, "user", [{"type": "text", "text": prompt}])
    call = {"type": "tool_call", "id": f"call-{title}", "name": "bash", "arguments": json.dumps({"command": "ls"})}
    messages.add(session.id, "assistant", [{"type": "text", "text": f"Looking ({title})."}, call])
    result = {"type": "tool_result", "call_id": f"call-{title}", "name": "bash", "output": "a.py\nb.py\n",
              "metadata": {"exit_code": 0}, "error": False}
    messages.add(session.id, "tool", [result])
    messages.add(session.id, "assistant", [{"type": "text", "text": f"Two files in {title}."}])
    return session.id


async def test_the_sessions_screen_switches_to_another_session_and_replays_it(make_app, tui_runtime):
    first = stored_conversation(tui_runtime, "first", "list files please")
    second = stored_conversation(tui_runtime, "second", "and here?")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(first)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one("#sessions-list").option_count == 2)
        await pilot.press("up", "enter")  # newest first: "second" sits above "first"
        await wait_until(pilot, lambda: app.session_id == second)
        assert [m.text for m in app.query(UserMessage)] == ["and here?"]
        [view] = app.query(ToolCallView)
        assert view.finished and "exit 0" in str(view.query_one(".tool-header").render())
        assert app.status.title == "second"
        assert app.prompt.earlier_prompts == ["and here?"]


async def test_sessions_can_be_renamed_and_deleted_after_a_confirmation(make_app, tui_runtime):
    doomed = stored_conversation(tui_runtime, "doomed", "bye")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(doomed)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await pilot.pause()
        await pilot.press("r", "ctrl+u", *"renamed", "enter")
        await wait_until(pilot, lambda: tui_runtime.store.sessions.get(doomed).title == "renamed")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # the focused button is Cancel: nothing happens
        await pilot.pause()
        assert tui_runtime.store.sessions.get(doomed) is not None
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: tui_runtime.store.sessions.get(doomed) is None)
        await wait_until(pilot, lambda: app.session_id is None and not app.query(UserMessage))


async def test_from_a_blank_session_the_sessions_screen_acts_on_the_newest_at_once(make_app, tui_runtime):
    older = stored_conversation(tui_runtime, "older", "one")
    newest = stored_conversation(tui_runtime, "newest", "two")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.query_one("#sessions-list").option_count == 2)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: tui_runtime.store.sessions.get(newest) is None)
        await wait_until(pilot, lambda: screen.query_one("#sessions-list").option_count == 1)
        await pilot.press("enter")  # the one left is highlighted again
        await wait_until(pilot, lambda: app.session_id == older)


async def test_ctrl_n_starts_a_blank_session_stored_with_its_first_prompt(make_app, script, tui_runtime):
    old = stored_conversation(tui_runtime, "old", "earlier")
    app = make_app(script([{"steps": [{"text": "fresh"}]}]))
    async with app.run_test() as pilot:
        await app.open_session(old)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: app.session_id is None and not app.query(UserMessage))
        await pilot.press(*"new start", "enter")
        await wait_until(pilot, lambda: app.session_id not in (None, old) and not app.turn_running)
        assert len(tui_runtime.store.sessions.list()) == 2


async def test_the_models_screen_changes_the_model_of_the_next_turn(make_app):
    app = make_app(env={"OPENAI_API_KEY": "sk-test"})
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.model == "openai/gpt-5")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        await pilot.press(*"demo", "enter")
        await wait_until(pilot, lambda: app.model == "scripted/demo")
        assert app.status.model_label == "demo (offline)"
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        await pilot.press(*"openai/gpt-4.1", "enter")  # not listed: taken as typed
        await wait_until(pilot, lambda: app.model == "openai/gpt-4.1")


async def test_the_models_screen_filters_fuzzily(make_app):
    app = make_app("openai/gpt-5", env={"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-test"})
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.model == "openai/gpt-5")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        await pilot.press(*"snt45", "enter")
        await wait_until(pilot, lambda: app.model == "anthropic/claude-sonnet-4-5")


async def pick_theme(app, pilot, name: str) -> None:
    await pilot.press("ctrl+p")
    await pilot.press(*name)
    await wait_until(pilot, lambda: palette_offers(app, name))
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.theme == name)


async def test_a_theme_chosen_in_the_palette_is_saved_for_the_user_not_in_the_project(
    make_app, workspace, tmp_path
):
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    user_file = tmp_path / "xdg" / "opencode" / ".opencode.json"
    app = make_app(env=env)
    async with app.run_test() as pilot:
        await pick_theme(app, pilot, "one-light")
        await wait_until(pilot, lambda: user_file.exists())
        assert json.loads(user_file.read_text())["tui"]["theme"] == "one-light"
        assert not (workspace / ".opencode.json").exists()
    # The next start's first frame has it, before the configuration is loaded.
    assert make_app(env=env).theme == "one-light"


async def test_a_project_that_sets_its_theme_keeps_the_choice_in_its_own_file(make_app, workspace, tmp_path):
    (workspace / ".opencode.json").write_text('{"tui": {"theme": "dracula"}}')
    env = {"HOME": str(tmp_path / "home")}
    app = make_app(env=env)
    async with app.run_test() as pilot:
        await pick_theme(app, pilot, "one-light")
        config_file = workspace / ".opencode.json"
        await wait_until(pilot, lambda: "one-light" in config_file.read_text())
        assert not (tmp_path / "home" / ".config").exists()


async def test_the_sidebar_hides_below_100_columns_and_the_toggle_key_shows_it(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.query(FilesSidebar))
        sidebar = app.query_one(FilesSidebar)
        assert not sidebar.display
        await pilot.press("ctrl+b")
        assert sidebar.display
        await pilot.resize_terminal(120, 40)
        await pilot.press("ctrl+b")
        assert not sidebar.display
    wide = make_app()
    async with wide.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: wide.query(FilesSidebar))
        assert wide.query_one(FilesSidebar).display


async def test_resizing_the_terminal_hides_and_shows_the_sidebar_at_once(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        sidebar = app.query_one(FilesSidebar)
        assert sidebar.display
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: app.size.width == 80)
        assert not sidebar.display
        await pilot.resize_terminal(120, 40)
        await wait_until(pilot, lambda: app.size.width == 120)
        assert sidebar.display
        await pilot.press("ctrl+b")  # the user's choice outlasts a resize
        await pilot.resize_terminal(130, 40)
        await wait_until(pilot, lambda: app.size.width == 130)
        assert not sidebar.display


async def test_hiding_the_sidebar_that_has_the_keyboard_gives_it_back_to_the_prompt(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+g")
        assert not isinstance(app.focused, PromptInput)
        await pilot.press("ctrl+b", *"hi")
        assert not app.query_one(FilesSidebar).display
        assert isinstance(app.focused, PromptInput) and app.prompt.text == "hi"


async def test_help_lists_every_binding_with_its_id_and_config_remaps_apply(make_runtime, make_app):
    runtime = make_runtime(policy="interactive", config={"tui": {"keybindings": {"app.sessions": "f2"}}})
    app = make_app(runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = {row.binding_id: row for _, rows in app.screen.sections for row in rows}
        for binding_id in ("app.sessions", "app.models", "app.cancel", "prompt.send", "sidebar.revert",
                           "permission.allow_once", "diff.toggle_layout", "sessions.rename", "confirm.yes",
                           "confirm.no", "help.close"):
            assert binding_id in rows
        assert rows["app.sessions"].keys == "f2"
        await pilot.press("escape")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))


async def test_at_80x24_help_shows_every_binding_id_whole(make_app):
    """The ids are what tui.keybindings takes: the table once cut them at 80 columns."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        tables = list(app.screen.query(".help-table"))
        assert len(tables) == len(app.screen.sections)
        for table, (_, rows) in zip(tables, app.screen.sections, strict=True):
            width = table.content_region.width
            console = Console(width=width, record=True, file=io.StringIO())
            console.print(table.content)
            lines = console.export_text().splitlines()
            assert max(len(line.rstrip()) for line in lines) <= width
            for row in rows:
                if row.binding_id:  # the slash commands' section has no ids
                    assert any(line.rstrip().endswith(f" {row.binding_id}") for line in lines), row.binding_id


async def test_a_misspelt_binding_id_in_the_config_is_reported_and_the_good_ones_apply(make_runtime, make_app):
    keybindings = {"app.sesions": "ctrl+g", "app.help": "ctrl+t"}
    app = make_app(runtime=make_runtime(policy="interactive", config={"tui": {"keybindings": keybindings}}))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: app.screen.query("Toast"))
        [note] = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert "app.sesions" in note and "tui.keybindings" in note and "app.help" not in note
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_up_recalls_earlier_prompts_and_down_returns_to_the_draft(make_app, script):
    app = make_app(script([{"steps": [{"text": "ok"}]}]))
    async with app.run_test() as pilot:
        for prompt in ("first", "second"):
            await pilot.press(*prompt, "enter")
            await wait_until(pilot, lambda: not app.turn_running and app.session_id)
        await pilot.press(*"dra", "up")
        assert app.prompt.text == "second"
        await pilot.press("up")
        assert app.prompt.text == "first"
        await pilot.press("down", "down")
        assert app.prompt.text == "dra"


async def test_up_and_down_move_through_a_wrapped_prompt_before_recalling(make_app, script):
    app = make_app(script([{"steps": [{"text": "ok"}]}]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.session_id)
        long_line = " ".join(f"word{n}" for n in range(40))  # one line, wrapped over several rows
        app.prompt.insert(long_line)  # as typed, cursor at the end, without 300 key presses
        await pilot.press("up")
        assert app.prompt.text == long_line and app.prompt.cursor_location[1] < len(long_line)
        await pilot.press("down")
        assert app.prompt.text == long_line and app.prompt.cursor_location[1] == len(long_line)
        for _ in range(10):  # up to the first row, then the earlier prompt
            await pilot.press("up")
        assert app.prompt.text == "first"
        await pilot.press("down")
        assert app.prompt.text == long_line


async def test_tool_call_sessions_are_hidden_until_t_shows_them_and_continue_skips_them(
    make_app, tui_runtime
):
    conversation = stored_conversation(tui_runtime, "a real one", "list files please")
    tool_run = tui_runtime.store.sessions.create(title="opencode tool view", kind="tool")
    app = make_app(continue_last=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.session_id == conversation)  # --continue: not the later tool run
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        listing = screen.query_one("#sessions-list")
        await wait_until(pilot, lambda: listing.option_count == 1)
        assert listing.get_option_at_index(0).id == conversation
        await pilot.press("t")
        await wait_until(pilot, lambda: listing.option_count == 2)
        assert [listing.get_option_at_index(i).id for i in range(2)] == [tool_run.id, conversation]
        assert "t tool runs" in str(screen.query_one("#sessions-help").render())
        await pilot.press("t")
        await wait_until(pilot, lambda: listing.option_count == 1)
