"""The streamed reply: deltas drawn as they come, repaired from the stored message when
the bus dropped some, and the log pinned to the bottom unless the user scrolled up."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.app import App
from textual.containers import Horizontal
from textual.geometry import Size
from textual.pilot import Pilot
from textual.widgets.markdown import MarkdownFence

from app.llm.events import TextDelta, TurnFinished
from app.tui.app import OpencodeApp
from app.tui.widgets import message_text
from app.tui.widgets.message_assistant import AssistantMessage
from app.tui.widgets.message_text import StreamedText
from tests.tui.conftest import wait_until


def streamed_source(app) -> str:
    """The text of the Markdown blocks of the (single) assistant message drawn so far."""
    return "".join(block.source for message in app.query(AssistantMessage) for block in message.query("Markdown"))


async def test_text_that_lost_deltas_is_repaired_from_the_stored_message(make_app, tui_runtime):
    session = tui_runtime.store.sessions.create(title="stream")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.pause()
        messages, bus = tui_runtime.store.messages, tui_runtime.bus
        message = messages.add(session.id, "assistant", [{"type": "text", "text": "Hello "}])
        bus.publish(TextDelta(session.id, message.id, "Hello "))
        bus.publish(TextDelta(session.id, message.id, "world"))  # "brave " was dropped on the way
        await wait_until(pilot, lambda: streamed_source(app) == "Hello world")
        full = [{"type": "text", "text": "Hello brave world"}, {"type": "finish", "reason": "stop"}]
        messages.update(message.id, full, finished=True)
        bus.publish(TurnFinished(session.id, "Hello brave world", "stop"))
        await wait_until(pilot, lambda: streamed_source(app) == "Hello brave world")
        assert len(app.query(AssistantMessage)) == 1


async def test_a_message_created_with_its_first_delta_is_not_drawn_twice(make_app, tui_runtime):
    """The loop stores the message with the first chunk, then publishes that chunk."""
    session = tui_runtime.store.sessions.create(title="stream")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.pause()
        message = tui_runtime.store.messages.add(session.id, "assistant", [{"type": "text", "text": "One "}])
        for chunk in ("One ", "two ", "three"):
            tui_runtime.bus.publish(TextDelta(session.id, message.id, chunk))
        await wait_until(pilot, lambda: streamed_source(app) == "One two three")


async def test_the_log_follows_new_text_until_the_user_scrolls_up(make_app, tui_runtime):
    session = tui_runtime.store.sessions.create(title="long")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.pause()
        chat, bus = app.chat, tui_runtime.bus
        for n in range(60):
            bus.publish(TextDelta(session.id, "m-1", f"line {n}\n\n"))
        await wait_until(pilot, lambda: "line 59" in streamed_source(app))
        await pilot.pause()
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y
        chat.scroll_up(animate=False)
        await pilot.pause()
        held = chat.scroll_y
        assert held < chat.max_scroll_y
        for n in range(60, 80):
            bus.publish(TextDelta(session.id, "m-1", f"line {n}\n\n"))
        await wait_until(pilot, lambda: "line 79" in streamed_source(app))
        await pilot.pause()
        assert chat.scroll_y == held
        chat.scroll_end(animate=False)
        await pilot.pause()
        bus.publish(TextDelta(session.id, "m-1", "the end\n\n"))
        await wait_until(pilot, lambda: "the end" in streamed_source(app))
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y


async def test_a_reply_removed_or_quit_in_mid_stream_stops_writing_quietly(make_app, tui_runtime, monkeypatch):
    """A session switch, then quitting, while a long reply is still streaming (its last
    list line held back, unfinished): no error reaches the app (run_test would raise it)
    nor the event loop (a task failing unobserved)."""
    monkeypatch.setattr(message_text, "LINE_WAIT", 3600.0)
    loop_errors: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: loop_errors.append(context))
    session = tui_runtime.store.sessions.create(title="long")
    other = tui_runtime.store.sessions.create(title="other")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        for message_id, leave in (("m-1", lambda: app.open_session(other.id)), ("m-2", None)):
            await app.open_session(session.id)
            await pilot.pause()
            for n in range(300):
                tui_runtime.bus.publish(TextDelta(session.id, message_id, f"- item {n}\n"))
            tui_runtime.bus.publish(TextDelta(session.id, message_id, "- an item still being writ"))
            await wait_until(pilot, lambda: streamed_source(app).startswith("- item 0"))
            assert all(text.streaming for text in app.query(StreamedText))
            if leave:  # else quit, as run_test ends
                await leave()
                await pilot.pause()
    gc.collect()  # a task whose error nobody awaited reports it when collected
    await asyncio.sleep(0)
    assert loop_errors == []


@asynccontextmanager
async def new_session_open(make_app, tui_runtime) -> AsyncIterator[tuple[OpencodeApp, Pilot, str]]:
    """The app running with a new, empty session open: (app, pilot, session id)."""
    session = tui_runtime.store.sessions.create(title="stream")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session.id)
        await pilot.pause()
        yield app, pilot, session.id


async def test_a_list_streams_a_line_at_a_time_and_its_last_line_once_the_part_ends(make_app, tui_runtime, monkeypatch):
    """Textual's Markdown makes a list again whole at each write that reaches it: the
    list's unfinished line waits for its end (here for ever: LINE_WAIT is an hour)."""
    monkeypatch.setattr(message_text, "LINE_WAIT", 3600.0)
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        messages, bus = tui_runtime.store.messages, tui_runtime.bus
        message = messages.add(session_id, "assistant", [])
        for chunk in ("Steps", ":\n\n- fir", "st\n- sec", "ond"):
            bus.publish(TextDelta(session_id, message.id, chunk))
        await wait_until(pilot, lambda: streamed_source(app) == "Steps:\n\n- first\n")
        await wait_until(pilot, lambda: all(text.text.endswith("- second") for text in app.query(StreamedText)))
        # The document's source changes as a write starts; its widgets once it is mounted.
        await wait_until(pilot, lambda: len(app.query("MarkdownBullet")) == 1)
        assert streamed_source(app) == "Steps:\n\n- first\n"
        full = "Steps:\n\n- first\n- second"
        messages.update(message.id, [{"type": "text", "text": full}, {"type": "finish", "reason": "stop"}], finished=True)
        bus.publish(TurnFinished(session_id, full, "stop"))
        await wait_until(pilot, lambda: streamed_source(app) == full)


async def test_a_list_line_that_waits_too_long_is_drawn_without_its_end(make_app, tui_runtime, monkeypatch):
    monkeypatch.setattr(message_text, "LINE_WAIT", 0.01)
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        for chunk in ("> a quote\n> that goes", " on"):
            tui_runtime.bus.publish(TextDelta(session_id, "m-1", chunk))
        await wait_until(pilot, lambda: streamed_source(app) == "> a quote\n> that goes on")
        assert all(text.streaming for text in app.query(StreamedText))


async def test_paragraphs_and_code_stream_as_they_come(make_app, tui_runtime, monkeypatch):
    """Only a list or a quote waits for its lines: a paragraph, and a code block (even one
    whose lines look like list items), are updated in place."""
    monkeypatch.setattr(message_text, "LINE_WAIT", 3600.0)
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        text = ""
        for chunk in ("- one\n\nThen a para", "graph, and code:\n\n```\n- not a", " list"):
            tui_runtime.bus.publish(TextDelta(session_id, "m-1", chunk))
            text += chunk
            await wait_until(pilot, lambda sent=text: streamed_source(app) == sent)


async def test_a_streaming_text_grows_in_steps_and_fits_its_text_once_it_ends(make_app, tui_runtime):
    """While a reply streams at the end, its height (and so the chat's scroll) moves a
    step of rows at a time; once it ends, the text takes its own rows and the chat
    still shows its end."""
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        chat, bus = app.chat, tui_runtime.bus
        heights, scrolls = [], set()
        for n in range(20):
            bus.publish(TextDelta(session_id, "m-1", f"line {n}\n\n"))
            await wait_until(pilot, lambda n=n: f"line {n}" in streamed_source(app))
            await pilot.pause()
            heights.append(app.query_one(StreamedText).size.height)
            scrolls.add(chat.scroll_y)
        assert all(height % message_text.STEP_ROWS == 0 for height in heights)
        assert len(set(heights)) < len(heights) // 2, "most lines fall in rows held already"
        assert len(scrolls) < len(heights) // 2 and chat.scroll_y == chat.max_scroll_y > 0
        bus.publish(TurnFinished(session_id, "", "stop"))
        text = app.query_one(StreamedText)
        await wait_until(pilot, lambda: not text.streaming and text.size.height < heights[-1])
        await pilot.pause()
        drawn_at_once = StreamedText(text.source)
        await chat.mount(drawn_at_once)
        await pilot.pause()
        assert text.size.height == drawn_at_once.size.height, "no rows held once it ends"


def shown_text(widget) -> str:
    """The text a widget draws, or the widgets in it draw."""
    if widget.children:
        return "\n".join(shown_text(child) for child in widget.children if child.display)
    return "\n".join(widget.render_line(row).text for row in range(widget.size.height))


async def stream_beside_drawn(app, pilot, tui_runtime, session_id: str, chunks: list[str], block: type) -> set:
    """Stream ``chunks`` into a new reply; after each, the reply's last ``block`` (a
    paragraph, a code block) has the size and the scrolling width of the same block in the
    same text drawn at once, beside it (the same width), and shows the chunk's last word.
    Returns the sizes it took."""
    sent, sizes = "", set()
    for chunk in chunks:
        tui_runtime.bus.publish(TextDelta(session_id, "m-1", chunk))
        sent += chunk
        await wait_until(pilot, lambda sent=sent: streamed_source(app) == sent)
        await pilot.pause()
        streamed = app.query_one(StreamedText)
        widget = streamed.query(block).last()
        drawn_at_once = StreamedText(sent)
        await streamed.parent.mount(drawn_at_once)
        await pilot.pause()
        drawn = drawn_at_once.query(block).last()
        assert (widget.size, widget.virtual_size) == (drawn.size, drawn.virtual_size), f"after {sent!r}"
        await drawn_at_once.remove()
        words = [] if chunk.startswith("```") else chunk.split()  # a fence's opening shows no text
        assert not words or words[-1] in shown_text(widget)
        sizes.add(widget.size)
    return sizes


async def test_a_streaming_paragraph_has_the_size_of_its_text_after_every_word(make_app, tui_runtime):
    """A word that stays on the paragraph's last line repaints the paragraph alone
    (``StreamedParagraph``); one that wraps gives it its next row at once."""
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        words = [f"word{n} " for n in range(40)]
        sizes = await stream_beside_drawn(app, pilot, tui_runtime, session_id, words, message_text.PARAGRAPH)
        assert len(sizes) >= 3, "the words wrap onto several rows"
        assert all(isinstance(paragraph, message_text.StreamedParagraph)
                   for paragraph in app.query_one(StreamedText).query(message_text.PARAGRAPH))


async def test_a_streaming_code_block_has_the_size_of_its_code_after_every_write(make_app, tui_runtime):
    """Code within the block's last line redraws that line alone (``StreamedFence``); a
    new line, or a line wider than the screen (the block scrolls sideways), resizes the
    block at once, as drawn at once."""
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        long_line = [f" + term_{n}" for n in range(16)]  # wider than the chat
        chunks = ["```python\n", "total = ", "compute(1)", "\nshort", " = 2\n", "\n", "wide = 0", *long_line,
                  "\nx", " = 1", "\n"]
        sizes = await stream_beside_drawn(app, pilot, tui_runtime, session_id, chunks, MarkdownFence)
        assert len({size.height for size in sizes}) >= 4
        fence = app.query_one(StreamedText).query(MarkdownFence).last()
        assert isinstance(fence, message_text.StreamedFence)
        assert shown_text(fence).split() == "total = compute(1) short = 2 wide = 0".split() + \
            "".join(long_line).split() + "x = 1".split()


async def test_a_label_sized_by_its_content_narrows_with_it():
    """Rows alone do not tell: a code line made shorter leaves the rows as they were, and
    the label, as wide as its widest line, narrows to the new one (or to its container)."""

    class Code(App):
        CSS = "Horizontal { overflow-x: auto; height: auto; }"

        def compose(self):
            with Horizontal():
                yield message_text.SizeKeptLabel("x" * 120, expand=True)

    app = Code()
    async with app.run_test(size=(60, 10)) as pilot:
        label = app.query_one(message_text.SizeKeptLabel)
        assert label.size.width == 120
        label.update("y" * 80)
        await pilot.pause()
        assert label.size == Size(80, 1)
        label.update("z" * 20)
        await pilot.pause()
        assert label.size == Size(60, 1)
        label.update("w" * 30)  # within the container's width: no layout needed, none lost
        await pilot.pause()
        assert label.size == Size(60, 1) and "w" * 30 in label.render_line(0).text


async def test_the_text_keeps_its_width_when_the_chat_starts_to_scroll(make_app, tui_runtime):
    """The chat keeps its scroll bar's column whether it scrolls or not: when a reply
    outgrows the view, nothing already drawn is wrapped and laid out again at a new width."""
    async with new_session_open(make_app, tui_runtime) as (app, pilot, session_id):
        chat, bus = app.chat, tui_runtime.bus
        bus.publish(TextDelta(session_id, "m-1", "A first line.\n\n"))
        await wait_until(pilot, lambda: "A first line." in streamed_source(app))
        await pilot.pause()
        text = app.query_one(StreamedText)
        assert chat.max_scroll_y == 0
        width = text.size.width
        for n in range(60):
            bus.publish(TextDelta(session_id, "m-1", f"line {n}\n\n"))
        await wait_until(pilot, lambda: "line 59" in streamed_source(app))
        await pilot.pause()
        assert chat.max_scroll_y > 0 and chat.show_vertical_scrollbar
        assert text.size.width == width
