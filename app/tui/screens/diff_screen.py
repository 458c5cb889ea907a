"""One file's changes in this session, full screen: initial content to latest, unified or
side by side (t toggles), scrollable with the usual keys. Read-only: it only shows.

Its last line names its own keys only (as remapped by ``tui.keybindings``): a footer of
every active binding would repeat the app's keys, which do nothing useful here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from app.store.models import FileChange
from app.tui.short_path import shorten_path
from app.tui.widgets.diff_view import DiffView


class DiffScreen(Screen[None]):
    CSS_PATH = "diff_screen.tcss"
    BINDINGS = [
        Binding("t", "toggle_layout", "Unified / split", id="diff.toggle_layout"),
        Binding("escape,q", "close", "Close", id="diff.close"),
    ]

    def __init__(
        self, path: str, old: str, new: str, *, deleted: bool = False, created: bool = False, split: bool = False
    ) -> None:
        super().__init__()
        self.path = path
        self.deleted = deleted
        self.created = created
        self._view = DiffView.from_texts(old, new, path, split=split, focusable=True, id="diff-screen-view")

    @classmethod
    def for_change(cls, change: FileChange, *, split: bool = False) -> DiffScreen:
        """The session's change to one file, as the sidebar lists it."""
        return cls(
            change.path, change.initial_content, change.latest_content,
            deleted=change.deleted, created=change.created, split=split,
        )  # fmt: skip

    def compose(self) -> ComposeResult:
        yield Static(id="diff-screen-title")
        yield self._view
        yield Static(id="diff-screen-keys")

    def on_mount(self) -> None:
        self._show_title()
        self._show_keys()
        self._view.focus()

    def on_resize(self) -> None:
        self._show_title()

    def _show_keys(self) -> None:
        """"t unified / split · esc/q close": this screen's shown bindings, with their keys."""
        keys: dict[str, list[str]] = {}
        for active in self.active_bindings.values():
            binding = active.binding
            if active.node is self and binding.show:
                keys.setdefault(binding.description, []).append(self.app.get_key_display(binding))
        line = Content(" · ").join(
            Content.assemble(("/".join(shown), "bold"), " ", description.lower())
            for description, shown in keys.items()
        )
        self.query_one("#diff-screen-keys", Static).update(line)

    def action_toggle_layout(self) -> None:
        self._view.split = not self._view.split
        self._show_title()

    def action_close(self) -> None:
        self.dismiss(None)

    def _show_title(self) -> None:
        """``path  +A -D  [new|deleted]  unified|split``, the path cut in the middle to fit."""
        additions = sum(diff.additions for diff in self._view.files)
        deletions = sum(diff.deletions for diff in self._view.files)
        marks = Content.assemble(
            "  ",
            (f"+{additions}", "$diff-added"),
            " ",
            (f"-{deletions}", "$diff-removed"),
            ("  deleted" if self.deleted else "  new" if self.created else "", "$error" if self.deleted else "$success"),
            ("  split" if self._view.split else "  unified", "$text-muted"),
        )
        title = self.query_one("#diff-screen-title", Static)
        room = title.content_region.width - marks.cell_length
        path = shorten_path(self.path, room) if room > 0 else self.path
        title.update(Content.assemble((path, "bold"), marks))
