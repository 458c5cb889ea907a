"""One prompt's events, relayed to the editor as ACP session updates, in bus order.

Text and reasoning deltas become message and thought chunks; the session's todo list,
each time todowrite changes it, a ``plan`` update; each tool call becomes a
``tool_call`` (pending) and ``tool_call_update``s (in_progress once it may run, then
completed or failed with its content). Within one session a writing call runs alone, so
the file versions history records for that session between its start and its end are
its changes: they become the diff content, each against the version before it.

Sub-agents' tool calls (the sessions a ``task`` of this prompt started, announced by
``SubagentStarted``) are relayed as tool calls of the editor's session: their title
starts with the sub-agent's name (``workhorse: edit a.py``) and their id with the child
session's, so two children's calls never share one. Their text stays in their own
session: the task's result carries their answer."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from acp.helpers import update_tool_call
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    Cost,
    TextContentBlock,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from app.acp.channel import ClientChannel
from app.acp.permissions import OPTIONS, headless_policy, reply_for, unanswered
from app.acp.updates import (
    created_paths,
    file_diff,
    image_content,
    output_content,
    plan_update,
    text_content,
    tool_kind,
    tool_locations,
    tool_title,
    without_image_data,
)
from app.bus import Event
from app.headless.run import progress_line
from app.llm.events import (
    TURN_PROGRESS,
    MentionRefused,
    ModelRetrying,
    ReasoningDelta,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageUpdated,
)
from app.permission import ApprovalMissing, PermissionGranted, PermissionRequest, PermissionRequested
from app.permission.rules import permission_key
from app.runtime import Runtime
from app.store.events import FileVersionCreated, TodosUpdated
from app.store.history import INITIAL

log = logging.getLogger(__name__)
SUBAGENT_RELAYED = (ToolCallStarted, ToolCallFinished, FileVersionCreated, PermissionGranted)
"""What of a sub-agent's session reaches the editor: its tool calls and their changes."""
RELAYED = (
    *TURN_PROGRESS, FileVersionCreated, PermissionRequested, PermissionGranted, TodosUpdated, ApprovalMissing,
)


class TurnRelay:
    """Started before the loop runs a prompt; ``finish()`` after it returns sends what
    is still queued, so every update precedes the prompt's response."""

    def __init__(self, runtime: Runtime, channel: ClientChannel, session_id: str) -> None:
        self._runtime = runtime
        self._channel = channel
        self._session_id = session_id
        self._subscription = runtime.bus.subscribe(*RELAYED)
        self._open_calls: dict[str, ToolCallStarted] = {}
        """Relayed id -> the call, while it runs (sub-agents' calls too)."""
        self._changes: dict[str, list[FileVersionCreated]] = {}
        self._subagents: dict[str, str] = {}
        """Child session -> its sub-agent's name, for the tasks this prompt started."""
        self._questions: set[asyncio.Task[None]] = set()
        self.unapproved: list[ApprovalMissing] = []
        """Calls of this session (and its sub-agents) refused for want of approval."""
        self._pump = asyncio.create_task(self._relay())

    async def finish(self) -> None:
        self._subscription.close()
        await self._pump
        for question in list(self._questions):
            question.cancel()
        await asyncio.gather(*self._questions, return_exceptions=True)

    async def _relay(self) -> None:
        async for event in self._subscription:
            try:
                await self._send_for(event)
            except Exception:  # a frame the editor rejects must not stop the turn's others
                log.exception("could not relay %s", type(event).__name__)

    async def _send_for(self, event: Event) -> None:
        if isinstance(event, PermissionRequested):
            if self._owns(event.request.session_id):
                task = asyncio.create_task(self._ask(event))
                self._questions.add(task)
                task.add_done_callback(self._questions.discard)
            return
        if isinstance(event, ApprovalMissing):
            if self._owns(event.session_id):
                self.unapproved.append(event)
            return
        if isinstance(event, SubagentStarted):
            if event.session_id == self._session_id or event.session_id in self._subagents:
                self._subagents[event.child_session_id] = event.agent
            return
        session_id = getattr(event, "session_id", None)
        if session_id != self._session_id and not (
            session_id in self._subagents and isinstance(event, SUBAGENT_RELAYED)
        ):
            return  # other sessions' events, and sub-agents' text and usage, stay where they are
        update = self._update_for(event)
        if update is not None:
            await self._channel.update(self._session_id, _with_progress(update, progress_line(event, self._session_id)))

    def _update_for(self, event: Event) -> Any:
        match event:
            case TextDelta(text=text):
                return AgentMessageChunk(session_update="agent_message_chunk", content=_text(text))
            case ReasoningDelta(text=text):
                return AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(text))
            case ModelRetrying():  # why nothing streams yet
                line = progress_line(event, self._session_id) or ""
                return AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(f"{line}\n"))
            case MentionRefused(line=line):  # before the turn's first words: its own paragraph
                meta = {"opencode": {"mentionRefused": line}}  # so a -p attached to opencode serve says it on stderr
                return AgentMessageChunk(
                    session_update="agent_message_chunk", content=_text(f"{line}\n\n"), field_meta=meta
                )
            case ToolCallStarted():
                relayed = self._relayed_id(event.session_id, event.call_id)
                self._open_calls[relayed] = event
                self._changes[relayed] = []
                return self._started(event)
            case PermissionGranted():
                return self._running(event)
            case FileVersionCreated() if event.version != INITIAL:
                for relayed, changes in self._changes.items():
                    if self._open_calls[relayed].session_id == event.session_id:
                        changes.append(event)
                return None
            case ToolCallFinished():
                return self._finished(event)
            case TodosUpdated(todos=todos):
                return plan_update(todos)
            case UsageUpdated():
                return UsageUpdate(
                    session_update="usage_update",
                    used=event.prompt_tokens + event.completion_tokens,
                    size=event.context_window,
                    cost=Cost(amount=event.cost, currency="USD"),
                )
        return None

    def _relayed_id(self, session_id: str, call_id: str) -> str:
        """A call's id for the editor: its own in this session, prefixed with the child
        session's id for a sub-agent's call."""
        return call_id if session_id == self._session_id else f"{session_id}/{call_id}"

    def _started(self, event: ToolCallStarted) -> ToolCallStart:
        tool = self._runtime.tools.get(event.tool)
        title = tool_title(event.tool, event.arguments)
        subagent = self._subagents.get(event.session_id)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=self._relayed_id(event.session_id, event.call_id),
            title=f"{subagent}: {title}" if subagent else title,
            kind=tool_kind(event.tool, event.arguments),
            status="in_progress" if tool is not None and tool.read_only else "pending",
            locations=tool_locations(self._runtime.root, event.arguments),
            raw_input=event.arguments,
        )

    def _running(self, event: PermissionGranted) -> Any:
        """A pending call (one that changes things) allowed with no question: in_progress,
        as after a question answered yes. Read-only calls started in_progress already."""
        calls = [
            relayed
            for relayed, call in self._open_calls.items()
            if call.tool == event.tool and call.session_id == event.session_id
        ]
        tool = self._runtime.tools.get(event.tool)
        if not calls or (tool is not None and tool.read_only):
            return None
        return update_tool_call(calls[-1], status="in_progress")

    def _finished(self, event: ToolCallFinished) -> Any:
        relayed = self._relayed_id(event.session_id, event.call_id)
        self._open_calls.pop(relayed, None)
        changes = self._changes.pop(relayed, [])
        created = created_paths(event.metadata)
        diffs = [self._diff(change, change.path in created) for change in changes]
        content = diffs or [output_content(event.output)]
        if diffs and event.output:
            content.append(output_content(event.output))
        if isinstance(image := event.metadata.get("image"), dict):
            content.append(image_content(image))
        return update_tool_call(
            relayed,
            status="failed" if event.error else "completed",
            content=content,
            raw_output={"output": event.output, "metadata": without_image_data(event.metadata)},
        )

    def _diff(self, change: FileVersionCreated, created: bool) -> Any:
        versions = self._runtime.store.history.versions(change.session_id, change.path)
        index = next(i for i, version in enumerate(versions) if version.version == change.version)
        previous = versions[index - 1] if index else None
        return file_diff(self._runtime.root, previous, versions[index], created=created)

    def _owns(self, session_id: str) -> bool:
        """Questions of this session and of its sub-agents' child sessions."""
        sessions = self._runtime.store.sessions
        while session_id != self._session_id:
            session = sessions.get(session_id)
            if session is None or session.parent_id is None:
                return False
            session_id = session.parent_id
        return True

    async def _ask(self, event: PermissionRequested) -> None:
        """One question to the editor. The answer is sent to the service after the
        in_progress update, so that update precedes the call's own results."""
        request = event.request
        asking = self._call_asking(request)
        call = self._open_calls[asking] if asking else None
        call_id = asking or f"permission-{event.request_id}"
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=f"{request.agent} · {request.task}: {request.title}" if request.task else request.title,
            kind=tool_kind(call.tool, call.arguments) if call else tool_kind(request.tool, {}),
            status="pending",
            content=[*([text_content(request.preview.text)] if request.preview.text else []), _covers(request)],
            raw_input=call.arguments if call else {"subject": request.subject},
        )
        try:
            answer = await self._channel.request_permission(self._session_id, tool_call, OPTIONS)
            policy = headless_policy(answer)
            reply = self._runtime.permissions.headless_reply(request, policy) if policy else reply_for(answer)
        except Exception as error:  # an error answer or a lost editor: the call must not wait forever
            log.warning("permission question %s got no answer: %s", call_id, error)
            reply = unanswered(error)
        if reply.allowed and call is not None:
            await self._channel.update(self._session_id, update_tool_call(call_id, status="in_progress"))
        self._runtime.permissions.reply(event.request_id, reply, session_id=self._session_id)

    def _call_asking(self, request: PermissionRequest) -> str | None:
        """The relayed id of the open call that asked, among its session's calls. A
        writing call runs alone in its session, so its tool names it; read-only calls run
        together, so among them the one about the asked path wins, and a read outside the
        workspace (asked as external_directory) is found by that path alone."""
        calls = [
            (relayed, call) for relayed, call in self._open_calls.items() if call.session_id == request.session_id
        ]
        same_tool = [(relayed, call) for relayed, call in calls if permission_key(call.tool) == request.tool]
        about = [(relayed, call) for relayed, call in calls if request.absolute in self._locations(call)]
        matching = [pair for pair in same_tool if pair in about] or same_tool or about
        return matching[-1][0] if matching else None

    def _locations(self, call: ToolCallStarted) -> set[str]:
        return {location.path for location in tool_locations(self._runtime.root, call.arguments)}


def _covers(request: PermissionRequest) -> ContentToolCallContent:
    """The line saying what "Allow for this session" (allow_always) would cover."""
    covered, others = request.session_covers()
    return text_content(f"Allow for this session covers {covered}; {others} still ask.")


def _with_progress(update: Any, line: str | None) -> Any:
    """The update with ``_meta.opencode.progress``, the line ``opencode -p`` prints on
    stderr for the same event (app.headless.run.progress_line), so a -p attached to
    ``opencode serve`` prints exactly what it would in-process."""
    if line is not None:
        meta = update.field_meta or {}
        update.field_meta = {**meta, "opencode": {**meta.get("opencode", {}), "progress": line}}
    return update


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)
