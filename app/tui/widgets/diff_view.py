"""A diff drawn unified or side by side, with syntax colours and +/- backgrounds from the
theme. One widget for the diff screen and for the chat's tool results.

It draws with Textual's line API (ScrollView): only the visible rows are rendered, so a
diff of thousands of lines scrolls smoothly, and its height is the number of rows, so
``height: auto`` fits it into the chat.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from app.core.diff import unified_diff
from app.tui import css_beside
from app.tui.short_path import shorten_path
from app.tui.widgets.diff_view_highlight import SYNTAX_ROLES, highlight_diff
from app.tui.widgets.diff_view_model import (
    DiffLine,
    FileDiff,
    SplitRow,
    code_blocks,
    parse_unified_diff,
    split_rows,
    unified_rows,
)

_SIGNS = {"added": "+", "removed": "-", "context": " "}
_SEPARATOR = "│"


class DiffView(ScrollView, can_focus=False):
    """``DiffView(diff_text, path=...)`` or ``DiffView.from_texts(old, new, path)``; set
    ``split`` to switch between unified and side-by-side. Not focusable unless asked
    (``focusable=True``, the diff screen): in the chat, tab must not stop at every diff."""

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES = {
        "diff-view--file",
        "diff-view--hunk",
        "diff-view--context-line",
        "diff-view--added-line",
        "diff-view--removed-line",
        "diff-view--added-sign",
        "diff-view--removed-sign",
        "diff-view--line-number",
        "diff-view--added-line-number",
        "diff-view--removed-line-number",
        "diff-view--filler",
        "diff-view--empty",
        *(f"diff-view--syntax-{role}" for role in SYNTAX_ROLES),
    }

    split: reactive[bool] = reactive(False)
    """Side by side (old left, new right) instead of unified."""

    def __init__(
        self,
        diff: str = "",
        *,
        path: str = "",
        split: bool = False,
        focusable: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.can_focus = focusable
        self.set_reactive(DiffView.split, split)
        self._load(diff, path)
        self._update_virtual_size()

    @classmethod
    def from_texts(
        cls,
        old: str,
        new: str,
        path: str,
        *,
        split: bool = False,
        focusable: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> DiffView:
        """The diff between two versions of one file."""
        return cls(unified_diff(old, new, path), path=path, split=split, focusable=focusable, id=id, classes=classes)

    @property
    def files(self) -> list[FileDiff]:
        return self._files

    def set_diff(self, diff: str, path: str = "") -> None:
        """Show another diff (a tool result that finished, a file that changed again)."""
        self._load(diff, path)
        self._relayout()

    def _load(self, diff: str, path: str) -> None:
        self._files = parse_unified_diff(diff, path)
        self._unified = unified_rows(self._files)
        self._split = split_rows(self._files)
        self._code: dict[int, Text] = {}
        self._block_of = {
            id(diff.lines[index]): (diff, block)
            for diff in self._files
            for block in code_blocks(diff.lines)
            for index in block
        }
        self._strips: dict[tuple[int, int], Strip] = {}
        numbers = (number for line in self._unified for number in (line.old_no, line.new_no) if number)
        self._gutter = len(str(max(numbers, default=0)))

    @property
    def row_count(self) -> int:
        """Rows drawn (at least one: "no changes")."""
        return max(1, len(self._split if self.split else self._unified))

    def watch_split(self) -> None:
        self._relayout()

    def on_resize(self) -> None:
        self._relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._code.clear()
        self._strips.clear()

    def _relayout(self) -> None:
        self._strips.clear()
        self._update_virtual_size()
        self.refresh(layout=True)

    def _update_virtual_size(self) -> None:
        width = self.scrollable_content_region.width
        if not self.split:
            longest = max((cell_len(line.text.expandtabs(4)) for line in self._unified), default=0)
            width = max(width, self._gutter * 2 + 4 + longest)
        self.virtual_size = Size(width, self.row_count)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        if index >= self.row_count:
            return Strip.blank(width, self.rich_style)
        key = (index, width)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._render_row(index, width)
        if self.split or not self._unified or self._unified[index].kind == "file":  # drawn to the visible width
            return strip
        return strip.crop(scroll_x, scroll_x + width)

    # --- drawing ---------------------------------------------------------------------

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(f"diff-view--{component}", partial=True)

    def _code_text(self, line: DiffLine) -> Text:
        """The line's syntax-coloured text; its block is highlighted the first time one of
        its lines is drawn."""
        if id(line) not in self._code:
            diff, indexes = self._block_of[id(line)]
            block = [diff.lines[index] for index in indexes]
            styled = highlight_diff(block, diff.path, lambda role: self._style(f"syntax-{role}"))
            for index, text in styled.items():
                text.expand_tabs(4)
                self._code[id(block[index])] = text
        return self._code[id(line)]

    def _render_row(self, index: int, width: int) -> Strip:
        if not self._unified:
            return self._strip(Text("No changes"), max(width, 10), self._style("empty"))
        if not self.split:
            line = self._unified[index]
            if line.kind == "file":
                return self._strip(self._file_text(line, width), width, self._line_style(line))
            return self._strip(self._unified_text(line), self.virtual_size.width, self._line_style(line))
        return self._split_strip(self._split[index], width)

    def _file_text(self, line: DiffLine, width: int) -> Text:
        """A file's header, its path cut in the middle so the stats after it still show."""
        path = line.path or ""
        stats = line.text[len(path) :]
        return Text(shorten_path(path, max(1, width - len(stats))) + stats, self._style("file"))

    def _unified_text(self, line: DiffLine) -> Text:
        if line.kind == "hunk":
            return Text(line.text, self._style(line.kind))
        text = self._line_numbers(line, line.old_no, line.new_no)
        text.append_text(self._sign_and_code(line))
        return text

    def _split_strip(self, row: SplitRow, width: int) -> Strip:
        left, right = row
        if left is not None and left.kind == "file":  # a header spans both sides
            return self._strip(self._file_text(left, width), width, self._line_style(left))
        if left is not None and left.kind == "hunk":
            return self._strip(Text(left.text, self._style(left.kind)), width, self._line_style(left))
        left_width = (width - 1) // 2
        separator = self._strip(Text(_SEPARATOR, self._style("line-number")), 1, self._style("filler"))
        return Strip.join(
            [
                self._half(left, left.old_no if left else None, left_width),
                separator,
                self._half(right, right.new_no if right else None, width - left_width - 1),
            ]
        )

    def _half(self, line: DiffLine | None, number: int | None, width: int) -> Strip:
        """One side of a split row: the old side numbers lines as before, the new as after."""
        if line is None:
            return Strip.blank(width, self._style("filler"))
        text = self._line_numbers(line, number)
        text.append_text(self._sign_and_code(line))
        return self._strip(text, width, self._line_style(line))

    def _line_numbers(self, line: DiffLine, *numbers: int | None) -> Text:
        style = self._style(f"{line.kind}-line-number" if line.kind != "context" else "line-number")
        cells = " ".join(f"{number:>{self._gutter}}" if number else " " * self._gutter for number in numbers)
        return Text(f"{cells} ", style)

    def _sign_and_code(self, line: DiffLine) -> Text:
        sign_style = self._style(f"{line.kind}-sign") if line.kind != "context" else ""
        text = Text.assemble((_SIGNS[line.kind], sign_style), " ")
        text.append_text(self._code_text(line))
        return text

    def _line_style(self, line: DiffLine) -> Style:
        return self._style(f"{line.kind}-line" if line.kind in _SIGNS else line.kind)

    def _strip(self, text: Text, width: int, background: Style) -> Strip:
        """One row: the text cut or padded to ``width``, the row's background under it."""
        text.truncate(width, overflow="ellipsis", pad=True)
        text.stylize_before(background)
        return Strip(text.render(self.app.console), width).simplify()
