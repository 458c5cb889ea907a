"""A long session in the chat: it opens at its end with only a window of its messages as
widgets, every message is reachable by scrolling (pages read from the store, far ones
released), find reaches messages never drawn, and copy puts the chosen text on the
clipboard. Pictures of a long session scrolled to its top and to its middle."""

from __future__ import annotations

import gc
import weakref
from types import FrameType

from textual.geometry import Region

from app.runtime import Runtime
from app.tui.widgets import chat_log
from app.tui.widgets.chat_log import ChatLog
from app.tui.widgets.find_bar import FOUND
from app.tui.widgets.message_user import UserMessage
from tests.tui.conftest import palette_offers, session_opened, wait_until

FIRST_PROMPT = "Where does the zanzibar loader start?"
CODE = "def second():\n    return 2"


def store_long_session(runtime: Runtime, messages: int, *, title: str = "A long session") -> str:
    """``messages`` messages (a multiple of four): a prompt, a reply with a ``view`` call,
    the call's result, a closing reply; turn by turn, "Turn n" in each prompt."""
    session = runtime.store.sessions.create(title=title)
    store = runtime.store.messages
    for turn in range(messages // 4):
        store.add(session.id, "user", [{"type": "text", "text": FIRST_PROMPT if turn == 0 else f"Turn {turn}?"}])
        call = {"type": "tool_call", "id": f"call-{turn}", "name": "view", "arguments": '{"filePath": "a.py"}'}
        store.add(session.id, "assistant", [{"type": "text", "text": f"Reading for turn {turn}."}, call])
        result = {"type": "tool_result", "call_id": f"call-{turn}", "name": "view", "output": "    1\tx = 1"}
        store.add(session.id, "tool", [result])
        store.add(session.id, "assistant", [{"type": "text", "text": f"Turn {turn} is **done**."}])
    return session.id


def prompts_on_screen(chat: ChatLog) -> set[str]:
    return {widget.text for widget in chat.query(UserMessage) if widget.region.height > 0}


def last_message_text(chat: ChatLog) -> str:
    widgets = chat.message_widgets()
    return getattr(widgets[-1], "text", "") if widgets else ""


def kept_above_the_view(chat: ChatLog) -> int:
    """Rows of the window above the view: from its first message's end to the view's top."""
    return int(chat.scroll_y) - chat.message_widgets()[0].virtual_region.bottom


def holders_besides(held: list) -> list:
    """What refers to the items of ``held``, besides that list and running frames."""
    holders = []
    for item in held:
        holders += [holder for holder in gc.get_referrers(item) if holder is not held and not isinstance(holder, FrameType)]
    return holders


async def settled(pilot, chat: ChatLog) -> None:
    """Wait until the chat reads and releases no more pages: its window and scroll
    position the same over three refreshes (a fill runs after a refresh)."""
    still = 0
    while still < 3:
        await wait_until(pilot, lambda: not chat.reading)
        state = (chat.window, chat.scroll_y, chat.max_scroll_y)
        await pilot.pause()
        still = still + 1 if (chat.window, chat.scroll_y, chat.max_scroll_y) == state and not chat.reading else 0


async def test_paging_up_through_a_long_transcript_shows_every_prompt_and_end_comes_back(make_app, tui_runtime):
    session_id = store_long_session(tui_runtime, 200)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await settled(pilot, app.chat)
        chat = app.chat
        seen = prompts_on_screen(chat)
        last_prompt = chat.query(UserMessage).last()
        drawn = [line for line in last_prompt.render_lines(Region(0, 0, *last_prompt.size)) if "Turn 49?" in line.text]
        released = weakref.ref(last_prompt)
        del last_prompt
        most = 0
        for _ in range(200):  # a page up at a time, as a user reads back; ends at the first prompt
            if chat.scroll_y == 0 and chat.window.start == 0:
                break
            chat.scroll_relative(y=-chat.size.height, animate=False, immediate=True)
            await settled(pilot, chat)
            seen |= prompts_on_screen(chat)
            most = max(most, len(chat.message_widgets()))
        assert seen >= {FIRST_PROMPT} | {f"Turn {turn}?" for turn in range(1, 50)}
        assert most <= 80, "far-off messages are released as the walk goes on"
        gc.collect()
        assert released() is None, "nothing keeps the widget of a released message"
        assert drawn and holders_besides(drawn) == [], "nor the lines it drew"
        chat.focus()
        await pilot.press("end")  # straight back to the end
        await wait_until(pilot, lambda: chat.at_session_end and "Turn 49?" in prompts_on_screen(chat))
        assert len(chat.message_widgets()) <= 80


async def test_paging_down_from_the_first_prompt_shows_every_prompt_as_far_ones_above_are_released(
    make_app, tui_runtime
):
    session_id = store_long_session(tui_runtime, 200)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await settled(pilot, chat)
        chat.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: FIRST_PROMPT in prompts_on_screen(chat))
        await settled(pilot, chat)
        seen = prompts_on_screen(chat)
        for _ in range(200):  # a page down at a time, as a user reads on; ends at the last prompt
            if chat.at_session_end and chat.scroll_y == chat.max_scroll_y:
                break
            chat.scroll_relative(y=chat.size.height, animate=False, immediate=True)
            await settled(pilot, chat)
            seen |= prompts_on_screen(chat)
        assert chat.window.start > 0, "the first pages are released on the way down"
        missed = {f"Turn {turn}?" for turn in range(1, 50)} - seen
        assert not missed, f"releasing above keeps the view still: no page is skipped ({sorted(missed)[:3]} were)"


async def test_while_a_session_opens_the_turns_above_its_full_view_wait_and_scrolling_up_reads_them(
    make_app, tui_runtime, script, monkeypatch
):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 600.0)  # a pause in the typing that never comes here
    session_id = store_long_session(tui_runtime, 40)
    app = make_app(script([{"steps": [{"text": "Answered."}]}]))
    async with app.run_test(size=(100, 12)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await pilot.press(*"typed at once")
        await settled(pilot, chat)
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y, "the end fills the view"
        assert chat.window == range(36, 40) and app.prompt.text == "typed at once"
        await pilot.press("enter")  # a prompt sent meanwhile: the end grows, what is above still waits
        await wait_until(pilot, lambda: not app.turn_running and "Answered." in chat.message_widgets()[-1].text)
        await settled(pilot, chat)
        assert chat.window == range(36, 42)
        chat.scroll_relative(y=-chat.size.height, animate=False, immediate=True)
        await wait_until(pilot, lambda: "Turn 8?" in {widget.text for widget in chat.query(UserMessage)})


async def test_the_turns_above_a_full_view_come_once_the_typing_pauses(make_app, tui_runtime, monkeypatch):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 0.05)
    session_id = store_long_session(tui_runtime, 40)
    app = make_app()
    async with app.run_test(size=(100, 12)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await pilot.press(*"typed")
        await wait_until(pilot, lambda: "Turn 8?" in {widget.text for widget in chat.query(UserMessage)})
        assert chat.scroll_y == chat.max_scroll_y, "drawn above the view, which stays at the end"


async def test_a_session_opens_with_as_few_of_its_last_messages_as_fill_the_view(make_app, tui_runtime, monkeypatch):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 600.0)  # what is drawn first stays so
    session_id = store_long_session(tui_runtime, 8)
    code = "\n".join(f"line_{n} = {n}" for n in range(30))
    store = tui_runtime.store.messages
    call = {"type": "tool_call", "id": "call-long", "name": "view", "arguments": '{"filePath": "a.py"}'}
    store.add(session_id, "user", [{"type": "text", "text": "The long one?"}])
    store.add(session_id, "assistant", [{"type": "text", "text": "Reading it."}, call])
    store.add(session_id, "tool", [{"type": "tool_result", "call_id": "call-long", "name": "view", "output": "x"}])
    store.add(session_id, "assistant", [{"type": "text", "text": f"All of it:\n\n```python\n{code}\n```"}])
    app = make_app()
    async with app.run_test(size=(100, 20)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await settled(pilot, chat)
        assert chat.window == range(11, 12), "the long reply fills the view alone"
        assert chat.scroll_y == chat.max_scroll_y > 0
        chat.scroll_relative(y=-chat.size.height, animate=False, immediate=True)
        await wait_until(pilot, lambda: "The long one?" in prompts_on_screen(chat))


async def test_a_reply_growing_screens_tall_releases_the_few_messages_far_above_it(
    make_app, tui_runtime, script, monkeypatch
):
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 0.0)
    session_id = store_long_session(tui_runtime, 8)
    reply = "\n\n".join(f"Paragraph {n} of the long answer." for n in range(40))
    app = make_app(script([{"steps": [{"text": reply}]}]))
    async with app.run_test(size=(100, 12)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await wait_until(pilot, lambda: chat.window == range(0, 8))
        await app.send_prompt("A long answer, please")
        await wait_until(pilot, lambda: not app.turn_running and "Paragraph 39" in last_message_text(chat))
        await settled(pilot, chat)
        assert chat.window.start > 0 and FIRST_PROMPT not in {widget.text for widget in chat.query(UserMessage)}, (
            "ten messages are few, yet those screens above the view are released"
        )
        assert chat.scroll_y == chat.max_scroll_y, "the view still follows the end"
        chat.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: FIRST_PROMPT in prompts_on_screen(chat))


async def test_a_turn_of_many_calls_keeps_the_window_bounded_while_the_chat_follows_its_end(
    make_app, tui_runtime, script
):
    (tui_runtime.root / "a.py").write_text("x = 1\n")
    steps = [{"text": f"Step {n}: reading.", "toolCalls": [{"name": "view", "arguments": {"filePath": "a.py"}}]}
             for n in range(40)]
    app = make_app(script([{"steps": [*steps, {"text": "All forty read."}]}]))
    async with app.run_test(size=(100, 20)) as pilot:
        chat = app.chat
        await app.send_prompt("Read it forty times")
        await wait_until(pilot, lambda: not app.turn_running and "All forty read." in last_message_text(chat))
        await settled(pilot, chat)
        texts = {getattr(widget, "text", "") for widget in chat.message_widgets()}
        assert "Step 0: reading." not in texts, "the turn's first steps are released"
        # What is kept above the view: two screens when the chat last looked, and less than
        # one more that the view has moved through the content since.
        assert kept_above_the_view(chat) <= 3 * chat.size.height, "nothing is kept more than three screens above the view"
        assert chat.scroll_y == chat.max_scroll_y, "the view still follows the end"
        chat.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: "Read it forty times" in prompts_on_screen(chat))


async def test_short_replies_that_move_the_view_down_across_releases_above_keep_the_window_bounded(
    make_app, tui_runtime, script, monkeypatch
):
    # A look releases the rows far above, and scroll_y drops by as many: the view has
    # moved no less through the content for that, and the next look comes a screen of
    # content later. Replies of a few rows each, so that a look releases less than a screen.
    monkeypatch.setattr(chat_log, "FILL_PAUSE", 0.0)
    session_id = store_long_session(tui_runtime, 40)
    paragraphs = (1, 2, 3, 1, 4, 2, 1, 3, 2, 5, 1, 2, 3, 1, 2, 4, 1, 3, 2, 1)
    turns = [{"match": f"Reply {turn},", "steps": [{"text": "\n\n".join(f"Reply {turn}, paragraph {n}."
                                                                         for n in range(count))}]}
             for turn, count in enumerate(paragraphs)]
    app = make_app(script(turns))
    async with app.run_test(size=(100, 20)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await settled(pilot, chat)
        for turn, count in enumerate(paragraphs):
            await app.send_prompt(f"Reply {turn}, please")
            ending = f"Reply {turn}, paragraph {count - 1}."
            await wait_until(pilot, lambda ending=ending: not app.turn_running and ending in last_message_text(chat))
            await settled(pilot, chat)
            assert chat.scroll_y == chat.max_scroll_y, "the view follows the end"
            assert kept_above_the_view(chat) <= 3 * chat.size.height, (
                f"after reply {turn}, nothing is kept more than three screens above the view"
            )


async def test_new_messages_wait_while_the_user_reads_far_above_and_a_prompt_brings_the_end(make_app, tui_runtime, script):
    session_id = store_long_session(tui_runtime, 400)
    app = make_app(script([{"steps": [{"text": "The newest reply."}]}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await pilot.pause()
        chat = app.chat
        await chat.show_position(0)
        await wait_until(pilot, lambda: FIRST_PROMPT in prompts_on_screen(chat))
        assert not chat.at_session_end
        tui_runtime.store.messages.add(session_id, "user", [{"type": "text", "text": "Added elsewhere"}])
        await pilot.pause()
        assert "Added elsewhere" not in {widget.text for widget in chat.query(UserMessage)}
        await app.send_prompt("And now?")
        await wait_until(pilot, lambda: not app.turn_running and "And now?" in prompts_on_screen(chat))
        await wait_until(pilot, lambda: "The newest reply." in chat.message_widgets()[-1].text)
        assert "Added elsewhere" in {widget.text for widget in chat.query(UserMessage)}


async def test_a_reply_that_streams_while_the_user_reads_far_above_counts_once_and_shows_whole_at_the_end(
    make_app, tui_runtime, script
):
    session_id = store_long_session(tui_runtime, 40)
    reply = "\n\n".join(f"Paragraph {n} of the long answer." for n in range(40))
    app = make_app(script([{"steps": [{"text": reply}]}], chunk_delay=0.01))
    async with app.run_test(size=(100, 12)) as pilot:
        chat = app.chat
        await app.open_session(session_id)
        await app.send_prompt("A long answer, please")
        await wait_until(pilot, lambda: "Paragraph 5 " in last_message_text(chat))
        chat.focus()
        await pilot.press("home")  # far above while the reply is stored again and again
        await wait_until(pilot, lambda: FIRST_PROMPT in prompts_on_screen(chat))
        assert not chat.at_session_end
        await wait_until(pilot, lambda: not app.turn_running)
        await pilot.press("end")
        await wait_until(pilot, lambda: chat.at_session_end and "Paragraph 39" in last_message_text(chat))
        assert chat.window.stop == len(tui_runtime.store.messages.list(session_id)) == 42
        assert last_message_text(chat).strip() == reply


async def test_find_reaches_a_word_only_the_first_of_1000_messages_holds(make_app, tui_runtime):
    session_id = store_long_session(tui_runtime, 1000)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await pilot.pause()
        assert FIRST_PROMPT not in {widget.text for widget in app.chat.query(UserMessage)}
        await pilot.press("ctrl+f", *"ZANZIBAR")
        first = lambda: next((w for w in app.chat.query(UserMessage) if w.text == FIRST_PROMPT), None)  # noqa: E731
        await wait_until(pilot, lambda: first() is not None and first().has_class(FOUND) and first().region.height > 0)
        assert str(app.query_one("#find-count").render()) == "1 of 1"
        await pilot.press("escape")
        assert app.focused is app.prompt
        assert not first().has_class(FOUND)


async def test_find_from_the_slash_command_steps_through_every_match(make_app, tui_runtime):
    session_id = store_long_session(tui_runtime, 200)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await pilot.pause()
        app.prompt.load_text("/find done")
        await pilot.press("enter")
        await wait_until(pilot, lambda: str(app.query_one("#find-count").render()) == "50 of 50")
        await pilot.press("up", "up")
        await wait_until(pilot, lambda: str(app.query_one("#find-count").render()) == "48 of 50")
        marked = [widget for widget in app.chat.message_widgets() if widget.has_class(FOUND)]
        assert len(marked) == 1 and "Turn 47 is" in marked[0].text


async def test_copy_puts_the_chosen_code_block_and_the_last_reply_on_the_clipboard(make_app, tui_runtime):
    session_id = store_long_session(tui_runtime, 40)
    reply = f"Two blocks:\n\n```python\nprint('first')\n```\n\nand\n\n```python\n{CODE}\n```\n"
    tui_runtime.store.messages.add(session_id, "user", [{"type": "text", "text": "Show code"}])
    tui_runtime.store.messages.add(session_id, "assistant", [{"type": "text", "text": reply}])
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await pilot.pause()
        await pilot.press("ctrl+l")
        await pilot.press(*"second")
        await wait_until(pilot, lambda: palette_offers(app, "def second"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.clipboard == CODE)
        await app.chat.show_position(0)  # the last reply is read from the store, wherever the chat is
        await app.run_action("copy")
        await wait_until(pilot, lambda: palette_offers(app, "the last reply"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.clipboard == reply)


def scrolled_to(app, session_id: str, position: int, prompt: str):
    """A snapshot's ``run_before``: the session opened, then its message at ``position``
    brought into view, and the chat left once it reads no more pages."""

    async def scroll(pilot) -> None:
        await session_opened(app, session_id)(pilot)
        await app.chat.show_position(position)
        await settled(pilot, app.chat)
        # The thumb measures the window of messages held as widgets, whose extent depends
        # on when each fill ran; the picture is of the messages on screen.
        app.chat.styles.scrollbar_visibility = "hidden"
        await settled(pilot, app.chat)
        assert prompt in prompts_on_screen(app.chat)

    return scroll


def test_snapshot_of_a_long_session_scrolled_to_its_top(snap_compare, make_app, tui_runtime):
    app = make_app()
    session_id = store_long_session(tui_runtime, 400, title="Four hundred messages")
    assert snap_compare(app, terminal_size=(100, 30), run_before=scrolled_to(app, session_id, 0, FIRST_PROMPT))


def test_snapshot_of_a_long_session_scrolled_to_its_middle(snap_compare, make_app, tui_runtime):
    app = make_app()
    session_id = store_long_session(tui_runtime, 400, title="Four hundred messages")
    assert snap_compare(app, terminal_size=(100, 30), run_before=scrolled_to(app, session_id, 200, "Turn 50?"))
