"""The models screen (ctrl+o): for each provider with a key (or custom or local), the
models it offers with their context window and prices, and the offline demo, filtered
fuzzily as you type (app.llm.catalog.fuzzy_filter: typos and other separators forgiven,
best match first). Enter picks the highlighted model; a typed id that matches
nothing (``provider/model``) is taken as is, for models the list does not know, once
litellm's data files say it can serve the name (else the screen stays, saying why)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from app.llm.catalog import fuzzy_filter
from app.llm.model_names import model_index, model_name_problem

if TYPE_CHECKING:
    from app.llm.catalog import CatalogEntry


def model_line(choice: CatalogEntry, current: str) -> Content:
    mark = "● " if choice.model == current else "  "
    facts = choice.facts()
    return Content.assemble(
        (mark, "$accent"),
        (choice.label, "$text"),
        "  ",
        (choice.provider, "$text-muted"),
        *(("  ", (facts, "$text-muted")) if facts else ()),
    )


class ModelsScreen(ModalScreen[str | None]):
    CSS_PATH = "models.tcss"
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close", id="models.close"),
        Binding("down", "move(1)", "Next", id="models.next", show=False),
        Binding("up", "move(-1)", "Previous", id="models.previous", show=False),
    ]

    def __init__(self, choices: list[CatalogEntry], current: str, providers: Collection[str] = ()) -> None:
        """``providers``: the providers the config names, whose models are taken on trust."""
        super().__init__()
        self.choices = choices
        self.current = current
        self.providers = providers
        self._shown: list[CatalogEntry] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="models-box"):
            yield Static("Models", id="models-title")
            yield Input(placeholder="Filter, or type provider/model and press enter", id="models-filter")
            yield OptionList(id="models-list")
            yield Static("enter choose · ↑↓ move · esc close", id="models-help")

    def on_mount(self) -> None:
        self._show("")
        self.query_one("#models-filter", Input).focus()
        self.run_worker(model_index, thread=True)  # read now, so checking a typed name is instant

    @on(Input.Changed, "#models-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, text: str) -> None:
        self._shown = fuzzy_filter(self.choices, text)
        listing = self.query_one("#models-list", OptionList)
        listing.clear_options()
        listing.add_options(Option(model_line(c, self.current), id=c.model) for c in self._shown)
        current = next((i for i, c in enumerate(self._shown) if c.model == self.current), 0)
        listing.highlighted = current if self._shown else None

    def action_move(self, step: int) -> None:
        listing = self.query_one("#models-list", OptionList)
        if self._shown:
            listing.highlighted = ((listing.highlighted or 0) + step) % len(self._shown)

    @on(Input.Submitted, "#models-filter")
    def _choose_typed(self, event: Input.Submitted) -> None:
        """Enter: the highlighted model; but a typed id (``provider/model``) that is no part
        of it (only a fuzzy match: a typo, or a model the list lacks) is taken as typed."""
        typed = event.value.strip()
        highlighted = self.query_one("#models-list", OptionList).highlighted
        choice = self._shown[highlighted] if self._shown and highlighted is not None else None
        if choice is not None and ("/" not in typed or typed.lower() in choice.model.lower()):
            self.dismiss(choice.model)
        elif "/" in typed:
            problem = model_name_problem(typed, self.providers)
            if problem is None:
                self.dismiss(typed)
            else:
                self.notify(problem, severity="error")
        else:
            self.notify("Type a model id as provider/model, e.g. openai/gpt-5", severity="warning")

    @on(OptionList.OptionSelected, "#models-list")
    def _choose(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
