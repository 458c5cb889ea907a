"""A code block of a reply read back from the store, drawn plain at once and coloured
from a thread: building a lexer's tables on its first use (or guessing the language of
a block that names none, which tries every lexer) is not on the way to the reply's first
frame, nor does it hold the keyboard while a session opens.

Once a language's lexer is built the blocks in it are coloured as Textual's own fence
colours them, at once; a theme change colours them again for the new theme."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.content import Content
from textual.highlight import guess_language
from textual.strip import Strip
from textual.widgets import Label
from textual.widgets.markdown import MarkdownFence

CODE_LABEL = "code-content"
"""The id of the label a fence draws its code in (MarkdownFence.compose)."""
_ready: set[str] = set()
"""The languages whose lexer is built: blocks in them are coloured when they are made."""


def plain(code: str) -> Content:
    """``code`` as a fence shows it before it is coloured: the same text, no colours."""
    return Content("\n".join(code.splitlines())).stylize_before("$text")


def colour_code(code: str, language: str, *, ansi: bool, dark: bool) -> tuple[str, Content]:
    """``code`` coloured as a fence colours it, and its language (guessed when
    ``language`` is empty), whose lexer is built from now on. Blocking: run it in a thread."""
    language = language or guess_language(code, None)
    content = MarkdownFence.highlight(code, language, ansi=ansi, dark=dark)
    _ready.add(language)  # a language Pygments does not know shows as text, at once too
    return language, content


class CodeFence(MarkdownFence):
    """``coloured``: the block shows its syntax colours (else it waits for its lexer,
    which is built once the block has been drawn)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._colouring = False

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        if language in _ready:
            return super().highlight(code, language, ansi=ansi, dark=dark)
        return plain(code)

    @property
    def coloured(self) -> bool:
        return self.lexer in _ready

    def render_line(self, y: int) -> Strip:
        if not (self._colouring or self.coloured):
            # Drawn plain for the first time: coloured once this frame is on screen. A
            # block whose colouring fails stays plain.
            self._colouring = True
            self.call_later(self.run_worker, self._colour, group="colour", exclusive=True, exit_on_error=False)
        return super().render_line(y)

    async def _colour(self) -> None:
        ansi, dark = self._theme_kind()
        self.lexer, content = await asyncio.to_thread(colour_code, self.code, self.lexer, ansi=ansi, dark=dark)
        if (ansi, dark) != self._theme_kind():  # the theme changed meanwhile
            content = self.highlight(self.code, self.lexer, *self._theme_kind())
        # The same text in colours takes the same room: the block is drawn again without
        # laying out the screen, which with a long transcript holds the keyboard a while.
        for label in self.query(f"#{CODE_LABEL}").results(Label):
            label.update(content, layout=str(label.content) != str(content))

    def _theme_kind(self) -> tuple[bool, bool]:
        """What Textual's colours of code depend on: the terminal's own colours or not,
        a dark theme or not (the rest is in CSS variables, resolved as it is drawn)."""
        return self.app.native_ansi_color, self.app.current_theme.dark
