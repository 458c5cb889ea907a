"""The conversation: user prompts, streamed assistant messages with their tool calls, and
the app's own notices, for one session (``session_id``); stored messages are replayed.
Anchored to the bottom unless the user scrolls up.

It knows nothing of the bus: ``app.tui.listener`` matches the core's events and calls the
methods below. That keeps the event classes (and the store and agent packages behind
them) off the first frame's imports, as are the message widgets, which the empty chat of
the first frame does not need."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll

from app.tui import css_beside

if TYPE_CHECKING:
    from app.store.models import Message
    from app.tui.widgets.message_assistant import AssistantMessage
    from app.tui.widgets.message_notice import ChatNotice, NoticeKind
    from app.tui.widgets.task_view import TaskView
    from app.tui.widgets.tool_render import ToolCallView

ToolResult = tuple[str, dict[str, Any], bool]
CANCELLED_CALL = "Cancelled before it finished."
"""The result the chat gives a call still running when its turn is cancelled."""


class ChatLog(VerticalScroll):
    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session_id: str | None = None
        self._assistants: dict[str, AssistantMessage] = {}
        self._results: dict[str, ToolResult] = {}
        self._users: set[str] = set()
        self._subagents: dict[str, tuple[str, str, str]] = {}
        """Task call id -> (child session, agent, description), as the loop announced them."""
        self.shown_as: dict[str, str] = {}
        """Prompt sent -> how it read in the prompt (long pastes collapsed); the app fills
        it as it sends, so the chat shows a prompt as the user saw it."""

    def on_mount(self) -> None:
        self.anchor()

    async def show_session(self, session_id: str | None, messages: list[Message]) -> None:
        """Forget what is shown and draw a session's stored messages."""
        await self.remove_children()
        self._assistants.clear()
        self._results.clear()
        self._users.clear()
        self._subagents.clear()
        self.session_id = session_id
        for message in messages:
            await self.draw_message(message, finished=True)
        self.anchor()

    async def add_notice(self, text: str, kind: NoticeKind = "info") -> ChatNotice:
        from app.tui.widgets.message_notice import ChatNotice

        notice = ChatNotice(text, kind)
        await self.mount(notice)
        return notice

    async def append_text(self, message_id: str, text: str) -> None:
        await (await self._assistant(message_id)).append_text(text)

    async def append_reasoning(self, message_id: str, text: str) -> None:
        await (await self._assistant(message_id)).append_reasoning(text)

    async def add_tool_call(self, message_id: str, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        await (await self._assistant(message_id)).add_tool_call(call_id, tool, arguments)
        task = self._task_view(call_id)
        if task is not None and call_id in self._subagents:  # announced before its block was drawn
            task.started(*self._subagents[call_id])

    def link_subagent(self, call_id: str | None, child_session_id: str, agent: str, description: str) -> None:
        """A task call of this session started a sub-agent in ``child_session_id``."""
        if call_id is None:
            return
        self._subagents[call_id] = (child_session_id, agent, description)
        task = self._task_view(call_id)
        if task is not None:
            task.started(child_session_id, agent, description)

    def task_of(self, child_session_id: str | None) -> TaskView | None:
        """The block of the latest task call that ran ``child_session_id`` in this chat:
        a call with a ``task_id`` continues an earlier child, in a block of its own."""
        for call_id, (child, _, _) in reversed(self._subagents.items()):
            if child == child_session_id:
                return self._task_view(call_id)
        return None

    def _task_view(self, call_id: str) -> TaskView | None:
        from app.tui.widgets.task_view import TaskView  # loaded with the first reply, not the first frame

        view = self._tool_view(call_id)
        return view if isinstance(view, TaskView) else None

    @property
    def child_sessions(self) -> list[str]:
        """Every child session this chat's task calls started while it was shown."""
        return [child for child, _, _ in self._subagents.values()]

    async def finish_call(self, call_id: str, result: ToolResult) -> None:
        """A tool call's (output, metadata, error); kept for a view not drawn yet."""
        self._results.setdefault(call_id, result)
        view = self._tool_view(call_id)
        if view is not None:
            await view.finish(*result)

    async def draw_message(self, message: Message, *, finished: bool) -> None:
        """A stored message, as created or updated (``finished``: its final version)."""
        if message.role == "user":
            if message.id not in self._users:
                from app.tui.widgets.message_user import UserMessage

                self._users.add(message.id)
                text = "".join(p.get("text", "") for p in message.parts if p.get("type") == "text")
                attached = [p["path"] for p in message.parts if p.get("type") == "file"]
                await self.mount(
                    UserMessage(text, message_id=message.id, shown=self.shown_as.get(text), attached=attached)
                )
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
                await self.finish_call(str(part.get("call_id")), result)

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

    async def _reapply_results(self, assistant: AssistantMessage) -> None:
        for call_id, view in assistant.tool_views.items():
            if call_id in self._results:
                await view.finish(*self._results[call_id])

    def end_streams(self) -> None:
        """The turn is over: every streamed text is complete."""
        for assistant in self._assistants.values():
            assistant.end_text()

    async def cancel_running_calls(self) -> None:
        for assistant in self._assistants.values():
            for view in assistant.tool_views.values():
                await view.finish(CANCELLED_CALL, {}, True)
