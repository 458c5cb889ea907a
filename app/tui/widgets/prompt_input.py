"""The multi-line prompt: enter sends, shift+enter or ctrl+j adds a line, and up/down on
the first/last row recall earlier prompts (like a shell), so editing a long prompt
with the arrows still works (rows as drawn: a long line wraps over several)."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from app.tui import css_beside


class PromptInput(TextArea):
    """Posts ``PromptInput.Submitted`` with the text; the app decides what sending means."""

    DEFAULT_CSS = css_beside(__file__)

    # Not priority bindings: those run as soon as the key arrives, ahead of the letters
    # typed just before it (a fast paste or tmux send-keys would send half a prompt).
    BINDINGS = [
        Binding("enter", "submit", "Send", id="prompt.send"),
        Binding("shift+enter,ctrl+j", "newline", "New line", id="prompt.newline"),
        Binding("up", "recall_previous", "Earlier prompt", id="prompt.history_previous", show=False),
        Binding("down", "recall_next", "Later prompt", id="prompt.history_next", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=placeholder,
        )
        self.earlier_prompts: list[str] = []
        """Earlier prompts, oldest first; the app fills it (attributes down)."""
        self._recall_index: int | None = None
        self._draft = ""

    async def _on_key(self, event: events.Key) -> None:
        """A key bound here (enter, after any remap) goes to its binding, in order with
        the typing before it, instead of being inserted by the TextArea. (Textual calls
        every class's ``_on_key`` in turn, so there is no super() call to make.)"""
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.node is self:
            event.prevent_default()  # skips TextArea's own key handler; the event still bubbles

    def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.post_message(self.Submitted(text))
        if not self.earlier_prompts or self.earlier_prompts[-1] != text:
            self.earlier_prompts.append(text)
        self._recall_index = None
        self.clear()

    def action_newline(self) -> None:
        self.insert("\n")

    def action_recall_previous(self) -> None:
        if not self.navigator.is_first_wrapped_line(self.cursor_location) or not self.earlier_prompts:
            self.action_cursor_up()
            return
        if self._recall_index is None:
            self._draft = self.text
            self._recall_index = len(self.earlier_prompts)
        if self._recall_index > 0:
            self._recall_index -= 1
            self._show(self.earlier_prompts[self._recall_index])

    def action_recall_next(self) -> None:
        if not self.navigator.is_last_wrapped_line(self.cursor_location) or self._recall_index is None:
            self.action_cursor_down()
            return
        self._recall_index += 1
        if self._recall_index >= len(self.earlier_prompts):
            self._recall_index = None
            self._show(self._draft)
        else:
            self._show(self.earlier_prompts[self._recall_index])

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
