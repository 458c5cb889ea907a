"""The conversation: user prompts, streamed assistant messages with their tool calls, and
the app's own notices, for one session (``session_id``). Anchored to the bottom unless the
user scrolls up.

What it costs follows what is on screen, not the session's length: the chat holds a
window of the session's messages as widgets, read from the store (``MessagePages``) a page
at a time. Opening a session draws its end (as few of its last messages as fill the view,
by ``estimated_rows``), then a turn at a time above it until a screen above the view is
drawn, so each step lays out little. Once the view is full, those turns above wait for the keyboard to be quiet for ``FILL_PAUSE`` (after the
end is drawn, and after each change the user types in the prompt, see ``typed``):
laying out a turn holds the UI thread for longer than a typed key's echo should wait,
and they are off screen until the user scrolls, which reads them at once. Scrolling
near the top of the window
reads the page before it, near the bottom the page after it, and each time the view has
moved a screen (the user scrolling, or a reply growing at the end) the messages two
screens or more past it are released, however few the window holds. While the
window does not reach the session's end (the user scrolled far up), new messages are
counted, not drawn: scrolling down, or sending a prompt, brings the end back. A tool
result (a message of its own) always stays in the window with the reply that called it.

It knows nothing of the bus: ``app.tui.listener`` matches the core's events and calls the
methods below. That keeps the event classes (and the store and agent packages behind
them) off the first frame's imports, as are the message widgets, which the empty chat of
the first frame does not need."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.timer import Timer

from app.core import gc_policy
from app.tui import css_beside

if TYPE_CHECKING:
    from textual.widget import Widget

    from app.store.models import Message
    from app.tui.message_pages import MessagePages
    from app.tui.widgets.message_assistant import AssistantMessage
    from app.tui.widgets.message_notice import ChatNotice, NoticeKind
    from app.tui.widgets.task_view import TaskView
    from app.tui.widgets.tool_render import ToolCallView

ToolResult = tuple[str, dict[str, Any], bool]
CANCELLED_CALL = "Cancelled before it finished."
"""The result the chat gives a call still running when its turn is cancelled."""
PAGE = 8
"""Messages read from the store at a time (two turns of prompt, reply, tool result, reply)."""
FIRST_PAGE = PAGE // 2
"""Messages read at a time while a session opens (about a turn, which mostly fills a
screen): its end is drawn from the last of them, the pages above follow once it is on
screen."""
FILL_PAUSE = 0.3
"""Seconds without typing in the prompt before the turns above a full view are drawn
while a session opens (longer than the gap between keys of someone typing on)."""
WALK_LIMIT = 24
"""Beyond this many messages as widgets, those far from the view are released before a
page is read too (scrolling on and on): every page read lays out the whole window again,
so a small one keeps a walk quick."""
RELEASED_PER_COLLECTION = 24
"""Messages released between two full collections: often enough that released widgets
never pile up (the memory of a walk through the transcript stays flat), rarely enough that
the collections cost little beside reading and laying out the pages."""


CODE_FENCES = ("```", "~~~")
"""How a line that opens or closes a Markdown code block starts."""
MESSAGE_INSET = 4
"""Columns of the chat's width that a message's text does not take (borders, padding, the
scroll bar), for ``estimated_rows``."""


def estimated_rows(message: Message, width: int) -> int:
    """About the rows ``message`` takes at ``width`` columns, from its stored text alone
    (no layout): each line of text wrapped, each tool call folded to one line, one row
    between messages; a tool result shows in its call."""
    if message.role == "tool":
        return 0
    rows = 1
    for part in message.parts:
        if part.get("type") == "tool_call":
            rows += 1
        elif part.get("type") == "text":
            for line in str(part.get("text", "")).splitlines():
                rows += max(1, -(-len(line) // width))
                if line.lstrip().startswith(CODE_FENCES):
                    rows += 1  # a code block's margins and padding: two rows more than its fence lines
    return rows


def rows_filled(messages: list[Message], rows: int, width: int) -> int:
    """How many of the last of ``messages`` it takes to fill ``rows`` rows (by
    ``estimated_rows``), never starting at a tool result (it goes with the reply that
    called it); all of them when they fall short."""
    filled = 0
    for taken, message in enumerate(reversed(messages), 1):
        filled += estimated_rows(message, width)
        if filled >= rows and message.role != "tool":
            return taken
    return len(messages)


class Shown(NamedTuple):
    """A message of the window: its id and role, and its widget (a tool result has none)."""

    message_id: str
    role: str
    widget: Widget | None


class Notice(NamedTuple):
    """A notice of the app, shown after the message at ``after`` (-1: before the first)."""

    after: int
    text: str
    kind: NoticeKind


class ChatLog(VerticalScroll):
    DEFAULT_CSS = css_beside(__file__)
    BINDINGS = [
        Binding("home", "first_message", "The session's first message", show=False, id="chat.first"),
        Binding("end", "last_message", "The session's last message", show=False, id="chat.last"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session_id: str | None = None
        self._pages: MessagePages | None = None
        self._first = 0
        """Position of the window's first message in the session."""
        self._end = 0
        """One past the window's last message."""
        self._total = 0
        """Messages in the session, those not drawn included."""
        self._counted: set[str] = set()
        """Messages new to the session since it was shown, each counted once: a message
        is stored again and again as it streams, and its widget may have been released
        (the view went far up) before it is stored again."""
        self._shown: dict[int, Shown] = {}
        self._positions: dict[str, int] = {}
        self._notices: list[Notice] = []
        self._reading = asyncio.Lock()
        """Held while the window changes (a page read and mounted, a jump): one at a time."""
        self._fill_skipped = False
        """A fill came while the window was changing (or before the change was laid out):
        it runs again once the change is laid out."""
        self._laid_out = True
        """The last change of the window has been laid out: the widgets' places are known."""
        self._released = 0
        """Messages released since the last full collection."""
        self._looked_at = 0.0
        """Where the view was (``scroll_y``) when the window was last looked at for messages
        far from it: looking again asks where widgets off screen are, which costs a map of
        every widget, so it waits until the view has moved a screen."""
        self._opening = False
        """The session shown does not have its first screens drawn yet: the window has not
        reached a screen above the view (nor the session's start), and the view has not
        jumped elsewhere. Until then pages above are read a turn at a time."""
        self._opened = asyncio.Event()
        """Set once the session shown has its first screens drawn, or a full view of its
        end is laid out and the turns above wait for the keyboard to be quiet."""
        self._opened.set()
        self._quiet_since = 0.0
        """When the keyboard last did something the opening fill waits after (a change
        typed in the prompt, the session's end drawn): ``time.monotonic()``."""
        self._fill_waits: Timer | None = None
        """The opening fill, waiting for the keyboard to be quiet."""
        self._assistants: dict[str, AssistantMessage] = {}
        self._results: dict[str, ToolResult] = {}
        self._subagents: dict[str, tuple[str, str, str]] = {}
        """Task call id -> (child session, agent, description), as the loop announced them."""
        self.shown_as: dict[str, str] = {}
        """Prompt sent -> how it read in the prompt (long pastes collapsed); the app fills
        it as it sends, so the chat shows a prompt as the user saw it."""

    def on_mount(self) -> None:
        self.anchor()

    @property
    def at_session_end(self) -> bool:
        """The window reaches the session's last message (new ones are drawn as they come)."""
        return self._end == self._total

    @property
    def pages(self) -> MessagePages | None:
        """Where the session's messages are read from (None: a blank chat)."""
        return self._pages

    def message_widgets(self) -> list[Widget]:
        """The widgets of the window's prompts and replies, oldest first."""
        return [shown.widget for _, shown in sorted(self._shown.items()) if shown.widget is not None]

    @property
    def reading(self) -> bool:
        """A page is being read or mounted."""
        return self._reading.locked()

    @property
    def window(self) -> range:
        """The positions of the messages drawn (or ready to be) as widgets."""
        return range(self._first, self._end)

    async def show_session(self, session_id: str | None, pages: MessagePages | None) -> None:
        """Forget what is shown and draw the end of a session (None: a blank chat)."""
        async with self._changing():
            await self._clear()
            self._assistants.clear()
            self._results.clear()
            self._subagents.clear()
            self._notices.clear()
            self._counted.clear()
            self.session_id = session_id
            self._pages = pages
            self._opening = True
            self._opened.clear()
            self._quiet_since = time.monotonic()
            self._total = await pages.count() if pages is not None else 0
            self._first = self._end = self._total
            with self.app.batch_update():  # one layout once it is all mounted, not one per step of mounting
                await self._read_older(FIRST_PAGE, rows=self.size.height or None)
        self.anchor()
        self.call_after_refresh(self._fill)

    async def opened(self) -> None:
        """Wait until the session shown has its first screens drawn, or the turns above
        its full view wait for the keyboard (see ``_opened``)."""
        await self._opened.wait()

    def typed(self) -> None:
        """The user typed in the prompt: while a session opens, the turns above its full
        view wait until the typing pauses (``FILL_PAUSE``)."""
        self._quiet_since = time.monotonic()

    async def read_from(self, pages: MessagePages | None) -> bool:
        """Read the session shown from ``pages`` from now on (the same session through
        another connection to its store), keeping what is drawn. False, changing nothing,
        when ``pages`` is of another session or counts other messages (it changed in
        between): the caller draws it afresh."""
        async with self._changing():
            if pages is None or pages.session_id != self.session_id or await pages.count() != self._total:
                return False
            self._pages = pages
        return True

    async def _clear(self) -> None:
        await self._let_go(list(self.children), len(self._shown))
        self._shown.clear()
        self._positions.clear()

    async def _let_go(self, widgets: list[Widget], messages: int) -> None:
        """Remove the widgets of ``messages`` released messages, and the memory they held."""
        removed = [node for widget in widgets for node in widget.walk_children(with_self=True)]
        await self.remove_children(widgets)
        # Textual keeps a widget's rendered lines in a cache of its own, and a process-wide
        # cache of a thousand entries keyed on those caches keeps them after the widget is
        # gone: a refresh empties the cache (nothing draws a removed widget again).
        for node in removed:
            node.refresh()
        # Widgets live in reference cycles: only a full pass of the collector frees them.
        self._released += messages
        if self._released >= RELEASED_PER_COLLECTION:
            self._released = 0
            gc_policy.collect()

    # -- the window ------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.call_later(self._fill)

    def watch_virtual_size(self) -> None:
        # A chat anchored to its end follows what is added without its scroll_y watcher
        # hearing of it (Textual moves it as it lays the chat out): the height growing
        # (a reply streaming in, a turn's calls and replies) is when to look again for
        # what is now far above. Only that: pages are read as the user scrolls.
        self.call_later(self._release_if_moved)

    def on_resize(self) -> None:
        self.call_later(self._fill)

    async def _fill(self) -> None:
        """Read the next page when the view comes within a screen of the window's edge."""
        if self._pages is None or not self.is_attached:
            self._done_opening()
            return
        if self._window_changing():
            return
        if self.at_session_end and not self.is_anchored and self.scroll_y >= self.max_scroll_y:
            self.anchor()  # back at the end: new messages keep the view at the bottom again
        margin = max(self.size.height, 1)
        if self._end - self._first > WALK_LIMIT:
            # A walk that reads page after page never reaches the release below.
            await self._release_far(margin)
        older = self._first > 0 and self.scroll_y < margin
        newer = self._end < self._total and self.scroll_y > self.max_scroll_y - margin
        if older and self._waits_for_quiet():
            return
        if older:
            await self._load_older()
        elif newer:
            await self._load_newer()
        else:
            await self._release_if_moved()
        if not (older or newer):
            self._done_opening()

    async def _release_if_moved(self) -> None:
        """Release what is far from the view once it has moved a screen since it last
        looked; while the window changes, the fill that follows the change looks instead."""
        if self._pages is None or not self.is_attached or self._window_changing():
            return
        margin = max(self.size.height, 1)
        if abs(self.scroll_y - self._looked_at) >= margin:
            await self._release_far(margin)

    def _window_changing(self) -> bool:
        """The window is changing or not laid out yet: what to read or release depends on
        where the widgets are, known after layout, so the fill that follows looks instead."""
        if self._reading.locked() or not self._laid_out:
            self._fill_skipped = True
            return True
        return False

    def _done_opening(self) -> None:
        """The session's first screens are drawn, or the view went elsewhere: a fill put
        off until the keyboard is quiet has nothing left to wait for."""
        self._opening = False
        self._opened.set()
        if self._fill_waits is not None:
            self._fill_waits.stop()
            self._fill_waits = None

    def _waits_for_quiet(self) -> bool:
        """While a session opens with its view full and at the end (what is above is off
        screen), put the next turn above off until the keyboard has been quiet for
        ``FILL_PAUSE``; True when it is put off."""
        if not self._opening or self.max_scroll_y == 0 or self.scroll_y < self.max_scroll_y:
            return False
        wait = self._quiet_since + FILL_PAUSE - time.monotonic()
        if wait <= 0:
            return False
        if self._fill_waits is None:  # one at a time: it looks again when it fires
            self._fill_waits = self.set_timer(wait, self._fill_once_quiet)
        self._opened.set()  # the end is on screen: what is above can wait
        return True

    async def _fill_once_quiet(self) -> None:
        self._fill_waits = None
        await self._fill()

    async def _release_far(self, screen: int) -> None:
        """Release the messages more than two screens past the view's edges (so far that
        no scroll within the fill margin reads them again), keeping one at least."""
        self._looked_at = self.scroll_y
        stop = self._end
        while stop - self._first > 1 and self._top_of(stop - 1) > self.scroll_y + 3 * screen:
            stop -= 1
        start = self._first
        while stop - start > 1 and self._bottom_of(start) < self.scroll_y - 2 * screen:
            start += 1
        if stop == self._end and start == self._first:
            return
        async with self._changing():
            if stop < self._end:
                await self._release_below(stop)
            if start > self._first:
                await self._release_above(start)

    @asynccontextmanager
    async def _changing(self) -> AsyncIterator[None]:
        """Hold the window for one change; a fill that came meanwhile runs once it is laid
        out, so where the window ends up depends on where the view is, not on when it
        scrolled."""
        async with self._reading:
            self._laid_out = False
            yield
        self.call_after_refresh(self._change_laid_out)

    def _change_laid_out(self) -> None:
        self._laid_out = True
        if self._fill_skipped:
            self._fill_skipped = False
            self.call_later(self._fill)

    def _top_of(self, position: int) -> int:
        widget = self.widget_at(position)
        return widget.virtual_region.y if widget is not None else 0

    def _bottom_of(self, position: int) -> int:
        widget = self.widget_at(position)
        return widget.virtual_region.bottom if widget is not None else 0

    async def _load_older(self) -> None:
        async with self._changing():
            # While a session opens, a turn at a time: the view is laid out in short steps.
            await self._read_older(FIRST_PAGE if self._opening else PAGE)
        self.call_after_refresh(self._fill)

    async def _load_newer(self) -> None:
        async with self._changing():
            await self._read_newer()
        self.call_after_refresh(self._fill)

    async def _read_older(self, size: int = PAGE, *, rows: int | None = None) -> None:
        """The ``size`` messages before the window, mounted above it with the view kept
        where it was; with ``rows``, only the last of them that fill that many rows (by
        ``rows_filled``): a session's end is drawn with no more than its view shows."""
        if self._pages is None or self._first == 0:
            return
        start = max(self._first - size, 0)
        read_from = max(start - 1, 0)
        messages = await self._pages.page(read_from, self._first)
        # A tool result at the page's start goes with the reply before it.
        if start > read_from and len(messages) > 1 and messages[1].role == "tool":
            start = read_from
        else:
            messages = messages[start - read_from:]
        if rows is not None:
            taken = rows_filled(messages, rows, max(self.size.width - MESSAGE_INSET, 1))
            start += len(messages) - taken
            messages = messages[len(messages) - taken:]
        keep_view = self._view_keeper()
        widgets = self._build(messages, start)
        self._first = start
        if self.children:
            await self.mount_all(widgets, before=0)
        else:
            await self.mount_all(widgets)
        await self._complete(messages, start)
        keep_view()

    async def _read_newer(self) -> None:
        """The page after the window, mounted below it; released above when it grows."""
        if self._pages is None or self._end >= self._total:
            return
        start = self._end
        stop = min(start + PAGE, self._total)
        messages = await self._pages.page(start, stop + 1)
        # A tool result just past the page goes with the reply before it.
        if len(messages) <= stop - start or messages[stop - start].role != "tool":
            messages = messages[: stop - start]
        self._end = start + len(messages)
        await self.mount_all(self._build(messages, start))
        await self._complete(messages, start)

    def _view_keeper(self) -> Any:
        """What keeps the content on screen still while widgets are added or removed above
        it: call the returned function after the change. An anchored chat at its bottom
        stays there by itself. Either way, where the view was last looked at moves with
        the rows added or removed above, so that the next look comes once the view has
        moved a screen through the content, however the rows above it changed."""
        follows_end = self.is_anchored and self.scroll_y >= self.max_scroll_y
        top = self.scroll_y
        kept = next((child for child in self.children if child.virtual_region.bottom > top), None)
        if kept is None:
            return lambda: None
        before = kept.virtual_region.y

        def keep() -> None:
            def adjust() -> None:
                if not kept.is_attached:
                    return
                shift = kept.virtual_region.y - before
                self._looked_at += shift
                if not follows_end:
                    self.scroll_to(y=self.scroll_y + shift, animate=False, immediate=True)

            self.call_after_refresh(adjust)

        return keep

    async def _release_below(self, stop: int) -> None:
        """Release the messages from ``stop`` on (the window no longer reaches the end)."""
        while stop < self._end and self._role_at(stop) == "tool":
            stop += 1
        released = range(stop, self._end)
        self._end = stop
        await self._release(released)
        if not self.at_session_end:
            self.anchor(False)

    async def _release_above(self, start: int) -> None:
        """Release the messages before ``start``, keeping the view still."""
        if self._role_at(start) == "tool":
            start -= 1
        released = range(self._first, start)
        self._first = start
        keep_view = self._view_keeper()
        await self._release(released)
        keep_view()

    def _role_at(self, position: int) -> str:
        shown = self._shown.get(position)
        return shown.role if shown else ""

    async def _release(self, positions: range) -> None:
        from app.tui.widgets.message_notice import ChatNotice

        widgets: list[Widget] = []
        released = 0
        for position in positions:
            shown = self._shown.pop(position, None)
            if shown is None:
                continue
            released += 1
            self._positions.pop(shown.message_id, None)
            assistant = self._assistants.pop(shown.message_id, None)
            if assistant is not None:
                for call_id in assistant.tool_views:
                    self._results.pop(call_id, None)
            if shown.widget is not None:
                widgets.append(shown.widget)
        widgets += [child for child in self.children if isinstance(child, ChatNotice) and child.after in positions]
        await self._let_go(widgets, released)

    def _build(self, messages: list[Message], start: int) -> list[Widget]:
        """The widgets of a page of stored messages, and the notices shown among them,
        in order; the tool results are drawn once they are mounted (``_complete``)."""
        widgets: list[Widget] = []
        if start == 0:  # the notices before the session's first message
            widgets += [self._notice_widget(notice) for notice in self._notices if notice.after == -1]
        for offset, message in enumerate(messages):
            position = start + offset
            widget = self._message_widget(message, stored=True)
            self._shown[position] = Shown(message.id, message.role, widget)
            self._positions[message.id] = position
            if widget is not None:
                widgets.append(widget)
            widgets += [self._notice_widget(notice) for notice in self._notices if notice.after == position]
        return widgets

    async def _complete(self, messages: list[Message], start: int) -> None:
        """Draw the tool results of a mounted page's replies."""
        for message in messages:
            assistant = self._assistants.get(message.id)
            if assistant is not None:
                await self._reapply_results(assistant)
        for message in messages:
            await self._finish_calls(message)

    def _message_widget(self, message: Message, *, stored: bool = False) -> Widget | None:
        """A message's widget (None for a tool result); ``stored``: a reply is composed
        with its parts, else they are drawn as they stream or once it is complete."""
        if message.role == "user":
            from app.tui.widgets.message_user import UserMessage

            text = "".join(p.get("text", "") for p in message.parts if p.get("type") == "text")
            attached = [p["path"] for p in message.parts if p.get("type") == "file"]
            return UserMessage(text, message_id=message.id, shown=self.shown_as.get(text), attached=attached)
        if message.role == "assistant":
            # Imported on first use: Markdown and syntax highlighting are not needed for
            # the first frame, which must not wait for them.
            from app.tui.widgets.message_assistant import AssistantMessage

            assistant = AssistantMessage(message.id, message.parts if stored else None)
            self._assistants[message.id] = assistant
            return assistant
        return None

    def widget_at(self, position: int) -> Widget | None:
        """The widget showing the message at ``position``, or the nearest one before it
        (a tool result shows in the reply that called it); None outside the window."""
        for earlier in range(position, self._first - 1, -1):
            shown = self._shown.get(earlier)
            if shown is not None and shown.widget is not None:
                return shown.widget
        return None

    async def show_position(self, position: int) -> Widget | None:
        """Bring the message at ``position`` into the window (reading its page if it is
        not there) and scroll to it; returns its widget."""
        if self._pages is None or not 0 <= position < self._total:
            return None
        self._done_opening()
        async with self._changing():
            if position not in self.window:
                await self._clear()
                self._first = self._end = max(position - 1, 0)
                self.anchor(False)
                await self._read_newer()
        self.call_after_refresh(self._fill)
        widget = self.widget_at(position)
        if widget is not None:
            self.call_after_refresh(self.scroll_to_widget, widget, animate=False, top=True)
        return widget

    async def action_first_message(self) -> None:
        await self.show_position(0)

    async def action_last_message(self) -> None:
        await self.show_end()
        self.scroll_end(animate=False)

    async def show_end(self) -> None:
        """Back to the session's end (a prompt is sent while the user reads far above).
        A session still opening at its end goes on opening as it did."""
        async with self._changing():
            if not self.at_session_end:
                self._done_opening()
                await self._clear()
                self._first = self._end = self._total
                await self._read_older()
        self.anchor()
        self.call_after_refresh(self._fill)

    # -- the app's notices -----------------------------------------------------------------

    async def add_notice(self, text: str, kind: NoticeKind = "info") -> ChatNotice | None:
        """A notice after the session's last message; drawn when the window reaches it."""
        notice = Notice(self._total - 1, text, kind)
        self._notices.append(notice)
        if not self.at_session_end:
            return None
        widget = self._notice_widget(notice)
        await self.mount(widget)
        return widget

    @staticmethod
    def _notice_widget(notice: Notice) -> ChatNotice:
        from app.tui.widgets.message_notice import ChatNotice

        widget = ChatNotice(notice.text, notice.kind)
        widget.after = notice.after
        return widget

    # -- messages as they stream -----------------------------------------------------------

    async def append_text(self, message_id: str, text: str) -> None:
        assistant = await self._streamed(message_id)
        if assistant is not None:
            await assistant.append_text(text)

    async def append_reasoning(self, message_id: str, text: str) -> None:
        assistant = await self._streamed(message_id)
        if assistant is not None:
            await assistant.append_reasoning(text)

    async def add_tool_call(self, message_id: str, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        assistant = await self._streamed(message_id)
        if assistant is None:
            return
        await assistant.add_tool_call(call_id, tool, arguments)
        task = self._task_view(call_id)
        if task is not None and call_id in self._subagents:  # announced before its block was drawn
            task.started(*self._subagents[call_id])

    def link_subagent(self, call_id: str | None, child_session_id: str, agent: str, description: str) -> None:
        """A task call of this session started a sub-agent in ``child_session_id``."""
        if call_id is None:
            return
        self._subagents[call_id] = (child_session_id, agent, description)
        task = self._task_view(call_id)
        if task is not None:
            task.started(child_session_id, agent, description)

    def task_of(self, child_session_id: str | None) -> TaskView | None:
        """The block of the latest task call that ran ``child_session_id`` in this chat:
        a call with a ``task_id`` continues an earlier child, in a block of its own."""
        for call_id, (child, _, _) in reversed(self._subagents.items()):
            if child == child_session_id:
                return self._task_view(call_id)
        return None

    def _task_view(self, call_id: str) -> TaskView | None:
        from app.tui.widgets.task_view import TaskView  # loaded with the first reply, not the first frame

        view = self._tool_view(call_id)
        return view if isinstance(view, TaskView) else None

    @property
    def child_sessions(self) -> list[str]:
        """Every child session this chat's task calls started while it was shown."""
        return [child for child, _, _ in self._subagents.values()]

    async def finish_call(self, call_id: str, result: ToolResult) -> None:
        """A tool call's (output, metadata, error); kept for a view not drawn yet."""
        self._results.setdefault(call_id, result)
        view = self._tool_view(call_id)
        if view is not None:
            await view.finish(*result)

    async def _finish_calls(self, message: Message) -> None:
        for part in message.parts:
            if part.get("type") == "tool_result":
                result = (str(part.get("output", "")), part.get("metadata") or {}, bool(part.get("error")))
                await self.finish_call(str(part.get("call_id")), result)

    async def draw_message(self, message: Message, *, finished: bool, created: bool = False) -> None:
        """A stored message, as ``created`` or updated (``finished``: its final version).
        A message created is the session's newest: drawn when the window reaches the end,
        else only counted. A message updated outside the window waits there in the store."""
        if message.undone:
            return
        position = self._positions.get(message.id)
        if position is None:
            if not created:
                return
            position = self._total
            widget = self._message_widget(message) if self.at_session_end else None
            if not await self._add_newest(message.id, message.role, widget):
                return
            complete = finished or any(part.get("type") == "finish" for part in message.parts)
            if message.role == "assistant" and complete:
                assistant = self._assistants[message.id]
                await assistant.show_parts(message.parts)
                await self._reapply_results(assistant)
        elif message.role == "assistant" and message.id in self._assistants:
            # While a message streams its deltas draw it; the stored parts are checked
            # against what streamed once it is complete.
            assistant = self._assistants[message.id]
            complete = finished or any(part.get("type") == "finish" for part in message.parts)
            if complete and await assistant.reconcile(message.parts):
                await self._reapply_results(assistant)
        if position in self.window:
            await self._finish_calls(message)

    async def _add_newest(self, message_id: str, role: str, widget: Widget | None) -> bool:
        """Count a message new to the session (once); draw it when the window reaches the end."""
        if message_id in self._counted:
            return False
        self._counted.add(message_id)
        position = self._total
        self._total += 1
        if self._end != position:
            return False
        self._end += 1
        self._shown[position] = Shown(message_id, role, widget)
        self._positions[message_id] = position
        if widget is not None:
            await self.mount(widget)
        return True

    async def _streamed(self, message_id: str) -> AssistantMessage | None:
        """The reply a streamed event belongs to: drawn already, or new to the session
        (its deltas can come before the stored message); None when out of the window."""
        assistant = self._assistants.get(message_id)
        if assistant is None and message_id not in self._positions and self.at_session_end:
            from app.tui.widgets.message_assistant import AssistantMessage

            assistant = self._assistants[message_id] = AssistantMessage(message_id)
            await self._add_newest(message_id, "assistant", assistant)
        return assistant

    def _tool_view(self, call_id: str) -> ToolCallView | None:
        for assistant in self._assistants.values():
            if call_id in assistant.tool_views:
                return assistant.tool_views[call_id]
        return None

    async def _reapply_results(self, assistant: AssistantMessage) -> None:
        for call_id, view in assistant.tool_views.items():
            if call_id in self._results:
                await view.finish(*self._results[call_id])

    def end_streams(self) -> None:
        """The turn is over: every streamed text is complete."""
        for assistant in self._assistants.values():
            assistant.end_text()

    async def cancel_running_calls(self) -> None:
        for assistant in self._assistants.values():
            for view in assistant.tool_views.values():
                await view.finish(CANCELLED_CALL, {}, True)
