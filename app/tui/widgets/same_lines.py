"""A container that draws one line of its own background and repeats it.

Textual redraws every visible line of a container whose size changed, and while a reply
streams, the chat log, the message and its text grow on every write: that was three of
every four lines drawn per frame, for backgrounds whose lines are all alike. With no
border, outline, keyline or vertical padding, a container's lines are all the same, so one is
drawn (the usual way) and reused for the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region
from textual.strip import Strip

if TYPE_CHECKING:
    from textual.widget import Widget as _Widget
else:
    _Widget = object


class SameLines(_Widget):
    """Mix in before a container class: ``class ChatLog(SameLines, VerticalScroll)``.
    A Widget only to type checkers: Textual takes a widget's CSS from its first Widget
    base alone, which must stay the container class."""

    def render_lines(self, crop: Region) -> list[Strip]:
        styles = self.styles
        plain = (
            self.is_container
            and styles.keyline[0] == "none"
            and not any(edge for edge, _ in styles.border)
            and not any(edge for edge, _ in styles.outline)
            and not styles.padding.top
            and not styles.padding.bottom
            and self.border_title is None
            and self.border_subtitle is None
        )
        if not plain or crop.height <= 1:
            return super().render_lines(crop)
        return super().render_lines(Region(crop.x, crop.y, crop.width, 1)) * crop.height
