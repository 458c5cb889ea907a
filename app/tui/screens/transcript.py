"""A sub-agent's whole transcript, full screen and read-only: the child session's messages
and tool calls drawn by the same chat widgets as the main chat, and kept live while the
sub-agent runs (the app's listener draws into every open transcript). Escape goes back
to the parent's chat, which is left as it was, scroll position and focus included."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from app.tui.widgets.chat_log import ChatLog

if TYPE_CHECKING:
    from app.store.models import Message


class TranscriptScreen(Screen[None]):
    CSS_PATH = "transcript.tcss"
    BINDINGS = [Binding("escape,q", "close", "Back to the parent's chat", id="transcript.close")]

    def __init__(self, session_id: str, title: str, messages: list[Message]) -> None:
        super().__init__()
        self.session_id = session_id
        self.heading = title
        self._messages = messages
        self.chat = ChatLog(id="transcript-chat")

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble((self.heading, "bold"), ("  sub-agent transcript", "$text-muted")), id="transcript-title"
        )
        yield self.chat
        yield Static(Content.styled("esc back to the parent's chat · ↑↓ scroll", "$text-muted"), id="transcript-keys")

    async def on_mount(self) -> None:
        await self.chat.show_session(self.session_id, self._messages)
        self._messages = []
        self.chat.focus()

    def action_close(self) -> None:
        self.dismiss(None)
