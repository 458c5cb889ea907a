"""The rewind screen (/rewind): the session's turns, newest first; enter on one offers
what to take back from it on: the files and the conversation, the files only, or the
conversation only (app/prompt/turn_undo.py does it, all or nothing)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.prompt.turn_undo import TurnEntry, first_line
from app.store.turns import UndoScope

SCOPE_CHOICES: tuple[tuple[UndoScope, str, str], ...] = (
    ("both", "Files and conversation", "the files go back to before the turn, and the turn leaves the conversation"),
    ("files", "Files only", "the files go back; the conversation keeps every turn"),
    ("conversation", "Conversation only", "the turns leave the conversation; the files stay as they are"),
)


@dataclass(frozen=True)
class RewindPick:
    """Turn ``number`` and every later one, taking back ``scope`` of them."""

    number: int
    scope: UndoScope


class RewindScreen(ModalScreen[RewindPick | None]):
    CSS_PATH = "rewind.tcss"
    BINDINGS = [Binding("escape", "back", "Back, or close", id="rewind.close")]

    def __init__(self, entries: list[TurnEntry]) -> None:
        super().__init__()
        self.entries = entries
        self.chosen: TurnEntry | None = None
        """The turn picked, while the scope is asked."""

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-box"):
            yield Static("Rewind to before a turn", id="rewind-title")
            yield OptionList(id="rewind-list")
            yield Static("", id="rewind-help")

    def on_mount(self) -> None:
        self._show_turns()

    def _show_turns(self) -> None:
        self.chosen = None
        listing = self.query_one("#rewind-list", OptionList)
        listing.clear_options()
        listing.add_options(
            Option(Content.assemble((f"{entry.number:>4}. ", "$text-muted"), first_line(entry.prompt)), id=str(entry.number))
            for entry in reversed(self.entries)
        )
        listing.highlighted = 0
        self.query_one("#rewind-help", Static).update("enter choose · esc close · the turn chosen and every later one go")
        listing.focus()

    def _show_scopes(self, entry: TurnEntry) -> None:
        self.chosen = entry
        later = len(self.entries) - entry.number
        self.query_one("#rewind-title", Static).update(
            f"Rewind to before turn {entry.number}" + (f" (and the {later} after it)" if later else "")
        )
        listing = self.query_one("#rewind-list", OptionList)
        listing.clear_options()
        listing.add_options(
            Option(Content.assemble((label, "$text"), "\n", (why, "$text-muted")), id=scope)
            for scope, label, why in SCOPE_CHOICES
        )
        listing.highlighted = 0
        self.query_one("#rewind-help", Static).update("enter rewind · esc back to the turns")

    @on(OptionList.OptionSelected, "#rewind-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        chosen_id = event.option.id or ""
        if self.chosen is None:
            self._show_scopes(next(entry for entry in self.entries if str(entry.number) == chosen_id))
            return
        scope = next(scope for scope, _, _ in SCOPE_CHOICES if scope == chosen_id)
        self.dismiss(RewindPick(self.chosen.number, scope))

    def action_back(self) -> None:
        if self.chosen is None:
            self.dismiss(None)
        else:
            self.query_one("#rewind-title", Static).update("Rewind to before a turn")
            self._show_turns()
