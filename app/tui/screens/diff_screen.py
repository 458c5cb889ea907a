"""One file's changes in this session, full screen: initial content to latest, unified or
side by side (t toggles), scrollable with the usual keys. Read-only: it only shows."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from app.store.models import FileChange
from app.tui.widgets.diff_view import DiffView


class DiffScreen(Screen[None]):
    CSS_PATH = "diff_screen.tcss"
    BINDINGS = [
        Binding("t", "toggle_layout", "Unified / split", id="diff.toggle_layout"),
        Binding("escape,q", "close", "Close", id="diff.close"),
    ]

    def __init__(self, path: str, old: str, new: str, *, deleted: bool = False, split: bool = False) -> None:
        super().__init__()
        self.path = path
        self.deleted = deleted
        self._view = DiffView.from_texts(old, new, path, split=split, focusable=True, id="diff-screen-view")

    @classmethod
    def for_change(cls, change: FileChange, *, split: bool = False) -> DiffScreen:
        """The session's change to one file, as the sidebar lists it."""
        return cls(change.path, change.initial_content, change.latest_content, deleted=change.deleted, split=split)

    def compose(self) -> ComposeResult:
        yield Static(id="diff-screen-title")
        yield self._view
        yield Footer()

    def on_mount(self) -> None:
        self._show_title()
        self._view.focus()

    def action_toggle_layout(self) -> None:
        self._view.split = not self._view.split
        self._show_title()

    def action_close(self) -> None:
        self.dismiss(None)

    def _show_title(self) -> None:
        additions = sum(diff.additions for diff in self._view.files)
        deletions = sum(diff.deletions for diff in self._view.files)
        self.query_one("#diff-screen-title", Static).update(
            Content.assemble(
                (self.path, "bold"),
                "  ",
                (f"+{additions}", "$diff-added"),
                " ",
                (f"-{deletions}", "$diff-removed"),
                ("  deleted" if self.deleted else "", "$error"),
                ("  split" if self._view.split else "  unified", "$text-muted"),
            )
        )
