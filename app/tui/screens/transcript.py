"""A sub-agent's whole transcript, full screen and read-only: the child session's messages
and tool calls drawn by the same chat widgets as the main chat, and kept live while the
sub-agent runs (the app's listener draws into every open transcript and tells its
heading when the child's turn starts and ends). Escape goes back to the parent's chat,
which is left as it was, scroll position included, with the keyboard on the prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from app.tui.screens.main import MainScreen
from app.tui.widgets.chat_log import ChatLog

if TYPE_CHECKING:
    from app.tui.message_pages import MessagePages


class TranscriptScreen(Screen[None]):
    CSS_PATH = "transcript.tcss"
    BINDINGS = [Binding("escape,q", "close", "Back to the parent's chat", id="transcript.close")]

    def __init__(self, title: str, pages: MessagePages, *, running: bool = False) -> None:
        super().__init__()
        self.session_id = pages.session_id
        self.heading = title
        self.state = "running" if running else ""
        """running, done, failed or cancelled; empty for a sub-agent that ended before it opened."""
        self._pages = pages
        self._title = Static(id="transcript-title")
        self.chat = ChatLog(id="transcript-chat")

    def compose(self) -> ComposeResult:
        yield self._title
        yield self.chat
        yield Static(Content.styled("esc back to the parent's chat · ↑↓ scroll", "$text-muted"), id="transcript-keys")

    def show_state(self, state: str) -> None:
        """The sub-agent started a turn or ended one (the app's listener says which)."""
        self.state = state
        self._show_title()

    def _show_title(self) -> None:
        self._title.update(
            Content.assemble(
                (self.heading, "bold"),
                ("  sub-agent transcript", "$text-muted"),
                *(((" · ", "$text-muted"), (self.state, "italic $accent")) if self.state else ()),
            )
        )

    async def on_mount(self) -> None:
        self._show_title()
        await self.chat.show_session(self.session_id, self._pages)
        self.chat.focus()

    def action_close(self) -> None:
        """Back to the parent's chat with the keyboard on the prompt: the task block that
        opened this would take the spaces and enter of what is typed next."""
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if isinstance(below, MainScreen):
            below.keyboard_home()
        self.dismiss(None)
