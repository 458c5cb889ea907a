"""The sidebar: the session's todo list (app/tui/widgets/todo_panel.py, shown only when
there is one), then the modified files: every file the session (and its sub-agents) changed, with
+additions -deletions, new and deleted files marked. A file the session left as it found
it (changed and reverted, created and deleted) is not listed: the list is what differs
from before the session, and the chat keeps every step. Enter opens the file's diff; r
reverts it, after a yes/no question (a revert is the user's own action, not the agent's).

It follows the history through the bus: each ``FileVersionCreated`` marks the list stale,
and one refresh loop re-reads the history whenever it is stale. A listed file changed by
another program (``FileChangedOnDisk``) is shown as it is on disk from then on: its stats
and diff compare the initial content with the disk, not with our last write. However many versions a
burst brings (a directory delete of 1,000 files), the list is read once for it, and the
first event of a burst is shown at the next refresh, without waiting for a timer.

The app shows it in its first frame, empty, before the runtime exists (``attach`` hands
it over later): so the first frame makes only the title and the empty note, and this
module imports only what drawing them needs. The todo panel and the file list, both
hidden while empty, are mounted with the runtime; the history, tools and diff screen are
imported where they are first used.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from app.core.errors import PermissionDeniedError, ToolError
from app.tui import css_beside
from app.tui.short_path import shorten_path

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.store.models import FileChange
    from app.tui.widgets.sidebar_list import ModifiedFileList
    from app.tui.widgets.todo_panel import TodoPanel

REVERT_AGENT = "user"
"""Who a revert is done for: the user, not an agent, so no agent's permission rules apply."""
QUESTION_WIDTH = 54
"""Columns inside the confirmation box (confirm.tcss: 60 wide, less border and padding):
a longer path in the revert question is cut in the middle rather than wrapped."""


class FilesSidebar(Vertical):
    """``FilesSidebar(runtime, session_id)``; set ``session_id`` when the session changes.
    Without a runtime it shows the empty list until ``attach(runtime)``."""

    DEFAULT_CSS = css_beside(__file__)
    DEFAULT_CLASSES = "-empty"
    """Empty until the history says otherwise (the first frame shows the empty note)."""

    session_id: reactive[str | None] = reactive(None)

    class Refreshed(Message):
        """The list now shows ``count`` files (posted after every refresh); ``hid_focus``:
        the keyboard was on the list this refresh emptied and hid (the last file reverted)."""

        def __init__(self, count: int, hid_focus: bool = False) -> None:
            super().__init__()
            self.count = count
            self.hid_focus = hid_focus

    def __init__(
        self,
        runtime: Runtime | None = None,
        session_id: str | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.runtime = runtime
        self.set_reactive(FilesSidebar.session_id, session_id)
        self._stale = asyncio.Event()
        self._changed_on_disk: set[str] = set()
        """Paths another program changed: shown from the disk, not from the history."""
        self._todos: TodoPanel | None = None
        self._files: ModifiedFileList | None = None
        """The todo panel and the file list, mounted with the runtime."""

    def compose(self) -> ComposeResult:
        yield Static("Modified files", id="sidebar-title")
        yield Static("No files changed yet", id="sidebar-empty")

    async def on_mount(self) -> None:
        if self.runtime is not None:
            await self._follow(self.runtime)

    async def attach(self, runtime: Runtime) -> None:
        """Start following ``runtime``'s history (for a sidebar made without one)."""
        self.runtime = runtime
        await self._follow(runtime)

    async def _follow(self, runtime: Runtime) -> None:
        from app.tui.widgets.sidebar_list import ModifiedFileList
        from app.tui.widgets.todo_panel import TodoPanel

        self._todos = todos = TodoPanel(id="sidebar-todos")
        self._files = ModifiedFileList(id="sidebar-files")
        # Both join the sidebar before either mount is awaited: whoever sees the runtime
        # attached finds them.
        mounts = [self.mount(todos, before="#sidebar-title"), self.mount(self._files, after="#sidebar-title")]
        for mounted in mounts:
            await mounted
        todos.session_id = self.session_id
        todos.attach(runtime)
        self._stale.set()
        self._follow_history(runtime)
        self._refresh_when_stale()

    def watch_session_id(self) -> None:
        if self._todos is not None:
            self._todos.session_id = self.session_id
        self._stale.set()

    def focus_files(self) -> None:
        """Put the keyboard on the file list (the app binds a key to this); before the
        runtime is attached there is none, and no file to show."""
        if self._files is not None:
            self._files.focus()

    @property
    def changes(self) -> list[FileChange]:
        """The files shown, in order."""
        return self._files.changes if self._files is not None else []

    @work(group="sidebar-follow")
    async def _follow_history(self, runtime: Runtime) -> None:
        from app.store.events import FileVersionCreated
        from app.workspace.events import FileChangedOnDisk

        async with runtime.bus.subscribe(FileVersionCreated, FileChangedOnDisk) as events:
            async for event in events:
                if isinstance(event, FileChangedOnDisk):
                    self._changed_on_disk.add(event.path)
                self._stale.set()

    @work(group="sidebar-refresh")
    async def _refresh_when_stale(self) -> None:
        while True:
            await self._stale.wait()
            self._stale.clear()
            session_id = self.session_id
            changes = await asyncio.to_thread(self._read_changes, session_id) if session_id else []
            # The app may have begun to close (its widgets going) while history was read.
            if session_id == self.session_id and self.is_attached:
                self._show(changes)

    def _read_changes(self, session_id: str) -> list[FileChange]:
        """The session's files that differ from before it, from the history; those changed
        by another program as on disk."""
        assert self.runtime is not None
        changes = self.runtime.store.history.list_latest_session_files(session_id)
        root = self.runtime.workspace.root
        shown = (as_on_disk(c, root) if c.path in self._changed_on_disk else c for c in changes)
        return [change for change in shown if not change.unchanged]

    def _show(self, changes: list[FileChange]) -> None:
        files = self._files
        assert files is not None  # the refresh loop starts once it is mounted
        title = next(self.query("#sidebar-title").results(Static), None)
        if title is None:  # the app is closing: its widgets go before the sidebar does
            return
        hid_focus = files.has_focus and not changes
        files.set_changes(changes)
        title.update(
            Content.assemble(("Modified files", "bold"), (f"  {len(changes)}" if changes else "", "$text-muted"))
        )
        self.set_class(not changes, "-empty")
        self.post_message(self.Refreshed(len(changes), hid_focus))

    def on_modified_file_list_open_requested(self, event: ModifiedFileList.OpenRequested) -> None:
        from app.tui.screens.diff_screen import DiffScreen

        self.app.push_screen(DiffScreen.for_change(event.change))

    def on_modified_file_list_revert_requested(self, event: ModifiedFileList.RevertRequested) -> None:
        from app.tui.screens.confirm import ConfirmScreen

        session_id, change = self.session_id, event.change
        if session_id is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._revert(session_id, change)

        self.app.push_screen(ConfirmScreen(revert_question(change), confirm_label="Revert"), answered)

    @work(group="sidebar-revert")
    async def _revert(self, session_id: str, change: FileChange) -> None:
        """The user said yes: revert through the change path, which still refuses what a
        rule denies, without asking again."""
        from app.tools.revert import revert_file

        assert self.runtime is not None
        try:
            await revert_file(self.runtime.context(session_id, agent=REVERT_AGENT), change.path, confirmed=True)
        except (PermissionDeniedError, ToolError) as err:
            self.notify(str(err), severity="warning")
        else:
            done = "Removed" if change.created else "Reverted"
            self.notify(f"{done} {change.path}; the session's changes to it stay in its history")


def revert_question(change: FileChange) -> str:
    """The yes/no question before reverting ``change``: what will happen to the file."""
    if change.created:
        outcome = "The session created it: reverting deletes it."
    elif change.deleted:
        outcome = "The session deleted it: reverting brings it back."
    else:
        outcome = f"Its content goes back to before this session (+{change.additions} -{change.deletions} undone)."
    path = shorten_path(change.path, QUESTION_WIDTH - len("Revert ?"))
    return f"Revert {path}?\n{outcome}\nThe change stays in the session's history."


def as_on_disk(change: FileChange, root: Path) -> FileChange:
    """``change`` with the file's current disk content as its latest (a deleted file when
    gone); unchanged when the file is not text, whose diff the sidebar cannot show."""
    from app.core.diff import diff_stats

    if change.initial_data is not None:
        return change
    try:
        latest, deleted = (root / change.path).read_text(encoding="utf-8"), False
    except FileNotFoundError:
        latest, deleted = "", True
    except (OSError, UnicodeDecodeError):
        return change
    if latest == change.latest_content and deleted == change.deleted:
        return change
    additions, deletions = diff_stats(change.initial_content, latest)
    unchanged = latest == change.initial_content and deleted == change.created
    return change._replace(
        latest_content=latest, deleted=deleted, additions=additions, deletions=deletions, unchanged=unchanged
    )
