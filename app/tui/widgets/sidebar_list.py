"""The sidebar's file list: one line per file, ``src/ app.py  +12 -3`` (a deleted file:
``old.py  deleted -40``, a new one: ``new.py  new +9``; a long path cut in the middle,
keeping its file name), drawn with the line API so only the visible lines are rendered:
a refresh after 1,000 changed files costs one screenful, not 1,000 layouts.

Up/down/home/end/page keys move the highlight; enter opens the file's diff and r asks to
revert it (both posted as messages: the sidebar acts on them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from app.tui import css_beside
from app.tui.short_path import shorten_path

if TYPE_CHECKING:
    from app.store.models import FileChange


class ModifiedFileList(ScrollView, can_focus=True):
    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES = {
        "file-list--folder",
        "file-list--name",
        "file-list--deleted-name",
        "file-list--deleted",
        "file-list--added",
        "file-list--removed",
        "file-list--cursor",
        "file-list--cursor-focused",
    }
    BINDINGS = [
        Binding("enter", "open", "View diff", id="sidebar.open_diff"),
        Binding("r", "revert", "Revert file", id="sidebar.revert"),
        Binding("up", "move(-1)", "Previous file", show=False, id="sidebar.up"),
        Binding("down", "move(1)", "Next file", show=False, id="sidebar.down"),
        Binding("pageup", "move(-10)", "Page up", show=False, id="sidebar.page_up"),
        Binding("pagedown", "move(10)", "Page down", show=False, id="sidebar.page_down"),
        Binding("home", "first", "First file", show=False, id="sidebar.first"),
        Binding("end", "last", "Last file", show=False, id="sidebar.last"),
    ]

    highlighted: reactive[int] = reactive(0)

    class OpenRequested(Message):
        def __init__(self, change: FileChange) -> None:
            super().__init__()
            self.change = change

    class RevertRequested(Message):
        def __init__(self, change: FileChange) -> None:
            super().__init__()
            self.change = change

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._changes: list[FileChange] = []
        self._strips: dict[tuple[int, int, str], Strip] = {}

    @property
    def changes(self) -> list[FileChange]:
        return self._changes

    @property
    def highlighted_change(self) -> FileChange | None:
        return self._changes[self.highlighted] if self._changes else None

    def set_changes(self, changes: list[FileChange]) -> None:
        """Show these files, keeping the highlight on the same path when it is still listed."""
        current = self.highlighted_change
        self._changes = changes
        self._strips.clear()
        paths = [change.path for change in changes]
        self.set_reactive(
            ModifiedFileList.highlighted, paths.index(current.path) if current and current.path in paths else 0
        )
        self.virtual_size = Size(self.scrollable_content_region.width, len(changes))
        self.refresh()

    def select_path(self, path: str) -> None:
        self.highlighted = [change.path for change in self._changes].index(path)

    def validate_highlighted(self, index: int) -> int:
        return max(0, min(index, len(self._changes) - 1))

    def watch_highlighted(self) -> None:
        self.scroll_to_region(self._row_region(self.highlighted), animate=False, immediate=True)
        self.refresh()

    def _row_region(self, index: int) -> Region:
        return Region(0, index, self.scrollable_content_region.width, 1)

    def on_resize(self) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._changes))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def action_move(self, step: int) -> None:
        self.highlighted += step

    def action_first(self) -> None:
        self.highlighted = 0

    def action_last(self) -> None:
        self.highlighted = len(self._changes) - 1

    def action_open(self) -> None:
        if (change := self.highlighted_change) is not None:
            self.post_message(self.OpenRequested(change))

    def action_revert(self) -> None:
        if (change := self.highlighted_change) is not None:
            self.post_message(self.RevertRequested(change))

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < len(self._changes):
            self.highlighted = index
            self.action_open()

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width
        if index >= len(self._changes):
            return Strip.blank(width, self.rich_style)
        cursor = "" if index != self.highlighted else "cursor-focused" if self.has_focus else "cursor"
        key = (index, width, cursor)
        if key not in self._strips:
            self._strips[key] = self._render_file(self._changes[index], width, cursor)
        return self._strips[key]

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"file-list--{name}", partial=True)

    def _render_file(self, change: FileChange, width: int, cursor: str) -> Strip:
        """One file's line; ``cursor`` names the highlight style, "" for none."""
        stats = self._stats(change)
        line = self._path_text(change, max(1, width - stats.cell_len - 1))
        line.append(" ")
        line.append_text(stats)
        line.truncate(width, pad=True)
        line.stylize_before(self._style(cursor) if cursor else self.rich_style)
        return Strip(line.render(self.app.console), width).simplify()

    def _stats(self, change: FileChange) -> Text:
        text = Text()
        if change.deleted:
            text.append("deleted ", self._style("deleted"))
        elif change.created:
            text.append(f"new +{change.additions} ", self._style("added"))
        elif change.additions or not change.deletions:
            text.append(f"+{change.additions} ", self._style("added"))
        if change.deletions or change.deleted:
            text.append(f"-{change.deletions}", self._style("removed"))
        text.rstrip()
        return text

    def _path_text(self, change: FileChange, room: int) -> Text:
        """``folder/ name``, cut in the middle ("src/…/name.py") when there is no room."""
        folder, slash, name = shorten_path(change.path, room).rpartition("/")
        folder += slash
        name_style = self._style("deleted-name" if change.deleted else "name")
        return Text.assemble((folder, self._style("folder")), (name, name_style))
