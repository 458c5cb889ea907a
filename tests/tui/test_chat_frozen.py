"""Finished Markdown blocks are drawn from a frozen picture of their lines: the screen
must look exactly as with the real blocks, a long reply must stay a few widgets, and the
real blocks must come back for the pointer, a new width or a new theme."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownBlock

from app.llm.events import TextDelta, TurnFinished
from app.tui.widgets.frozen_blocks import FrozenBlocks
from app.tui.widgets.message_text import RUN_BLOCKS, StreamedText
from tests.tui.conftest import wait_until

SECTION = """## Section {n}

A paragraph with **bold**, `inline code` and a [link](https://example.com/{n}).

- one
- two
  - nested under two
- three

1. first
2. second

```python
def double(x):
    return x * {n}
```

| name | value |
|------|-------|
| a    | {n}   |

> a quote, {n}

"""
REPLY = "".join(SECTION.format(n=n) for n in range(5)) + "The end."
SIZE = (100, 260)  # tall enough to show the whole reply: the screenshots cover all of it


def blocks(app) -> list[MarkdownBlock]:
    """The top-level Markdown blocks of every text part."""
    return list(app.chat.query("Markdown > MarkdownBlock"))


def all_frozen(app) -> bool:
    return bool(blocks(app)) and not any(block.display for block in blocks(app))


def all_live(app) -> bool:
    return bool(blocks(app)) and all(block.display for block in blocks(app)) and not app.query(FrozenBlocks)


def laid_out(widget) -> int:
    """How many widgets a layout pass visits under ``widget`` (hidden ones are skipped)."""
    return sum(1 + laid_out(child) for child in widget.children if child.display)


def thaw_everything(app) -> None:
    """As if the pointer had moved over every frozen run: the real blocks come back."""
    for frozen in app.query(FrozenBlocks):
        frozen.post_message(FrozenBlocks.Thaw(frozen, pointed=True))


async def set_theme(app, name: str) -> None:
    app.theme = name


def store_reply(runtime, text: str = REPLY) -> str:
    session = runtime.store.sessions.create(title="frozen")
    runtime.store.messages.add(session.id, "user", [{"type": "text", "text": "Explain."}])
    runtime.store.messages.add(session.id, "assistant", [{"type": "text", "text": text}])
    return session.id


async def test_a_long_stored_reply_is_a_few_widgets_and_looks_the_same_frozen(make_app, tui_runtime):
    assert REPLY.count("\n\n") > RUN_BLOCKS  # more than one frozen run, so a seam between runs is on screen
    session_id = store_reply(tui_runtime)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        await wait_until(pilot, lambda: all_frozen(app))
        await pilot.pause()
        frozen_picture = app.export_screenshot()
        assert len(app.query(FrozenBlocks)) == 2
        assert laid_out(app.chat) < 10  # instead of hundreds of paragraphs, list items and bullets

        thaw_everything(app)
        await wait_until(pilot, lambda: all_live(app))
        await pilot.pause()
        assert app.export_screenshot() == frozen_picture


async def test_a_streamed_reply_ends_frozen_and_drawn_like_the_stored_one(make_app, make_runtime, tui_runtime):
    """Small deltas split the code fences, lists and tables over many writes."""
    stored_runtime = make_runtime(policy="interactive")
    stored = make_app(runtime=stored_runtime)
    async with stored.run_test(size=SIZE) as pilot:
        stored.prompt.cursor_blink = False
        await stored.open_session(store_reply(stored_runtime))
        await wait_until(pilot, lambda: all_frozen(stored))
        await pilot.pause()
        expected = stored.export_screenshot()

    session = tui_runtime.store.sessions.create(title="frozen")
    tui_runtime.store.messages.add(session.id, "user", [{"type": "text", "text": "Explain."}])
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.cursor_blink = False
        await app.open_session(session.id)
        await pilot.pause()
        message = tui_runtime.store.messages.add(session.id, "assistant", [{"type": "text", "text": ""}])
        for start in range(0, len(REPLY), 7):
            tui_runtime.bus.publish(TextDelta(session.id, message.id, REPLY[start : start + 7]))
        await wait_until(pilot, lambda: len(app.query(FrozenBlocks)) >= 1)  # frozen while it streams
        tui_runtime.store.messages.update(message.id, [{"type": "text", "text": REPLY}], finished=True)
        tui_runtime.bus.publish(TurnFinished(session.id, REPLY, "stop"))
        await wait_until(pilot, lambda: all(text.drawn for text in app.query(StreamedText)) and all_frozen(app))
        await pilot.pause()
        assert app.export_screenshot() == expected


async def test_pointing_at_a_frozen_reply_brings_its_blocks_back_until_the_pointer_leaves(make_app, tui_runtime):
    session_id = store_reply(tui_runtime, "First paragraph.\n\nSecond paragraph.\n\n- a\n- b\n")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await app.open_session(session_id)
        await wait_until(pilot, lambda: all_frozen(app))
        await pilot.hover(FrozenBlocks, offset=(2, 0))
        await wait_until(pilot, lambda: all_live(app))  # links, selection and wide code need them
        await pilot.hover("#prompt")
        await wait_until(pilot, lambda: all_frozen(app))


async def test_a_new_width_or_theme_redraws_the_frozen_lines(make_app, tui_runtime):
    session_id = store_reply(tui_runtime)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        await wait_until(pilot, lambda: all_frozen(app))
        wide = app.query(FrozenBlocks).first().lines[0].cell_length
        for change in (lambda: pilot.resize_terminal(60, SIZE[1]), lambda: set_theme(app, "textual-light")):
            before = set(app.query(FrozenBlocks))
            await change()
            await wait_until(pilot, lambda before=before: all_frozen(app) and not before & set(app.query(FrozenBlocks)))
        assert all(frozen.lines[0].cell_length == frozen.size.width < wide for frozen in app.query(FrozenBlocks))
        await pilot.pause()
        frozen_picture = app.export_screenshot()

        thaw_everything(app)
        await wait_until(pilot, lambda: all_live(app))
        await pilot.pause()
        assert app.export_screenshot() == frozen_picture
