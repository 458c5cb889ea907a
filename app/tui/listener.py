"""What the app shows for the core's events: the chat draws them; the status bar, the
notices and the session on screen follow them.

Imported with the runtime, in the start-up thread, not by ``app.tui.app``: the event
classes pull in the store and workspace packages, which the first (empty) frame does
not need. For the same reason the chat widget knows no events: they are matched here.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from app.bus import Event
from app.hooks.service import HookNotice
from app.llm.events import (
    TURN_PROGRESS,
    MentionRefused,
    MessageDelta,
    ModelRetrying,
    ReasoningDelta,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from app.llm.messages import text_of
from app.lsp.events import LspStatusChanged
from app.mcp.events import McpStatusChanged
from app.store.events import MessageCreated, MessageUpdated, SessionDeleted, SessionUpdated
from app.tui.screens.transcript import TranscriptScreen
from app.tui.widgets.status_bar import ServiceState
from app.workspace.events import FileChangedOnDisk

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.tui.app import OpencodeApp
    from app.tui.widgets.chat_log import ChatLog

CHAT_EVENTS: tuple[type[Event], ...] = (
    *TURN_PROGRESS,
    HookNotice,
    MessageCreated,
    MessageUpdated,
    TurnStarted,
    TurnFinished,
    TurnFailed,
    TurnCancelled,
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
            for event in coalesce_deltas([first, *events.drain()]):
                try:
                    await show_event(app, event)
                except Exception as err:  # noqa: BLE001 - one bad event must not stop the listener
                    app.log.error(f"drawing {type(event).__name__} failed: {err!r}")


def event_session(event: Event) -> str | None:
    """The session an event belongs to, for the events the chat draws."""
    if isinstance(event, MessageCreated | MessageUpdated):
        return event.message.session_id
    return getattr(event, "session_id", None)


def coalesce_deltas(events: list[Event]) -> list[Event]:
    """Merge runs of text (or reasoning) deltas of one message into one delta: a listener
    that fell behind a fast model draws the backlog at once instead of token by token."""
    merged: list[Event] = []
    for event in events:
        last = merged[-1] if merged else None
        if (
            isinstance(event, MessageDelta)
            and type(last) is type(event)
            and (last.session_id, last.message_id) == (event.session_id, event.message_id)
        ):
            merged[-1] = replace(last, text=last.text + event.text)
        else:
            merged.append(event)
    return merged


TURN_STATES: dict[type[Event], str] = {
    TurnStarted: "running",
    TurnFinished: "done",
    TurnFailed: "failed",
    TurnCancelled: "cancelled",
}
"""What a sub-agent transcript's heading says after each of its session's turn events."""


def open_transcripts(app: OpencodeApp) -> list[TranscriptScreen]:
    """The sub-agent transcripts open over the app's chat."""
    return [screen for screen in app.screen_stack if isinstance(screen, TranscriptScreen)]


def open_chats(app: OpencodeApp) -> list[ChatLog]:
    """The app's chat and the chat of every sub-agent transcript open over it."""
    return [app.chat, *(screen.chat for screen in open_transcripts(app))]


async def show_event(app: OpencodeApp, event: Event) -> None:
    if not redrawn_anyway(app, event):
        for chat in open_chats(app):
            await draw_in_chat(chat, event)
    if type(event) in TURN_STATES:
        for transcript in open_transcripts(app):
            if event_session(event) == transcript.session_id:
                transcript.show_state(TURN_STATES[type(event)])
    status = app.status
    assert app.runtime is not None, "events come from the runtime's bus"
    sessions = app.runtime.store.sessions
    ours = event_session(event) == app.session_id
    # A sub-agent's progress and retries are the running turn's too.
    ours_or_child = ours or event_session(event) in app.chat.child_sessions
    match event:
        case SessionUpdated(session=session) if app.session_id is not None and app.session_id in (
            session.id,
            session.parent_id,
        ):
            # The session's usage or a sub-agent's: the bar shows what the whole tree cost.
            if session.id == app.session_id:
                status.title = session.title
            status.cost = (await asyncio.to_thread(sessions.tree_usage, session.parent_id or session.id)).cost
        case SessionDeleted(session_id=deleted) if deleted == app.session_id:
            await app.open_session(None)
        case MessageCreated(message=message) if ours and message.role == "user":
            app.delivered(text_of(message.parts))  # a steering message, stored by the running turn
        case TurnStarted() if ours:
            status.working = True
        case TurnFinished() | TurnFailed() | TurnCancelled() if ours:
            status.working = False
        case UsageUpdated() if ours:
            status.context_tokens = event.prompt_tokens + event.completion_tokens
            status.context_window = event.context_window
            status.cache_read = event.cache_read_tokens
            status.cache_write = event.cache_write_tokens
        case FileChangedOnDisk(path=path, change=change) if app.session_id in event.session_ids:
            happened = "was deleted" if change == "deleted" else "changed"
            await app.chat.add_notice(f"{path} {happened} on disk", "info")
        case LspStatusChanged(language=language, state=state, message=message):
            status.set_service(ServiceState(f"LSP {language}", state, message))
        case McpStatusChanged(server=server, state=state, message=message):
            status.set_service(ServiceState(f"MCP {server}", state, message))
        case ModelRetrying() if ours_or_child:
            app.notify(f"The model call failed ({event.reason}); trying again in {event.delay:.0f} s")
        case _ if ours_or_child and isinstance(event, PROGRESS_EVENTS):
            status.pulse()


def redrawn_anyway(app: OpencodeApp, event: Event) -> bool:
    """A message an undo, redo or rewind marked: the step redraws its session from the
    store once done (drawn here too, it could land out of order), and a message taken
    back is not shown at all."""
    if not isinstance(event, MessageCreated | MessageUpdated):
        return False
    return event.message.undone or event.message.session_id == app.redrawing


async def draw_in_chat(chat: ChatLog, event: Event) -> None:
    """Draw one event in the chat; of the other sessions' events, only the tool calls of
    the chat's sub-agents show, in their task blocks."""
    if chat.session_id is None:
        return
    if event_session(event) != chat.session_id:
        if isinstance(event, ToolCallStarted) and (task := chat.task_of(event.session_id)) is not None:
            task.child_call(event.tool, event.arguments)
        return
    match event:
        case SubagentStarted(call_id=call_id, child_session_id=child, agent=agent, description=description):
            chat.link_subagent(call_id, child, agent, description)
        case TextDelta(message_id=mid, text=text):
            await chat.append_text(mid, text)
        case ReasoningDelta(message_id=mid, text=text):
            await chat.append_reasoning(mid, text)
        case ToolCallStarted(message_id=mid, call_id=call_id, tool=tool, arguments=arguments):
            await chat.add_tool_call(mid, call_id, tool, arguments)
        case ToolCallFinished(call_id=call_id, output=output, metadata=metadata, error=error):
            await chat.finish_call(call_id, (output, metadata, error))
        case MessageCreated(message=message):
            await chat.draw_message(message, finished=False, created=True)
        case MessageUpdated(message=message):
            await chat.draw_message(message, finished=message.finished_at is not None)
        case TurnFinished():
            chat.end_streams()
        case TurnFailed(error=error):
            chat.end_streams()
            await chat.add_notice(error, "error")
        case TurnCancelled():
            chat.end_streams()
            await chat.cancel_running_calls()
            await chat.add_notice("Cancelled.", "warning")
        case MentionRefused(line=line) | HookNotice(line=line):
            await chat.add_notice(line, "warning")
