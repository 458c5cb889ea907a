"""One text part of a reply: a Markdown widget, written through Textual's own streaming
API (``Markdown.get_stream``), which merges the fragments that arrive while the last
write is still being drawn, so a fast reply never queues more writes than frames."""

from __future__ import annotations

from contextlib import suppress

from textual.widget import MountError
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from app.tui import css_beside


class StreamedText(Markdown):
    """``StreamedText(text)`` draws a stored part at once; ``write`` streams one, and
    ``finish`` says no more text will come."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str = "") -> None:
        super().__init__(text or None)
        self.text = text
        self._stream: MarkdownStream | None = None

    @property
    def drawn(self) -> bool:
        """Everything written so far is in the document."""
        return self.source == self.text

    @property
    def streaming(self) -> bool:
        """More text may come."""
        return self._stream is not None

    async def write(self, text: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self.text += text
        await self._stream.write(text)

    def finish(self) -> None:
        """No more text will come; what is queued is still drawn."""
        if self._stream is not None:
            self.call_later(self._end_stream)

    async def replace(self, text: str) -> None:
        """Show ``text`` instead (the stored part, when deltas were lost on the way)."""
        await self._end_stream()
        self.text = text
        await self.update(text)

    async def _end_stream(self) -> None:
        """Stop the stream once it has written what it holds. A part removed meanwhile (a
        session switch, quitting) has nowhere to write it: that is no error."""
        stream, self._stream = self._stream, None
        if stream is not None:
            with suppress(MountError):
                await stream.stop()

    async def on_unmount(self) -> None:
        await self._end_stream()
