"""The conversation: user prompts, streamed assistant messages with their tool calls, and
the app's own notices. It draws the bus events of one session (``session_id``) and
replays stored messages; anchored to the bottom unless the user scrolls up."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll

from app.bus import Event
from app.llm.events import (
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from app.store.events import MessageCreated, MessageUpdated
from app.store.models import Message
from app.tui import css_beside
from app.tui.widgets.message_notice import ChatNotice, NoticeKind
from app.tui.widgets.message_user import UserMessage
from app.tui.widgets.same_lines import SameLines

if TYPE_CHECKING:
    from app.tui.widgets.message_assistant import AssistantMessage
    from app.tui.widgets.tool_render import ToolCallView

ToolResult = tuple[str, dict[str, Any], bool]


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
            isinstance(event, TextDelta | ReasoningDelta)
            and type(last) is type(event)
            and (last.session_id, last.message_id) == (event.session_id, event.message_id)  # type: ignore[union-attr]
        ):
            merged[-1] = replace(last, text=last.text + event.text)  # type: ignore[type-var]
        else:
            merged.append(event)
    return merged


class ChatLog(SameLines, VerticalScroll):
    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session_id: str | None = None
        self._assistants: dict[str, AssistantMessage] = {}
        self._results: dict[str, ToolResult] = {}
        self._users: set[str] = set()

    def on_mount(self) -> None:
        self.anchor()

    async def show_session(self, session_id: str | None, messages: list[Message]) -> None:
        """Forget what is shown and draw a session's stored messages."""
        await self.remove_children()
        self._assistants.clear()
        self._results.clear()
        self._users.clear()
        self.session_id = session_id
        for message in messages:
            await self._draw_message(message, finished=True)
        self.anchor()

    async def add_notice(self, text: str, kind: NoticeKind = "info") -> ChatNotice:
        notice = ChatNotice(text, kind)
        await self.mount(notice)
        return notice

    async def apply(self, event: Event) -> None:
        """Draw one bus event; events of other sessions are ignored."""
        if self.session_id is None or event_session(event) != self.session_id:
            return
        match event:
            case TextDelta(message_id=mid, text=text):
                await (await self._assistant(mid)).append_text(text)
            case ReasoningDelta(message_id=mid, text=text):
                await (await self._assistant(mid)).append_reasoning(text)
            case ToolCallStarted(message_id=mid, call_id=call_id, tool=tool, arguments=arguments):
                await (await self._assistant(mid)).add_tool_call(call_id, tool, arguments)
            case ToolCallFinished(call_id=call_id, output=output, metadata=metadata, error=error):
                await self._finish_call(call_id, (output, metadata, error))
            case MessageCreated(message=message):
                await self._draw_message(message, finished=False)
            case MessageUpdated(message=message):
                await self._draw_message(message, finished=message.finished_at is not None)
            case TurnFinished():
                self._end_streams()
            case TurnFailed(error=error):
                self._end_streams()
                await self.add_notice(error, "error")
            case TurnCancelled():
                self._end_streams()
                await self._cancel_running_calls()
                await self.add_notice("Cancelled.", "warning")

    async def _draw_message(self, message: Message, *, finished: bool) -> None:
        if message.role == "user":
            if message.id not in self._users:
                self._users.add(message.id)
                text = "".join(p.get("text", "") for p in message.parts if p.get("type") == "text")
                await self.mount(UserMessage(text, message_id=message.id))
        elif message.role == "assistant":
            # While a message streams its deltas draw it; the stored parts are drawn (or
            # checked against what streamed) once it is complete.
            known = message.id in self._assistants
            assistant = await self._assistant(message.id)
            complete = finished or any(part.get("type") == "finish" for part in message.parts)
            if complete and not known:
                await assistant.show_parts(message.parts)
            elif complete and await assistant.reconcile(message.parts):
                await self._reapply_results(assistant)
        for part in message.parts:
            if part.get("type") == "tool_result":
                result = (str(part.get("output", "")), part.get("metadata") or {}, bool(part.get("error")))
                await self._finish_call(str(part.get("call_id")), result)

    async def _assistant(self, message_id: str) -> AssistantMessage:
        assistant = self._assistants.get(message_id)
        if assistant is None:
            # Imported on first use: Markdown and syntax highlighting are not needed for
            # the first frame, which must not wait for them.
            from app.tui.widgets.message_assistant import AssistantMessage

            assistant = AssistantMessage(message_id)
            self._assistants[message_id] = assistant
            await self.mount(assistant)
        return assistant

    def _tool_view(self, call_id: str) -> ToolCallView | None:
        for assistant in self._assistants.values():
            if call_id in assistant.tool_views:
                return assistant.tool_views[call_id]
        return None

    async def _finish_call(self, call_id: str, result: ToolResult) -> None:
        self._results.setdefault(call_id, result)
        view = self._tool_view(call_id)
        if view is not None:
            await view.finish(*result)

    async def _reapply_results(self, assistant: AssistantMessage) -> None:
        for call_id, view in assistant.tool_views.items():
            if call_id in self._results:
                await view.finish(*self._results[call_id])

    def _end_streams(self) -> None:
        for assistant in self._assistants.values():
            assistant.end_text()

    async def _cancel_running_calls(self) -> None:
        for assistant in self._assistants.values():
            for view in assistant.tool_views.values():
                await view.finish("Cancelled before it finished.", {}, True)
