"""A prompt the user sent, shown as typed (no markup is interpreted). A long paste shows
collapsed, as it read in the prompt ("[pasted 10,000 characters]"); enter (when focused)
or a click shows the prompt whole, and again collapses it. A file or folder the prompt
attached (``@src/app.py``) shows as a chip where it was written, not as its text."""

from __future__ import annotations

from collections.abc import Collection

from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from app.tui import css_beside, pasted

CHIP_STYLE = "bold $text-accent on $accent-muted"


class UserMessage(Static):
    DEFAULT_CSS = css_beside(__file__)
    BINDINGS = [Binding("enter", "toggle_expanded", "Show the whole prompt", id="chat.toggle_prompt")]

    expanded: reactive[bool] = reactive(False)

    def __init__(
        self,
        text: str,
        *,
        message_id: str | None = None,
        shown: str | None = None,
        attached: Collection[str] = (),
    ) -> None:
        """``shown``: the prompt as it read with its pastes collapsed; without it a long
        prompt (a stored one) collapses to its first line. ``attached``: the paths its
        mentions attached, drawn as chips."""
        if shown is None and pasted.is_long(text):
            shown = pasted.collapsed(text)
        self.attached = frozenset(attached)
        super().__init__(_content(text, shown, expanded=False, attached=self.attached))
        self.message_id = message_id
        self.text = text
        self.shown = shown
        self.can_focus = shown is not None and shown != text

    def action_toggle_expanded(self) -> None:
        if self.can_focus:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_expanded()

    def watch_expanded(self, expanded: bool) -> None:
        self.update(_content(self.text, self.shown, expanded=expanded, attached=self.attached))


def _content(text: str, shown: str | None, *, expanded: bool, attached: frozenset[str]) -> Content:
    if shown is None or shown == text:
        return _with_chips(text, attached)
    if expanded:
        return Content.assemble(_with_chips(text, attached), ("\n(enter or click to collapse)", "italic $text-muted"))
    return Content.assemble(_with_chips(shown, attached), ("  (enter or click to expand)", "italic $text-muted"))


def _with_chips(text: str, attached: frozenset[str]) -> Content:
    """``text`` with each ``@path`` that attached something styled as a chip (a folder's
    written with or without its closing "/")."""
    spans: list[tuple[int, int]] = []
    for path in attached:
        for written in (f"@{path}/", f"@{path}"):
            start = text.find(written)
            while start != -1:
                if start == 0 or text[start - 1].isspace():
                    spans.append((start, start + len(written)))
                start = text.find(written, start + 1)
    content = Content(text)
    taken: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if all(end <= other_start or start >= other_end for other_start, other_end in taken):
            taken.append((start, end))
            content = content.stylize(CHIP_STYLE, start, end)
    return content
