"""Finished Markdown blocks drawn from a picture of their lines.

Textual lays out every displayed widget on every layout pass, and a long reply is
hundreds of block widgets (a list item alone is four). Blocks above the one being
streamed never change again, so message_text.StreamedText hides them and shows one
FrozenBlocks in their place, which repeats the exact lines they drew: a layout then
costs one widget per run of blocks.

The hidden blocks stay mounted, and come back ("thaw") when the picture would be wrong
(another width, theme or colours) or when the pointer moves over it: links, text
selection and sideways scrolling of wide code need the real widgets.

The picture is made by Textual's own compositor (a private class; Textual is pinned to
an exact version), over the layout the screen already computed, so it is what the
screen would draw.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from textual import events
from textual._compositor import Compositor
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from app.tui import css_beside


def look(widget: Widget) -> Hashable:
    """What, besides the width, a picture of ``widget``'s lines depends on."""
    return widget.app.theme, widget.app.native_ansi_color, widget.colors


def pictures(document: Widget, runs: Sequence[Sequence[Widget]]) -> list[list[Strip]] | None:
    """For each run of consecutive children of ``document`` (blocks, or a FrozenBlocks
    that the run extends), the lines the screen shows from the top of its first child to
    the bottom of its last: the document's own lines with each child's drawn over them,
    in the screen's layout. Only the runs' rows are drawn, so a run costs its own lines,
    whatever lies above it. None until the screen has laid the document out as it is now."""
    gutter = document.styles.gutter
    size = document.outer_size
    content = Size(size.width - gutter.width, size.height - gutter.height)
    if not content:
        return None
    placed = {placement.widget: placement.region for placement in document.arrange(content).placements}
    children = [child for run in runs for child in run]
    if any(child not in placed or placed[child].size != child.region.size for child in children):
        return None
    drawn: list[list[Strip]] = []
    for run in runs:
        top, bottom = placed[run[0]].y, placed[run[-1]].bottom
        lines = document.render_lines(Region(gutter.left, gutter.top + top, content.width, bottom - top))
        for child in run:
            x, y, width, height = placed[child]
            child_lines = child.lines if isinstance(child, FrozenBlocks) else _draw(child, Size(width, height))
            if child_lines is None:
                return None
            for row, line in enumerate(child_lines, y - top):
                lines[row] = Strip.join([lines[row].crop(0, x), line, lines[row].crop(x + width)])
        drawn.append(lines)
    return drawn


def _draw(widget: Widget, size: Size) -> list[Strip] | None:
    """The lines of ``widget`` and everything in it at ``size``, as the screen draws them;
    None if the screen's layout does not hold them at those sizes yet (each widget draws
    itself at the size the screen gave it)."""
    compositor = Compositor()
    compositor.reflow(widget, size)
    if any(geometry.region.size != inner.region.size for inner, geometry in compositor.layers):
        return None
    return compositor.render_strips()


class FrozenBlocks(Widget):
    """``FrozenBlocks(blocks, lines, look)``: stands in for ``blocks`` (now hidden),
    showing ``lines``; it takes their outer margins, so spacing is unchanged."""

    DEFAULT_CSS = css_beside(__file__)

    class Thaw(Message):
        """The real blocks are needed again; ``pointed`` when the pointer asks for them."""

        def __init__(self, frozen: FrozenBlocks, *, pointed: bool) -> None:
            super().__init__()
            self.frozen = frozen
            self.pointed = pointed

    def __init__(self, blocks: Sequence[Widget], lines: list[Strip], look: Hashable) -> None:
        super().__init__()
        self.blocks = list(blocks)
        self.lines = lines
        self.thawing = False
        """Its picture is out of date, or the pointer wants the real blocks: a Thaw is on its way."""
        self._width = lines[0].cell_length if lines else 0
        self._look = look
        self.styles.margin = Spacing(blocks[0].styles.margin.top, 0, blocks[-1].styles.margin.bottom, 0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = self.lines[crop.y : crop.bottom]
        lines += [Strip.blank(self._width)] * (crop.height - len(lines))
        if (crop.x, crop.right) == (0, self._width):
            return lines
        return [line.crop_extend(crop.x, crop.right, None) for line in lines]

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """A selection running across a frozen run copies its text as shown."""
        text = "\n".join(line.text.rstrip() for line in self.lines)
        return selection.extract(text), "\n"

    def _thaw(self, *, pointed: bool) -> None:
        if not self.thawing:
            self.thawing = True
            self.post_message(self.Thaw(self, pointed=pointed))

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._thaw(pointed=False)

    def on_mouse_move(self) -> None:
        """Only a moving pointer thaws: text scrolling under a resting one does not."""
        self._thaw(pointed=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.parent is not None and look(self.parent) != self._look:
            self._thaw(pointed=False)
