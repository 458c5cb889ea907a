"""The help screen: every key binding of the app, grouped by where it works, with the
binding id that ``tui.keybindings`` in .opencode.json uses to remap it. Keys and ids are
never cut (they are what the user types); the action wraps to the width left, so the
table reads whole at 80 columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


@dataclass(frozen=True)
class HelpRow:
    keys: str
    description: str
    binding_id: str


def help_rows(bindings: Iterable[BindingType], keymap: Mapping[str, str]) -> list[HelpRow]:
    """The bindings as shown to the user: one row per binding id, all its keys, with the
    config's remaps applied."""
    keys: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for binding in Binding.make_bindings(bindings):
        if binding.id and binding.description:
            keys.setdefault(binding.id, []).append(binding.key)
            descriptions.setdefault(binding.id, binding.description)
    return [
        HelpRow(" / ".join(keymap[binding_id].split(",")) if binding_id in keymap else " / ".join(shown),
                descriptions[binding_id], binding_id)
        for binding_id, shown in keys.items()
    ]


def help_table(rows: list[HelpRow]) -> Table:
    """One section's rows: key and id whole, the action wrapping between them."""
    table = Table(box=None, expand=True, pad_edge=False, header_style="bold")
    table.add_column("key", no_wrap=True, style="bold")
    table.add_column("action", ratio=1, overflow="fold")
    table.add_column("id", no_wrap=True, style="italic")
    for row in rows:
        table.add_row(row.keys, row.description, row.binding_id)
    return table


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,q,f1", "dismiss(None)", "Close", id="help.close")]

    def __init__(self, sections: list[tuple[str, list[HelpRow]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static("Keys  (remap with tui.keybindings: {id: key} in .opencode.json)", id="help-title")
            for title, rows in self.sections:
                yield Static(title, classes="help-section")
                yield Static(help_table(rows), classes="help-table")
