"""The prompt's completion lists, driven by keys: ``@`` offers the workspace's files and
a mention sends the file to the model (the fake OpenAI server's request shows it); ``/``
offers the commands, which run from the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.tui.completion import find_trigger
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.widgets.completion_list import CompletionList
from app.tui.widgets.message_notice import ChatNotice
from app.tui.widgets.message_user import CHIP_STYLE, UserMessage
from tests.llm.fake_openai import Text, ToolCall
from tests.llm.scripted_turns import summarizer_turn
from tests.tui.conftest import palette_offers, wait_until

APP = "def main():\n    return 1\n"
DISTRACTORS = ["setup.py", "src/apps/main.py", "scripts/apply.sh", "docs/snapshot.md", "tests/test_app.py"]


def make_project(workspace: Path) -> None:
    for name in [*DISTRACTORS, "src/app.py", "build/app.py"]:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(APP if name == "src/app.py" else "x\n")
    (workspace / ".gitignore").write_text("build/\n")


def listed(app) -> list[str]:
    return [choice.label for choice in app.query_one(CompletionList).choices]


def is_open(app) -> bool:
    return app.query_one(CompletionList).is_open


@pytest.mark.parametrize(
    ("text", "cursor", "found"),
    [
        ("/", (0, 1), ("command", "", 0, 1)),
        ("/und", (0, 4), ("command", "und", 0, 4)),
        ("/undo now", (0, 9), None),
        ("see /undo", (0, 9), None),
        ("look at @sr", (0, 11), ("file", "sr", 8, 11)),
        ("look at @src/app.py please", (0, 12), ("file", "src", 8, 19)),
        ("mail me@example.com", (0, 19), None),
        ("one\n@do", (1, 3), ("file", "do", 0, 3)),
        ("@a @", (0, 4), ("file", "", 3, 4)),
    ],
)
def test_find_trigger(text, cursor, found) -> None:
    trigger = find_trigger(text, *cursor)
    assert (trigger and (trigger.kind, trigger.query, trigger.start, trigger.end)) == found


async def test_a_mention_is_completed_sent_with_its_lines_and_an_edit_needs_no_view(
    make_runtime, make_app, fake_llm, workspace
):
    make_project(workspace)
    runtime = make_runtime(
        policy="interactive",
        config={
            "lsp": {"python": {"disabled": True}},
            "providers": fake_llm.providers,
            "permission": {"rules": {"edit": "allow"}},
        },
    )
    fake_llm.reply(ToolCall("edit", json.dumps({"filePath": "src/app.py", "oldString": "1", "newString": "2"})))
    fake_llm.reply(Text("Now it returns 2."))
    session = runtime.store.sessions.create(title="titled, so no title request")
    app = make_app(fake_llm.model, runtime=runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"explain ", "@")
        await wait_until(pilot, lambda: is_open(app))
        assert "build/app.py" not in listed(app)  # ignored by .gitignore
        await pilot.press(*"sapp")
        await wait_until(pilot, lambda: listed(app)[:1] == ["src/app.py"])
        await pilot.press("tab")
        assert app.prompt.text == "explain @src/app.py "
        await wait_until(pilot, lambda: not is_open(app))
        await pilot.press(*"and make it return 2", "enter")

        await wait_until(pilot, lambda: not app.turn_running and len(fake_llm.requests) == 2)
        sent = fake_llm.requests[0]["messages"][-1]["content"]
        assert sent.startswith("explain @src/app.py and make it return 2\n\n")
        assert "     1\tdef main():\n     2\t    return 1" in sent
        assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 2\n"
        [user] = app.query(UserMessage)
        assert user.text == "explain @src/app.py and make it return 2"  # the chip, not the file's text
        spans = [(span.start, span.end, str(span.style)) for span in user.render().spans]
        assert (8, 19, CHIP_STYLE) in spans


async def test_the_list_keys_stay_in_the_list_and_escape_closes_it(make_app, workspace, tui_runtime):
    make_project(workspace)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("@", *"app")
        await wait_until(pilot, lambda: is_open(app) and len(listed(app)) >= 3)
        first, second = listed(app)[:2]
        await pilot.press("down", "down", "up")
        assert app.query_one(CompletionList).chosen.label == second
        await pilot.press("escape")
        assert not is_open(app) and app.prompt.text == "@app"
        await pilot.press("backspace", "p")  # typing again reopens it
        await wait_until(pilot, lambda: is_open(app))
        await pilot.press("enter")
        assert app.prompt.text == f"@{first} " and app.session_id is None  # enter inserted, sent nothing


async def test_a_folder_is_inserted_open_for_its_files(make_app, workspace, tui_runtime):
    make_project(workspace)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"@scri")
        await wait_until(pilot, lambda: listed(app)[:1] == ["scripts/"])
        await pilot.press("tab")
        assert app.prompt.text == "@scripts/"
        await wait_until(pilot, lambda: listed(app)[:2] == ["scripts/", "scripts/apply.sh"])


async def test_slash_opens_the_commands_and_enter_runs_one(make_app, workspace, tui_runtime):
    commands = workspace / ".opencode" / "commands"
    commands.mkdir(parents=True)
    (commands / "hello.md").write_text("---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("/")
        await wait_until(pilot, lambda: is_open(app))
        names = listed(app)
        assert names[:3] == ["/new", "/sessions", "/models"] and "/hello [arguments]" in names
        await pilot.press(*"hel")
        await wait_until(pilot, lambda: listed(app)[:2] == ["/help", "/hello [arguments]"])
        await pilot.press("down", "enter")  # a command that takes arguments is inserted, not sent
        assert app.prompt.text == "/hello "
        await pilot.press("ctrl+u", "/", *"hel")
        await wait_until(pilot, lambda: app.query_one(CompletionList).chosen.label == "/help")
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        assert app.prompt.text == ""


async def test_an_unknown_command_says_the_close_ones_and_keeps_the_text(make_app, tui_runtime):
    app = make_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press(*"/modles x")
        await pilot.press("enter")
        line = "unknown command /modles: did you mean /models?"
        await wait_until(pilot, lambda: any(line in str(t.render()) for t in app.screen.query("Toast")))
        assert app.prompt.text == "/modles x" and app.session_id is None


async def test_a_mention_not_attached_is_a_notice_in_the_chat(make_app, script, workspace, tui_runtime):
    """A typed path leading outside is asked about as view asks; denied, it is a notice."""
    (workspace.parent / "outside.txt").write_text("private\n")
    app = make_app(script([{"steps": [{"text": "ok"}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"read @../outside.txt", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await pilot.press("d")
        await wait_until(pilot, lambda: app.query(ChatNotice) and not app.turn_running)
        [notice] = app.query(ChatNotice)
        assert notice.text.startswith("@../outside.txt was not attached: ")
        [user] = app.query(UserMessage)
        assert not user.render().spans  # nothing attached: no chip


async def test_a_recalled_prompt_opens_no_list_so_the_history_keys_still_walk(make_app, script, workspace, tui_runtime):
    make_project(workspace)
    app = make_app(script([{"steps": [{"text": "ok"}]}, {"steps": [{"text": "ok"}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        for prompt in ("first", "look at @src/app.py"):
            app.prompt.load_text(prompt)
            app.prompt.action_submit()
            await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running)
        await pilot.press("up")
        await wait_until(pilot, lambda: app.prompt.text == "look at @src/app.py")
        await pilot.press("up")
        await wait_until(pilot, lambda: app.prompt.text == "first")
        assert not is_open(app)


async def test_slash_compact_and_new_act_from_the_prompt(make_app, script, tui_runtime):
    model = script(
        [
            summarizer_turn("SUMMARY: we said hello."),
            {"steps": [{"text": "Hello back."}]},
        ]
    )
    app = make_app(model)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running)
        session_id = app.session_id
        await pilot.press(*"/comp")
        await wait_until(pilot, lambda: listed(app)[:1] == ["/compact"])
        await pilot.press("enter")
        sessions = tui_runtime.store.sessions
        await wait_until(pilot, lambda: sessions.get(session_id).summary_message_id is not None)
        await wait_until(pilot, lambda: not app.turn_running)
        await pilot.press(*"/new", "enter")
        await wait_until(pilot, lambda: app.session_id is None)
        assert app.prompt.text == ""


async def test_a_command_file_added_while_the_app_runs_is_offered(make_app, workspace, tui_runtime):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("/")
        await wait_until(pilot, lambda: is_open(app))
        assert "/later" not in listed(app)
        await pilot.press("escape", "backspace")
        commands = workspace / ".opencode" / "commands"
        commands.mkdir(parents=True)
        (commands / "later.md").write_text("Added later")
        await pilot.press("/")
        await wait_until(pilot, lambda: "/later" in listed(app))


async def test_a_large_workspace_is_ranked_off_the_ui_thread(make_app, workspace, tui_runtime, monkeypatch):
    import app.tui.prompt_commands as prompt_commands

    monkeypatch.setattr(prompt_commands, "SYNC_RANK_LIMIT", 3)  # this project counts as large
    make_project(workspace)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"@sapp")
        await wait_until(pilot, lambda: listed(app)[:1] == ["src/app.py"])
        await pilot.press("backspace", "backspace", "backspace", *"cripts/a")
        await wait_until(pilot, lambda: listed(app) == ["scripts/apply.sh"])
        await pilot.press("tab")
        assert app.prompt.text == "@scripts/apply.sh "


@pytest.mark.parametrize(("command", "screen"), [("/theme", "CommandPalette"), ("/sessions", "SessionsScreen")])
async def test_screen_commands_open_their_screen(make_app, tui_runtime, command, screen):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*command)
        await wait_until(pilot, lambda: listed(app)[:1] == [command])
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == screen)
        if screen == "CommandPalette":
            await wait_until(pilot, lambda: palette_offers(app, "Theme: "))


async def test_a_reopened_session_shows_its_mentions_as_chips(make_app, tui_runtime):
    session = tui_runtime.store.sessions.create(title="stored")
    parts = [
        {"type": "text", "text": "compare @src/ with @a.py, not @b.py"},
        {"type": "file", "path": "src", "kind": "folder", "text": "src/\n  x.py"},
        {"type": "file", "path": "a.py", "kind": "file", "text": "     1\tx"},
    ]
    tui_runtime.store.messages.add(session.id, "user", parts)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await wait_until(pilot, lambda: app.query(UserMessage))
        [user] = app.query(UserMessage)

        def chips() -> list[str]:
            text = user.text
            return sorted(text[span.start : span.end] for span in user.render().spans if str(span.style) == CHIP_STYLE)

        await wait_until(pilot, lambda: chips() == ["@a.py", "@src/"])  # @b.py attached nothing: plain text


async def test_enter_after_a_path_typed_whole_sends(make_app, script, workspace, tui_runtime):
    make_project(workspace)
    app = make_app(script([{"steps": [{"text": "ok"}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"look at @src/app.py")
        await wait_until(pilot, lambda: listed(app)[:1] == ["src/app.py"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session_id is not None and not app.turn_running)
        assert app.prompt.text == "" and not is_open(app)
        [user] = app.query(UserMessage)
        assert user.text == "look at @src/app.py"


async def test_slash_agents_lists_the_agents_in_the_chat(make_app, tui_runtime):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"/agents")
        await wait_until(pilot, lambda: listed(app)[:1] == ["/agents"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query(ChatNotice))
        text = app.query(ChatNotice).last().text
        assert "▸ coder: " in text and "  plan: " in text and "  explorer: " in text and "  workhorse: " in text
