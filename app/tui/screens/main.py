"""The app's own screen: the chat, the prompt, the sidebar and the status bar. Every
other screen (models, sessions, help, a diff, a permission question, the palette) opens
over it, and when that screen closes the keyboard goes back to where it was, or to the
prompt when that place is gone or hidden meanwhile: a session switched, the sidebar
hidden by a resize, the terminal's focus lost while the other screen was open."""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen
from textual.widget import Widget


class MainScreen(Screen):
    """``home()`` is where the keyboard goes when where it was is no longer there."""

    def __init__(self, home: Callable[[], Widget], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._home = home
        self._was_focused: Widget | None = None

    def on_screen_suspend(self) -> None:
        self._was_focused = self.focused

    def keyboard_home(self) -> None:
        """Put the keyboard on ``home()`` now, while another screen still covers this one:
        the screen closing over it knows that what is typed next is for the prompt, and
        the keys read before this screen's resume is handled go there too."""
        self._was_focused = None
        self.set_focus(self._home(), scroll_visible=False)

    def on_screen_resume(self) -> None:
        if not self.is_mounted:  # the first resume, before the widgets exist
            return
        target = self._was_focused
        self._was_focused = None
        if target is None or target not in self.focus_chain:
            target = self._home()
        self.set_focus(target, scroll_visible=False)
