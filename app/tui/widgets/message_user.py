"""A prompt the user sent, shown as typed (no markup is interpreted)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from app.tui import css_beside


class UserMessage(Static):
    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str, *, message_id: str | None = None) -> None:
        super().__init__(Content(text))
        self.message_id = message_id
        self.text = text
