"""One text part of a reply, streamed into a Textual Markdown widget with ``append``.

What keeps a long, fast reply from stalling the app:
- deltas are queued and written together, at most FLUSH_LINES lines at a time (each new
  block is a few widgets to mount, synchronously), and the next write waits as long as
  the last one took to reach the screen (between FLUSH_INTERVAL and
  SLOWEST_FLUSH_INTERVAL): drawing takes about half the time whatever the machine, a
  backlog is drawn over several frames, and keys typed meanwhile are handled between;
- Markdown.append re-parses only the last block, so the blocks above it never change
  again: once drawn they are frozen (frozen_blocks.FrozenBlocks, up to RUN_BLOCKS blocks
  each), and a layout pass costs a few widgets instead of one per paragraph, list item
  and bullet, however long the reply or the session;
- full garbage collections wait until the stream ends (full_collections).
"""

from __future__ import annotations

import asyncio
import time

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import MountError, Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from app.tui import css_beside
from app.tui.widgets import full_collections
from app.tui.widgets.frozen_blocks import FrozenBlocks, look, pictures
from app.tui.widgets.same_lines import SameLines

FLUSH_INTERVAL = 1 / 30
SLOWEST_FLUSH_INTERVAL = 0.5
FLUSH_LINES = 24
RUN_BLOCKS = 32


def first_lines(text: str, count: int) -> tuple[str, str]:
    """``text`` split after its ``count``-th line break (all of it when it has fewer)."""
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end == -1:
            return text, ""
    return text[: end + 1], text[end + 1 :]


class Document(SameLines, Markdown):
    """The Markdown widget of a text part (its background drawn cheaply)."""


class StreamedText(SameLines, Vertical):
    """``StreamedText(text)`` draws a stored part at once; ``append`` streams one, and
    ``finish`` says no more text will come."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        self._document = Document(text or None)
        self._unwritten = ""
        self._open = not text
        """More text may come, so the last block may still change."""
        self._timer: Timer | None = None
        self._interval = FLUSH_INTERVAL
        self._writing = False
        """A write is queued, or not on screen yet."""
        self._holding = False
        """This stream holds full garbage collections back."""
        self._editing = asyncio.Lock()
        """Writing, freezing and thawing move the document's children: one at a time."""
        self._pinned: set[Widget] = set()
        """Blocks thawed because the pointer is over them: they freeze again once it leaves."""
        self._freeze_asked = False

    def compose(self) -> ComposeResult:
        yield self._document

    @property
    def drawn(self) -> bool:
        """Everything appended so far is in the Markdown widget."""
        return self._document.source == self.text

    def append(self, text: str) -> None:
        if not self._holding:
            self._holding = True
            full_collections.hold()
        self.text += text
        self._unwritten += text
        self._write_soon()

    def finish(self) -> None:
        """No more text will come; what is queued is still drawn, over the next frames."""
        self._open = False
        if not self._writing:
            self._settle()

    async def replace(self, text: str) -> None:
        """Show ``text`` instead (the stored part, when deltas were lost on the way)."""
        if self._timer is not None:
            self._timer.stop()
        self.text, self._unwritten, self._open, self._writing = text, "", False, False
        self._pinned.clear()
        async with self._editing:
            await self._document.remove_children()
            await self._document.update(text)
        self._settle()

    def on_unmount(self) -> None:
        self._release()

    # -- writing -----------------------------------------------------------------------

    def _write_soon(self) -> None:
        if not self._writing:
            self._writing = True
            self._timer = self.set_timer(self._interval, self._write)

    async def _write(self) -> None:
        if not self._document.is_mounted:  # its first, empty, update is still running
            self._timer = self.set_timer(self._interval, self._write)
            return
        started = time.monotonic()
        try:
            async with self._editing:
                with self.app.batch_update():  # one frame for both
                    await self._freeze_drawn()
                    chunk, self._unwritten = first_lines(self._unwritten, FLUSH_LINES)
                    if chunk:
                        await self._document.append(chunk)
        except MountError:
            # The reply is being removed (a session switch, quitting) in mid-write.
            self._unwritten = ""
            return
        self.call_after_refresh(self._written, started)

    def _written(self, started: float) -> None:
        """The write is on screen: wait as long as it took before the next one."""
        cost = time.monotonic() - started
        self._interval = min(max(cost, FLUSH_INTERVAL), SLOWEST_FLUSH_INTERVAL)
        self._writing = False
        if self._unwritten:
            self._write_soon()
        elif not self._open:
            self._settle()

    def _settle(self) -> None:
        """All the text is written: the last block may freeze too, and collections resume."""
        self._release()
        self._freeze_soon()

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            full_collections.release()

    # -- freezing ----------------------------------------------------------------------

    def _freeze_soon(self) -> None:
        if not self._freeze_asked:
            self._freeze_asked = True
            self.call_after_refresh(self._freeze)

    def on_resize(self) -> None:
        """Laid out anew: blocks that were not laid out before may be frozen now."""
        self._freeze_soon()

    async def _freeze(self) -> None:
        self._freeze_asked = False
        async with self._editing:
            with self.app.batch_update():
                await self._freeze_drawn()

    async def _freeze_drawn(self) -> None:
        """Freeze the blocks that are drawn and can no longer change."""
        runs = self._runs()
        if not runs or not self.is_attached or self._holds_selection():
            return
        drawn = pictures(self._document, runs)
        if drawn is None:  # not laid out yet: the next write or resize asks again
            return
        colours = look(self._document)
        for run, lines in zip(runs, drawn, strict=True):
            extended = run[0] if isinstance(run[0], FrozenBlocks) else None
            added = run[1:] if extended else run
            blocks = [*extended.blocks, *added] if extended else added
            await self._document.mount(FrozenBlocks(blocks, lines, colours), after=run[-1])
            for block in added:
                block.display = False
            if extended:
                await extended.remove()

    def _runs(self) -> list[list[Widget]]:
        """What can be frozen now, in runs of consecutive children each drawn as one: the
        shown blocks, but not the last while text may still come nor any under the
        pointer; a run starts with the FrozenBlocks just above it while that holds fewer
        than RUN_BLOCKS blocks, so a long reply stays a few widgets."""
        children = self._document.children
        blocks = [child for child in children if isinstance(child, MarkdownBlock)]
        last = blocks[-1] if blocks and (self._open or self._unwritten) else None
        runs: list[list[Widget]] = []
        run: list[Widget] = []
        held = 0  # blocks the run's FrozenBlocks would hold
        for child in children:
            if isinstance(child, MarkdownBlock) and not child.display:
                continue  # frozen already: its FrozenBlocks follows
            if self._freezable(child, last) and held < RUN_BLOCKS:
                run.append(child)
                held += 1
                continue
            runs.append(run)  # the run ends here; a new one may start with this child
            if isinstance(child, FrozenBlocks) and not child.thawing and len(child.blocks) < RUN_BLOCKS:
                run, held = [child], len(child.blocks)
            elif self._freezable(child, last):  # the run was full
                run, held = [child], 1
            else:
                run, held = [], 0
        runs.append(run)
        return [run for run in runs if any(isinstance(member, MarkdownBlock) for member in run)]

    def _freezable(self, child: Widget, last: Widget | None) -> bool:
        return isinstance(child, MarkdownBlock) and child is not last and child not in self._pinned

    def _holds_selection(self) -> bool:
        """Text selected in a live block stays live, or its highlight would vanish."""
        return any(self._document in widget.ancestors for widget in self.screen.selections)

    @on(FrozenBlocks.Thaw)
    async def _thaw(self, message: FrozenBlocks.Thaw) -> None:
        message.stop()
        frozen = message.frozen
        if message.pointed:
            self._pinned.update(frozen.blocks)
        async with self._editing:
            with self.app.batch_update():
                for block in frozen.blocks:
                    block.display = True
                await frozen.remove()
        if not message.pointed:
            self._freeze_soon()

    def on_leave(self) -> None:
        """The pointer left: the blocks it thawed may freeze again."""
        if self._pinned and not self.is_mouse_over:
            self._pinned.clear()
            self._freeze_soon()
