"""A prompt the user sent, shown as typed (no markup is interpreted). A long paste shows
collapsed, as it read in the prompt ("[pasted 10,000 characters]"); enter (when focused)
or a click shows the prompt whole, and again collapses it."""

from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from app.tui import css_beside, pasted


class UserMessage(Static):
    DEFAULT_CSS = css_beside(__file__)
    BINDINGS = [Binding("enter", "toggle", "Show the whole prompt", id="chat.toggle_prompt")]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, text: str, *, message_id: str | None = None, shown: str | None = None) -> None:
        """``shown``: the prompt as it read with its pastes collapsed; without it a long
        prompt (a stored one) collapses to its first line."""
        if shown is None and pasted.is_long(text):
            shown = pasted.collapsed(text)
        super().__init__(_content(text, shown, expanded=False))
        self.message_id = message_id
        self.text = text
        self.shown = shown
        self.can_focus = shown is not None and shown != text

    def action_toggle(self) -> None:
        if self.can_focus:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle()

    def watch_expanded(self, expanded: bool) -> None:
        self.update(_content(self.text, self.shown, expanded=expanded))


def _content(text: str, shown: str | None, *, expanded: bool) -> Content:
    if shown is None or shown == text:
        return Content(text)
    if expanded:
        return Content.assemble(text, ("\n(enter or click to collapse)", "italic $text-muted"))
    return Content.assemble(shown, ("  (enter or click to expand)", "italic $text-muted"))
