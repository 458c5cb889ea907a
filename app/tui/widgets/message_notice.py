"""A line from the app itself in the chat: the onboarding note, a failed turn, a
cancelled one. Errors read calmly: a coloured edge and the one-line reason."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

from app.tui import css_beside

NoticeKind = Literal["info", "warning", "error"]


class ChatNotice(Static):
    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str, kind: NoticeKind = "info") -> None:
        super().__init__(Content(text), classes=kind)
        self.kind = kind
        self.text = text
        self.after = -1
        """The position of the message it follows in the chat's session (-1: none)."""
