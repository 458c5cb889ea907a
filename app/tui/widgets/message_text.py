"""One text part of a reply: a Markdown widget, written through Textual's own streaming
API (``Markdown.get_stream``), which merges the fragments that arrive while the last
write is still being drawn, so a fast reply never queues more writes than frames.

While the reply ends in a list or a quote, its text goes to the document a line at a
time (or once a line has waited ``LINE_WAIT``): Textual's Markdown draws such a block
again whole, every item made anew, at each write that reaches it, where a paragraph, a
code block or a table is updated in place. Written a fragment at a time, a list a few
items long remakes dozens of widgets per frame, and the garbage they leave makes the
collector's full passes (each a stalled frame) come several times a second.

While the text streams, the paragraph or code block it ends in is rewritten at each
write, and Textual lays out the whole screen after any widget's update, though most
writes only add to the block's last line: a streamed paragraph or code block
(``StreamedParagraph``, ``StreamedFence``) asks for a layout only when its size changes,
and is repainted alone otherwise. A streamed code block keeps its last line in a label
of its own, so that a write redraws that line, not every line of the block.

While the text streams, its height grows in steps of ``STEP_ROWS``: the rows up to the
next step are held blank below the text. A chat following its end scrolls only when a
step is taken, and the frames between paint the growing block alone, where a scroll
paints every line of the chat again (most of a frame's time). The rows held go when the
stream ends.

A text drawn at once (a stored reply) shows its code blocks plain, then coloured
(code_fence.CodeFence). Bare web addresses become links only with their scheme
(``https://...``): a file name such as ``setup.py`` or ``README.md`` reads as a domain
to the fuzzy matching of links (``.py``, ``.md`` are country domains), and matching
it costs more than parsing the rest of the reply."""

from __future__ import annotations

from contextlib import suppress
from functools import cache
from typing import cast

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Size
from textual.timer import Timer
from textual.visual import Visual, VisualType, visualize
from textual.widget import MountError
from textual.widgets import Label, Markdown, Static
from textual.widgets.markdown import MarkdownBlock, MarkdownFence, MarkdownStream

from app.tui import css_beside
from app.tui.widgets.code_fence import CodeFence

CODE_BLOCKS = ("fence", "code_block")
"""Markdown's names of the blocks drawn as code."""
REMADE_BLOCKS = ("bullet_list_open", "ordered_list_open", "blockquote_open")
"""Markdown's names of the blocks Textual's Markdown makes again whole at each write."""
STEP_ROWS = 6
"""Rows a streaming text's height grows by at a time (see above)."""
LINE_WAIT = 0.25
"""Seconds the unfinished line of a list or a quote may wait for its end before it is
drawn anyway (a long item, or a model that pauses mid-line)."""


def reply_parser() -> MarkdownIt:
    """Textual's Markdown parser ("gfm-like"), with links found by their scheme only."""
    parser = MarkdownIt("gfm-like")
    if parser.linkify is not None:  # None only where linkify-it is not installed
        parser.linkify.set({"fuzzy_link": False, "fuzzy_email": False})
    return parser


@cache
def block_parser() -> MarkdownIt:
    """Markdown's block rules without the inline ones, made once: a parse keeps its state
    in the call, not in the parser."""
    return MarkdownIt("gfm-like", {"linkify": False}).disable("inline")


class LastBlock:
    """The kind of the last top-level block of a text that only grows: Markdown's name of
    its opening token (``paragraph_open``, ``bullet_list_open``, ``fence``...). Each call
    parses from where that block began, as Textual's stream does, not the whole text."""

    def __init__(self) -> None:
        self._start = 0
        """Where the last top-level block found so far begins in the text."""

    def of(self, text: str) -> str | None:
        tail = text[self._start:]
        tops = [(token.type, token.map[0]) for token in block_parser().parse(tail)
                if token.level == 0 and token.map is not None]
        if not tops:
            return None
        kind, first_line = tops[-1]
        self._start += sum(len(line) for line in tail.splitlines(keepends=True)[:first_line])
        return kind


class SizeKept(Static):
    """A Static whose update asks for a layout of the screen only when the new content
    takes other rows (at its width), or, where its width follows its content (a code
    block's label), other columns; otherwise it is repainted alone.

    It comes after the widget class it joins (``class X(MarkdownParagraph, SizeKept)``):
    Textual's CSS follows a widget's first base, so the widget keeps its own rules."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        width = self.content_size.width
        if layout and width and self.is_mounted:
            layout = self._resized_by(visualize(self, content), width)
        super().update(content, layout=layout)

    @property
    def _rules(self) -> RulesMap:
        """The styles as Textual hands them to a visual it measures."""
        return cast("RulesMap", self.styles)

    def _resized_by(self, visual: Visual, width: int) -> bool:
        return not self._width_kept(visual, width) or visual.get_height(self._rules, width) != self.content_size.height

    def _width_kept(self, visual: Visual, width: int) -> bool:
        """Whether ``visual`` leaves the width as it is: always, unless the width follows the
        content; then when the widest line is as wide, or (an ``expand`` widget, as wide as
        its container at least) when both fit in the width its container gives it."""
        if self.styles.width is None or not self.styles.width.is_auto:
            return True  # no width set: as wide as its container
        before = self.visual.get_optimal_width(self._rules, width)
        after = visual.get_optimal_width(self._rules, width)
        return after == before or (self.expand and before < width and after <= width)


PARAGRAPH: type[MarkdownBlock] = Markdown.BLOCKS["paragraph_open"]
"""Textual's paragraph block (its module exports it only through ``Markdown.BLOCKS``)."""


class StreamedParagraph(PARAGRAPH, SizeKept):  # type: ignore[misc,valid-type]
    """A paragraph of a streaming text: most writes add words to its last row."""


class SizeKeptLabel(Label, SizeKept):
    """A label repainted alone when an update leaves its size as it was."""


class StreamedFence(MarkdownFence):
    """A code block of a streaming text, in two labels: its lines but the last, and the
    last, which most writes extend. A label draws every line it holds again when it
    changes, so a write within the last line redraws that line alone, where one label
    would draw the whole block again; and neither asks for a layout while its size stays
    (``SizeKeptLabel``). The labels share the padding one label would have."""

    DEFAULT_CSS = """
    StreamedFence {
        & > Label.-lines { padding: 1 2 0 2; min-height: 0; }
        & > Label.-last { padding: 0 2 1 2; }
        &.-one-line > Label.-lines { display: none; }
        &.-one-line > Label.-last { padding: 1 2; }
    }
    StreamedFence:ansi {
        & > Label.-lines { padding: 1 0 0 0; }
        & > Label.-last { padding: 0 0 1 0; }
        &.-one-line > Label.-last { padding: 1 0; }
    }
    """

    def compose(self) -> ComposeResult:
        lines, last = before_last_line(self.highlight(self.code, self.lexer, ansi=self.app.native_ansi_color,
                                                      dark=self.app.current_theme.dark))
        self.set_class(lines is None, "-one-line")
        yield SizeKeptLabel(lines or "", classes="-lines", expand=True)
        yield SizeKeptLabel(last, classes="-last", expand=True)

    def set_content(self, content: Content) -> None:
        """The new code: the lines before its last to one label, the last to the other,
        each only if it differs from what the label shows."""
        lines, last = before_last_line(content)
        self.set_class(lines is None, "-one-line")
        for label in self.query(SizeKeptLabel):
            new = (lines or Content()) if label.has_class("-lines") else last
            if not shows(label, new):
                label.update(new)


def before_last_line(code: Content) -> tuple[Content | None, Content]:
    """``code``'s lines before its last (None: it has one line), and its last line."""
    end = code.plain.rfind("\n")
    return (None, code) if end < 0 else (code[:end], code[end + 1:])


def shows(label: Label, content: Content) -> bool:
    """The label shows ``content``, text and colours (Content's ``==`` is the text alone)."""
    shown = label.visual
    return isinstance(shown, Content) and shown == content and shown.spans == content.spans


class StreamedText(Markdown):
    """``StreamedText(text)`` draws a stored part at once; ``write`` streams one, and
    ``finish`` says no more text will come."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, text: str = "") -> None:
        super().__init__(text or None, parser_factory=reply_parser)
        self.text = text
        self._stream: MarkdownStream | None = None
        self._held = ""
        """Text written to this part but not yet to the document (see LINE_WAIT)."""
        self._last_block = LastBlock()
        """The kind of the streamed text's last block; made anew with each stream."""
        self._line_timer: Timer | None = None

    @property
    def drawn(self) -> bool:
        """Everything written so far is in the document."""
        return self.source == self.text

    @property
    def streaming(self) -> bool:
        """More text may come."""
        return self._stream is not None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The text's rows; while it streams, rounded up to a step of ``STEP_ROWS``."""
        height = super().get_content_height(container, viewport, width)
        if self._stream is None:
            return height
        return -(-height // STEP_ROWS) * STEP_ROWS

    def get_block_class(self, block_name: str) -> type[MarkdownBlock]:
        """A code block read back is coloured after it is drawn. While the text streams,
        its code blocks and paragraphs keep the screen's layout while their size stays (a
        streamed code block is remade at each write, so it is coloured as it is made)."""
        if block_name in CODE_BLOCKS:
            return CodeFence if self._stream is None else StreamedFence
        if block_name == "paragraph_open" and self._stream is not None:
            return StreamedParagraph
        return super().get_block_class(block_name)

    async def write(self, text: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
            self._last_block = LastBlock()
        self.text += text
        self._held += text
        ready = len(self._held)
        if self._last_block.of(self.text) in REMADE_BLOCKS:
            ready = self._held.rfind("\n") + 1
            if ready < len(self._held) and self._line_timer is None:
                self._line_timer = self.set_timer(LINE_WAIT, self._write_held)
        if ready:
            await self._write_held(ready)

    async def _write_held(self, length: int | None = None) -> None:
        """Hand the held text, or its first ``length`` characters, to the document."""
        length = len(self._held) if length is None else length
        if length == len(self._held):
            self._stop_line_timer()
        ready, self._held = self._held[:length], self._held[length:]
        if ready and self._stream is not None:
            await self._stream.write(ready)

    def _stop_line_timer(self) -> None:
        if self._line_timer is not None:
            self._line_timer.stop()
            self._line_timer = None

    def finish(self) -> None:
        """No more text will come; what is queued is still drawn."""
        if self._stream is not None:
            self.call_later(self._end_stream)

    async def replace(self, text: str) -> None:
        """Show ``text`` instead (the stored part, when deltas were lost on the way)."""
        self._held = ""
        await self._end_stream()
        self.text = text
        await self.update(text)

    async def _end_stream(self) -> None:
        """Stop the stream once it has written what it holds, then write the text held
        back (see LINE_WAIT) here, awaited, rather than through the stream, whose writes
        run in a task nobody awaits once stopped. A part removed meanwhile (a session
        switch, quitting) has nowhere to write it: that is no error."""
        self._stop_line_timer()
        stream, self._stream = self._stream, None
        held, self._held = self._held, ""
        if stream is not None:
            self.refresh(layout=True)  # the rows held below the text go
            with suppress(MountError):
                await stream.stop()
                if held:
                    await self.append(held)

    async def on_unmount(self) -> None:
        await self._end_stream()
