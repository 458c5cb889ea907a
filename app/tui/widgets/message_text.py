"""One text part of a reply, streamed through Textual's Markdown stream.

Three things keep a fast, long reply from making the app sluggish:
- deltas are queued and written together at most FLUSH_INTERVAL apart (the stream alone
  appends each tiny delta on its own whenever the loop is idle, re-parsing each time);
- the interval stretches with what drawing the last write cost (its layout grows with
  the reply), so drawing never takes more than about half the time and keys typed
  meanwhile are handled between two writes;
- the text is spread over Markdown *segments* of about SEGMENT_BLOCKS blocks: once the
  live segment is that big, the next block starts a new segment. A finished segment
  never changes, so Textual keeps its layout cached and each frame lays out only the
  live one, instead of every block of the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import MountError
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from app.tui import css_beside

FLUSH_INTERVAL = 1 / 20
SLOWEST_FLUSH_INTERVAL = 1.0
SEGMENT_BLOCKS = 8
FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)


def segment_break(written: str, pending: str) -> int | None:
    """Where in ``pending`` a new segment may begin: just after the last blank line that
    is outside a code fence and not followed by an indented (continued) line, with text
    after it. None when there is no such place."""
    position = pending.rfind("\n\n")
    while position != -1:
        after = pending[position + 2 :]
        balanced = len(FENCE.findall(written + pending[:position])) % 2 == 0
        if balanced and after and after[0] not in " \t\n":
            return position + 2
        position = pending.rfind("\n\n", 0, position)
    return None


class StreamedText(Vertical):
    """``StreamedText(text)`` draws a stored part at once; ``append`` streams one."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        self._stored = text
        self._unwritten: list[str] = []
        self._timer: Timer | None = None
        self._interval = FLUSH_INTERVAL
        self._lock = asyncio.Lock()
        self._segment: Markdown | None = None
        self._segment_text = ""
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        if self._stored:
            yield Markdown(self._stored)

    def append(self, text: str) -> None:
        self.text += text
        self._unwritten.append(text)
        if self._timer is None:
            self._timer = self.set_timer(self._interval, self._flush)

    async def _flush(self) -> None:
        self._timer = None
        async with self._lock:
            pending, self._unwritten = "".join(self._unwritten), []
            if self._segment is not None and len(self._segment.children) >= SEGMENT_BLOCKS:
                cut = segment_break(self._segment_text, pending)
                if cut is not None:
                    await self._write(pending[:cut])
                    await self._end_segment()
                    pending = pending[cut:]
            await self._write(pending)
        self.call_after_refresh(self._drawn, time.monotonic())

    def _drawn(self, written_at: float) -> None:
        """The write is on screen: next time wait twice what it cost."""
        cost = time.monotonic() - written_at
        self._interval = min(max(2 * cost, FLUSH_INTERVAL), SLOWEST_FLUSH_INTERVAL)

    async def _write(self, text: str) -> None:
        if not text:
            return
        if self._stream is None:
            self._segment, self._segment_text = Markdown(), ""
            await self.mount(self._segment)
            self._stream = Markdown.get_stream(self._segment)
        self._segment_text += text
        await self._stream.write(text)

    async def _end_segment(self) -> None:
        if self._stream is not None:
            stream, self._stream, self._segment = self._stream, None, None
            await stream.stop()

    async def finish(self) -> None:
        """Write what is queued and close the stream: the part is complete."""
        if self._timer is not None:
            self._timer.stop()
        await self._flush()
        async with self._lock:
            await self._end_segment()

    async def replace(self, text: str) -> None:
        """Show ``text`` instead (the stored part, when deltas were lost on the way)."""
        await self.finish()
        self.text = text
        await self.remove_children()
        await self.mount(Markdown(text))

    async def _on_unmount(self) -> None:
        """Leaving mid-stream (a session switch, quitting): end the stream's task here, or
        it would report its last append to a removed widget after the app is gone."""
        with contextlib.suppress(MountError):
            await self.finish()
