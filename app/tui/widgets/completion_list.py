"""The list above the prompt that completes a ``/command`` or an ``@path``. The keyboard
stays in the prompt, which moves the highlight and takes the choice (see PromptInput):
the list itself never takes focus."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from app.tui import css_beside
from app.tui.completion import Choice


class CompletionList(OptionList):
    DEFAULT_CSS = css_beside(__file__)
    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.choices: list[Choice] = []
        self.display = False

    @property
    def is_open(self) -> bool:
        return bool(self.display and self.choices)

    def offer(self, choices: list[Choice]) -> None:
        """Show ``choices`` (the first highlighted); none closes the list."""
        if choices == self.choices and self.display:
            return
        self.choices = list(choices)
        self.clear_options()
        width = max((len(choice.label) for choice in self.choices), default=0)
        self.add_options(Option(_line(choice, width)) for choice in self.choices)
        self.highlighted = 0 if self.choices else None
        self.display = bool(self.choices)

    def close(self) -> None:
        if self.display:
            self.display = False
        self.choices = []

    def move(self, step: int) -> None:
        """Move the highlight ``step`` entries (around the ends)."""
        if self.choices:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.choices)

    @property
    def chosen(self) -> Choice | None:
        index = self.highlighted
        return self.choices[index] if self.is_open and index is not None else None


def _line(choice: Choice, width: int) -> Content:
    """The label, then the description in a column of its own (cut at the list's edge)."""
    if not choice.description:
        return Content(choice.label)
    return Content.assemble((choice.label.ljust(width), "bold"), "  ", (choice.description, "$text-muted"))
