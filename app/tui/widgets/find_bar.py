"""Find in the transcript (ctrl+f or ``/find``): a line above the prompt. Each key searches
the session's messages in the store, those not drawn yet included, and brings the newest
match into view; enter or up goes to the match before it, down to the one after, escape
closes the bar and gives the keyboard back to the prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from app.tui import css_beside

if TYPE_CHECKING:
    from textual.widget import Widget

    from app.tui.widgets.chat_log import ChatLog
    from app.tui.widgets.tool_render import ToolCallView

FOUND = "-found"
"""The class of the message showing the current match."""


class FindBar(Horizontal):
    DEFAULT_CSS = css_beside(__file__)
    BINDINGS = [
        Binding("escape", "close", "Close find, back to the prompt", id="find.close"),
        Binding("up", "step(-1)", "Earlier match", id="find.earlier"),
        Binding("down", "step(1)", "Later match", id="find.later"),
    ]

    def __init__(self, chat: ChatLog, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chat = chat
        self.matches: list[int] = []
        """Positions of the messages holding the text, oldest first."""
        self.current = -1
        self._input = Input(placeholder="Find in the conversation", id="find-input")
        self._count = Static(id="find-count")
        self._marked: Widget | None = None
        self._opened: list[ToolCallView] = []
        """The folded calls opened to show the current match."""

    def compose(self) -> ComposeResult:
        yield self._input
        yield self._count

    def open(self, text: str | None = None) -> None:
        """Show the bar with the keyboard in it (``text``: what to find at once)."""
        self.display = True
        if text is not None:
            self._input.value = text
        self._input.focus()

    @property
    def text(self) -> str:
        return self._input.value

    @on(Input.Changed, "#find-input")
    def _changed(self) -> None:
        self._search(self.text)

    @on(Input.Submitted, "#find-input")
    async def _submitted(self) -> None:
        await self.action_step(-1)

    @work(exclusive=True, group="find", exit_on_error=False)
    async def _search(self, text: str) -> None:
        """Every match of ``text`` in the session; the newest is shown."""
        pages = self.chat.pages
        self.matches = await pages.find(text) if pages is not None and text.strip() else []
        self.current = len(self.matches) - 1
        await self._show()

    async def action_step(self, step: int) -> None:
        if self.matches:
            self.current = (self.current + step) % len(self.matches)
            await self._show()

    async def _show(self) -> None:
        self._mark(None)
        widget = None
        if self.matches:
            self._count.update(Content.styled(f"{self.current + 1} of {len(self.matches)}", "$text-muted"))
            widget = await self.chat.show_position(self.matches[self.current])
            self._mark(widget)
        else:
            self._count.update(Content.styled("no match" if self.text.strip() else "", "$text-muted"))
        await self._reveal_in_calls(widget)

    async def _reveal_in_calls(self, widget: Widget | None) -> None:
        """A match in a tool call's output: the call opened (it may show folded), its
        output expanded, and scrolled into view. A call opened for an earlier match folds
        again, so typing a word does not leave its prefixes' calls open."""
        from app.tui.widgets.message_assistant import AssistantMessage  # drawn already, so loaded

        holding = widget.calls_holding(self.text) if isinstance(widget, AssistantMessage) else []
        for call in self._opened:
            if call not in holding and call.is_attached and not call.folded:
                await call.toggle_body()
        self._opened = [call for call in self._opened if call in holding] + [call for call in holding if call.folded]
        for call in holding:
            await call.reveal(self.text)
        if holding:
            self.chat.call_after_refresh(self.chat.scroll_to_widget, holding[0], animate=False)

    def _mark(self, widget: Widget | None) -> None:
        if self._marked is not None:
            self._marked.remove_class(FOUND)
        self._marked = widget
        if widget is not None:
            widget.add_class(FOUND)

    def action_close(self) -> None:
        self._mark(None)
        self.display = False
        self.post_message(self.Closed())

    class Closed(Message):
        """The bar closed: the keyboard goes back to the prompt."""
