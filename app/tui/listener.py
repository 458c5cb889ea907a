"""What the app shows for the core's events: the chat draws them; the status bar, the
notices and the session on screen follow them.

Imported with the runtime, in the start-up thread, not by ``app.tui.app``: the event
classes pull in the store and workspace packages, which the first (empty) frame does
not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.bus import Event
from app.llm.events import (
    ModelRetrying,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from app.lsp.events import LspStatusChanged
from app.mcp.events import McpStatusChanged
from app.store.events import MessageCreated, MessageUpdated, SessionDeleted, SessionUpdated
from app.tui.widgets.chat_log import coalesce_deltas, event_session
from app.tui.widgets.status_bar import ServiceState
from app.workspace.events import FileChangedOnDisk

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.tui.app import OpencodeApp

CHAT_EVENTS: tuple[type[Event], ...] = (
    TextDelta,
    ReasoningDelta,
    ToolCallStarted,
    ToolCallFinished,
    MessageCreated,
    MessageUpdated,
    TurnStarted,
    TurnFinished,
    TurnFailed,
    TurnCancelled,
    UsageUpdated,
    ModelRetrying,
    SessionUpdated,
    SessionDeleted,
    FileChangedOnDisk,
    LspStatusChanged,
    McpStatusChanged,
)
PROGRESS_EVENTS = (TextDelta, ReasoningDelta, ToolCallStarted, ToolCallFinished)


async def listen(app: OpencodeApp, runtime: Runtime) -> None:
    """Show every event the app cares about, in order, until the app closes. A backlog
    (a fast model, a busy UI) is drawn at once, its text deltas merged."""
    async with runtime.bus.subscribe(*CHAT_EVENTS) as events:
        for state in runtime.mcp.statuses():  # what happened before we listened
            await show_event(app, state)
        while (first := await events.get()) is not None:
            backlog = [first]
            while (more := events.get_nowait()) is not None:
                backlog.append(more)
            for event in coalesce_deltas(backlog):
                try:
                    await show_event(app, event)
                except Exception as err:  # noqa: BLE001 - one bad event must not stop the listener
                    app.log.error(f"drawing {type(event).__name__} failed: {err!r}")


async def show_event(app: OpencodeApp, event: Event) -> None:
    await app.chat.apply(event)
    status = app.status
    ours = event_session(event) == app.session_id
    match event:
        case SessionUpdated(session=session) if session.id == app.session_id:
            status.title = session.title
            status.cost = session.cost
        case SessionDeleted(session_id=deleted) if deleted == app.session_id:
            await app.open_session(None)
        case TurnStarted() if ours:
            status.working = True
        case TurnFinished() | TurnFailed() | TurnCancelled() if ours:
            status.working = False
        case UsageUpdated() if ours:
            status.context_tokens = event.prompt_tokens + event.completion_tokens
            status.context_window = event.context_window
            status.cost = event.cost
        case FileChangedOnDisk(path=path, change=change) if app.session_id in event.session_ids:
            happened = "was deleted" if change == "deleted" else "changed"
            await app.chat.add_notice(f"{path} {happened} on disk", "info")
        case LspStatusChanged(language=language, state=state, message=message):
            status.set_service(ServiceState(f"LSP {language}", state, message))
        case McpStatusChanged(server=server, state=state, message=message):
            status.set_service(ServiceState(f"MCP {server}", state, message))
        case ModelRetrying() if ours:
            app.notify(f"The model call failed ({event.reason}); trying again in {event.delay:.0f} s")
        case _ if ours and isinstance(event, PROGRESS_EVENTS):
            status.pulse()
