"""The sessions screen (ctrl+s): every top-level conversation, newest first. Enter
switches, ctrl+n starts a new one, r renames in place, d deletes after a confirmation, t
shows or hides the one-shot sessions of `opencode tool` calls (hidden at first). Store
calls run in a thread; the list redraws from the store afterwards, so it never shows a guess."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from app.store.models import Session
from app.store.sessions import SessionStore
from app.tui.screens.confirm import ConfirmScreen

UNTITLED = "Untitled session"


@dataclass(frozen=True)
class SessionPick:
    """What the user chose: open ``session_id``, or start a new session."""

    action: Literal["switch", "new"]
    session_id: str | None = None


def session_line(session: Session, current: str | None) -> Content:
    when = datetime.fromtimestamp(session.updated_at / 1000).strftime("%Y-%m-%d %H:%M")
    mark = "● " if session.id == current else "  "
    return Content.assemble(
        (mark, "$accent"), (session.title or UNTITLED, "$text"), "  ", (when, "$text-muted")
    )


class SessionsScreen(ModalScreen[SessionPick | None]):
    CSS_PATH = "sessions.tcss"
    BINDINGS = [
        Binding("ctrl+n", "new", "New session", id="sessions.new"),
        Binding("r", "rename", "Rename", id="sessions.rename"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete"),
        Binding("t", "toggle_tool_sessions", "Show or hide tool calls' sessions", id="sessions.tool"),
        Binding("escape", "close", "Close", id="sessions.close"),
    ]

    def __init__(self, sessions: SessionStore, current: str | None) -> None:
        super().__init__()
        self.sessions = sessions
        self.current = current
        self._listed: list[Session] = []
        self.show_tool_sessions = False

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box"):
            yield Static("Sessions", id="sessions-title")
            yield OptionList(id="sessions-list")
            yield Input(id="sessions-rename", placeholder="New title, enter to save, escape to cancel")
            yield Static(
                "enter open · ctrl+n new · r rename · d delete · t tool runs · esc close", id="sessions-help"
            )

    def on_mount(self) -> None:
        self.query_one("#sessions-rename", Input).display = False
        self.reload()

    @work(exclusive=True, group="sessions")
    async def reload(self) -> None:
        self._listed = await asyncio.to_thread(self.sessions.list, include_tool=self.show_tool_sessions)
        listing = self.query_one("#sessions-list", OptionList)
        listing.clear_options()
        listing.add_options(Option(session_line(s, self.current), id=s.id) for s in self._listed)
        if not self._listed:
            listing.add_option(Option("No sessions yet: ctrl+n starts one", disabled=True))
        if self._listed:  # the current session, else the newest, so enter, r and d act at once
            ids = [session.id for session in self._listed]
            listing.highlighted = ids.index(self.current) if self.current in ids else 0
        listing.focus()

    def _highlighted(self) -> Session | None:
        index = self.query_one("#sessions-list", OptionList).highlighted
        return self._listed[index] if index is not None and index < len(self._listed) else None

    @on(OptionList.OptionSelected, "#sessions-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(SessionPick("switch", event.option.id))

    def action_toggle_tool_sessions(self) -> None:
        self.show_tool_sessions = not self.show_tool_sessions
        title = "Sessions, with `opencode tool` runs" if self.show_tool_sessions else "Sessions"
        self.query_one("#sessions-title", Static).update(title)
        self.reload()

    def action_new(self) -> None:
        self.dismiss(SessionPick("new"))

    def action_close(self) -> None:
        rename = self.query_one("#sessions-rename", Input)
        if rename.display:
            rename.display = False
            self.query_one("#sessions-list", OptionList).focus()
        else:
            self.dismiss(None)

    def action_rename(self) -> None:
        session = self._highlighted()
        if session is None:
            return
        rename = self.query_one("#sessions-rename", Input)
        rename.value = session.title
        rename.display = True
        rename.focus()

    @on(Input.Submitted, "#sessions-rename")
    async def _save_title(self, event: Input.Submitted) -> None:
        session = self._highlighted()
        event.input.display = False
        title = event.value.strip()
        if session is not None and title:
            await asyncio.to_thread(self.sessions.update, session.id, title=title)
        self.reload()

    def action_delete(self) -> None:
        session = self._highlighted()
        if session is None:
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await asyncio.to_thread(self.sessions.delete, session.id)
                self.reload()

        title = session.title or UNTITLED
        self.app.push_screen(ConfirmScreen(f"Delete the session “{title}” and its messages?"), answered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the title is being typed, letters belong to the input."""
        if action in ("rename", "delete", "toggle_tool_sessions") and self.query_one("#sessions-rename", Input).has_focus:
            return False
        return True
