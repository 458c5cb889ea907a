"""The agent loop: a prompt in, a model that streams and calls tools, until it stops.

One turn: store the user's prompt; then per step build the request (system prompt,
project instructions, the history since the last compaction), stream the answer
(publishing deltas, persisting the message at most every ``flush_interval``), run the
tool calls it asked for, store their results, and go again, until the model answers
without calls or ``max_steps`` responses were used. Every turn ends with exactly one of
TurnFinished, TurnFailed or TurnCancelled on the bus, and the session's history is valid
for the next prompt whatever happened.

The provider is anything with the litellm Provider's ``stream(...)``: the real one or
the ScriptedProvider. This module imports neither litellm nor textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from collections.abc import AsyncGenerator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Unpack

from app.agents.catalog import Agent, configured_model, tools_for
from app.core.errors import OpencodeError, ToolError
from app.core.images import Image, ImageError, Mention, image_mentions
from app.llm import compaction
from app.llm.call_arguments import arguments_for_display
from app.llm.chat_history import ChatHistories
from app.llm.context import allowed_outside, build_system_prompt
from app.llm.context_size import ContextSize, measure
from app.llm.events import (
    MentionRefused,
    ModelRetrying,
    ReasoningDelta,
    SessionCompacted,
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
from app.llm.hook_steps import (
    calls_hooked,
    context_part,
    notify,
    prompt_context,
    run_hooked_call,
    stop_refused,
)
from app.llm.messages import (
    CANCELLED_OUTPUT,
    Part,
    estimate_tokens,
    signed_reasoning_part,
    since_summary,
    text_part,
    to_chat,
    tool_call_part,
    tool_result_part,
)
from app.llm.models import ONBOARDING_NOTE, Route, StreamOptions, choose_model, route_for
from app.llm.preflight import model_problem
from app.llm.provider import Finish, ProviderError, Retrying, StreamEvent, ThinkingBlock, ToolCall, Usage
from app.llm.provider import ReasoningDelta as StreamedReasoning
from app.llm.provider import TextDelta as StreamedText
from app.llm.provider import context_window as litellm_context_window
from app.llm.provider import supports_vision as litellm_supports_vision
from app.llm.streamed import StreamedMessage
from app.llm.title import fallback_title, title_from_reply, title_request
from app.llm.tool_calls import MAX_CALLS_PER_MESSAGE, MAX_CONCURRENT_CALLS, batches, execute, over_the_cap
from app.llm.transcript import Transcripts
from app.permission.hook_decision import hook_decision
from app.prompt.mentions import attach_images, attach_mentions
from app.runtime import Runtime
from app.store.models import Session
from app.tools.base import Tool
from app.tools.skill import SkillTool
from app.tools.task import SubagentTask, TaskTool

DEFAULT_MAX_STEPS = 50
SKIPPED_OUTPUT = "skipped: an earlier call in this message was denied"


class ModelProvider(Protocol):
    """What the loop needs from a provider. One may also define ``context_window(model)``
    and ``supports_vision(model)``; otherwise litellm's model map answers."""

    def stream(
        self, *, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
        **options: Unpack[StreamOptions],
    ) -> AsyncGenerator[StreamEvent, None]: ...


class ModelNotConfiguredError(OpencodeError):
    """No --model, no agent model in config and no provider key in the environment."""


class ModelNotUsableError(OpencodeError):
    """The chosen model cannot be served as configured: litellm does not know its name,
    or its provider has no API key. Found before any request, so nothing is retried."""


class SessionBusyError(OpencodeError):
    """A turn is already running in this session."""


class NothingToCompactError(OpencodeError):
    """Compaction was asked for, but nothing was said since the last summary."""


@dataclass(frozen=True)
class TurnResult:
    response: str
    usage: dict[str, int]
    """{"prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"}
    summed over this turn's model calls (prompt tokens include the cached ones)."""
    cost: float
    files_changed: list[str]
    """Workspace paths whose history got a new version during the turn (sub-agents included)."""
    reason: str
    """stop, length, max_steps, cancelled or failed."""
    error: str | None = None
    files_deleted: list[str] = field(default_factory=list)
    """Of ``files_changed``, those the turn left deleted (their latest version is a deletion)."""


@dataclass
class _Turn:
    session_id: str
    agent: str
    model: str
    route: Route
    tools: dict[str, Tool]
    specs: list[dict[str, Any]]
    """The tools' definitions as sent to the model."""
    options: StreamOptions
    """The route's keywords for provider.stream, with the agent's max_tokens and reasoning_effort."""
    context_tokens: int
    """The size of the next request as far as known: the last response's token count plus
    an estimate of what was added since (tool results, a new prompt); 0 when unknown."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    response: str = ""
    compacted: bool = False
    message: StreamedMessage | None = None
    """The assistant message being streamed, until it is closed."""
    calls_message_id: str = ""
    """The assistant message that asked for the current calls."""
    calls: list[ToolCall] = field(default_factory=list)
    """The calls of the current step, while they run."""
    outside_context: frozenset[Path] = frozenset()
    """The instructions files outside the workspace this turn may read (see app.llm.context)."""
    vision: bool = False
    """Whether the model takes images (view may then return one)."""
    results: dict[str, Part] = field(default_factory=dict)
    """call id -> tool_result part, for the calls of the current step that finished."""
    stop_hook_active: bool = False
    """A Stop hook already made the model go on in this turn."""


@dataclass
class _Active:
    task: asyncio.Task
    model: str
    agent: str
    cancel_requested: bool = False
    cancellations_before: int = 0
    """The task's pending cancellations when the turn began: more than these, once ours
    is taken back, means its caller is cancelling it too."""
    turn: _Turn | None = None
    """The turn running, once it has begun (its sub-agents' usage is added to it)."""


class AgentLoop:
    """Built once per front-end from a runtime and a provider; runs turns in sessions.

    ``max_steps`` caps model responses per turn. ``flush_interval`` is how often (seconds)
    a streaming message is written to the store. ``env`` is where provider keys are
    looked up (os.environ by default)."""

    def __init__(
        self,
        runtime: Runtime,
        provider: ModelProvider,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        flush_interval: float = 0.1,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.runtime = runtime
        self.provider = provider
        self.max_steps = max_steps
        self.flush_interval = flush_interval
        self._env = os.environ if env is None else env
        self._tools: dict[str, Tool] = {
            **runtime.tools, TaskTool.name: TaskTool(self, runtime.agents), SkillTool.name: SkillTool(lambda: runtime.skills)
        }
        self._transcripts = Transcripts(runtime.store.messages, runtime.bus)
        self._histories = ChatHistories()
        self._active: dict[str, _Active] = {}
        self._background: set[asyncio.Task] = set()
        self._windows: dict[str, int] = {}
        self._vision: dict[str, bool] = {}
        self._context_tokens: dict[str, tuple[int, int]] = {}
        """session id -> (the provider's count of its context, Transcripts.reshaped then)."""
        self._specs: dict[str, dict[str, Any]] = {}
        """Tool name -> definition: building a JSON schema costs about a millisecond."""
        self._task_agents: dict[str, str] = {}
        self._steering: dict[str, list[str]] = {}
        """session id -> messages for its running turn, delivered at its next tool boundary."""
        """Child session -> the sub-agent it runs, for the tasks started by this loop."""
        self._sessions: set[str] = set()
        """The sessions this loop ran turns in (SessionEnd hooks run at close for each that
        is not a task's)."""
        self._notifying: asyncio.Task | None = None
        """Runs the Notification hooks, once one is declared and a turn ran."""

    # -- public API ------------------------------------------------------------------------

    def resolve_model(self, agent: str, model: str | None = None) -> str:
        """--model, else the agent's model (config, or its agent file), else the first
        provider with a key."""
        chosen = choose_model(model, self._agent_model(agent), self._env, self.runtime.config.providers)
        if chosen is None:
            raise ModelNotConfiguredError(ONBOARDING_NOTE)
        return chosen

    def usable_model(self, agent: str, model: str | None = None) -> str:
        """``resolve_model``, refused before any request when litellm does not know the
        name or the provider has no API key (ModelNotUsableError, one line)."""
        chosen = self.resolve_model(agent, model)
        problem = model_problem(chosen, self.runtime.config.providers, self._env)
        if problem is not None:
            raise ModelNotUsableError(problem)
        return chosen

    async def run(
        self,
        session_id: str,
        prompt: str,
        *,
        agent: str = "coder",
        model: str | None = None,
        confined: bool = False,
    ) -> TurnResult:
        """One turn of ``agent`` in an existing session. Model failures end the turn with
        reason "failed" (and TurnFailed); cancelling through ``cancel`` returns reason
        "cancelled"; cancelling the task itself saves the same state and re-raises.
        ``confined``: the prompt is a repository's command template, whose mentions
        attach files inside the workspace only."""
        self.runtime.agents.get(agent)
        session = self._idle_session(
            session_id,
            busy="is already running a turn: wait for it or cancel it",
            missing="create it before sending a prompt",
        )
        model = self.usable_model(agent, model)
        if session.kind == "tool":  # talked in, an `opencode tool` call's session is a conversation now
            self.runtime.store.sessions.update(session_id, kind="chat")
        mentioned = await self._image_mentions(prompt, model)  # refused before anything is stored or sent
        await self.runtime.mcp.wait_ready()  # a server still connecting would miss this turn
        with self._running(session_id, model, agent) as active:
            files, images = await self._mentions(session_id, agent, prompt, mentioned, confined)
            hooks = self.runtime.hooks
            self._sessions.add(session_id)
            await self._transcripts.load(session_id)
            if hooks.declared("Notification") and self._notifying is None:
                self._notifying = asyncio.create_task(notify(hooks, self.runtime.bus, self._task_agents.__contains__))
            new_session = hooks.declared("SessionStart") and not self._transcripts.list(session_id)
            files += await prompt_context(hooks, session_id, prompt, new_session=new_session)
            first_prompt = not session.title and not self._transcripts.list(session_id)
            store = self.runtime.store
            asked = store.messages.add(
                session_id, "user", [text_part(prompt), *files, *(image.part() for image in images)]
            )
            record = store.turns.begin(session_id, asked.id)  # what /undo takes back (app/prompt/turn_undo.py)
            if first_prompt:
                self._in_background(self._generate_title(session_id, prompt, model))
            try:
                # What the request grows by: the prompt and the files it attached.
                grown = prompt + "".join(part["text"] for part in files)
                turn = active.turn = self._new_turn(session_id, agent, model, grown)
                turn.vision = await self._takes_images(turn.route)
                return await self._turn(turn, active)
            finally:
                store.turns.end(record.id)
                self.runtime.skills.end_turn(session_id)

    async def compact(self, session_id: str, *, model: str | None = None, agent: str = "coder") -> str:
        """Condense the session's history now (the palette's "compact"), as auto-compaction
        would; returns the summary message's id. Refused while a turn runs in the session
        and when nothing was said since the last summary."""
        session = self._idle_session(
            session_id,
            busy="is running a turn: wait for it or cancel it, then compact",
            missing="nothing to compact",
        )
        since = since_summary(self._transcripts.list(session_id), session.summary_message_id)
        if not [message for message in since if message.id != session.summary_message_id]:
            raise NothingToCompactError(
                "Nothing to compact yet: the session has no messages since its last summary"
            )
        model = self.usable_model(agent, model)
        with self._running(session_id, model, agent):
            turn = self._new_turn(session_id, agent, model, "")
            turn.context_tokens = 0
            await self._compact(turn, trigger="manual")
        self._context_tokens.pop(session_id, None)  # unknown until the next response
        compacted = self.runtime.store.sessions.get(session_id)
        assert compacted is not None and compacted.summary_message_id is not None, "compaction wrote a summary"
        return compacted.summary_message_id

    async def context_size(self, session_id: str, *, agent: str = "coder", model: str | None = None) -> ContextSize:
        """The size of the session's next request by part, as the compaction decision
        measures it (without the next prompt): ``/context`` and the status bar."""
        turn = self._new_turn(session_id, agent, self.resolve_model(agent, model), "")
        turn.vision = await self._takes_images(turn.route)  # the history as a turn would send it
        return await self._measure(turn, *(await self._messages(turn)))

    async def _measure(self, turn: _Turn, messages: list[dict[str, Any]], history_tokens: int) -> ContextSize:
        mcp = {name for name in turn.tools if name not in self._tools}  # a built-in keeps its name over an MCP tool
        window = await self._window(turn.route)
        return measure(
            messages, turn.specs, mcp, counted=turn.context_tokens, window=window, history_tokens=history_tokens
        )

    def _counted(self, session_id: str) -> int:
        """The provider's last count of the session's context; 0 when there is none or
        messages left or came back since (an undo, a redo, a rewind)."""
        tokens, reshaped = self._context_tokens.get(session_id, (0, 0))
        return tokens if reshaped == self._transcripts.reshaped(session_id) else 0

    def _idle_session(self, session_id: str, *, busy: str, missing: str) -> Session:
        """The session, when it exists and runs no turn; else the error, saying ``busy``
        or ``missing``."""
        if session_id in self._active:
            raise SessionBusyError(f"session {session_id} {busy}")
        session = self.runtime.store.sessions.get(session_id)
        if session is None:
            raise OpencodeError(f"session {session_id} does not exist: {missing}")
        return session

    @contextlib.contextmanager
    def _running(self, session_id: str, model: str, agent: str) -> Iterator[_Active]:
        """The session counts as busy (and cancellable) for the block, run by the current task."""
        task = asyncio.current_task()
        assert task is not None, "the agent loop runs inside a task"
        self._active[session_id] = active = _Active(task, model, agent, cancellations_before=task.cancelling())
        try:
            yield active
        finally:
            del self._active[session_id]

    def cancel(self, session_id: str) -> bool:
        """Stop the session's running turn (stream, tools, pending permission questions).
        Returns False when no turn is running there."""
        active = self._active.get(session_id)
        if active is None:
            return False
        if not active.cancel_requested:  # once: a second cancellation would read as the caller's
            active.cancel_requested = True
            active.task.cancel()
        self.runtime.permissions.cancel_session(session_id)
        return True

    def steer(self, session_id: str, text: str) -> bool:
        """Give the running turn of ``session_id`` the user's ``text``: it is stored as a
        user message once the current tool calls are done (or the model has answered),
        and the model reads it before its next step. False when no turn runs there."""
        if session_id not in self._active:
            return False
        self._steering.setdefault(session_id, []).append(text)
        return True

    def take_steering(self, session_id: str) -> list[str]:
        """The messages ``steer`` took that the turn ended before delivering (cancelled,
        failed): the front-end keeps them for the user."""
        return self._steering.pop(session_id, [])

    def is_running(self, session_id: str) -> bool:
        return session_id in self._active

    async def run_subagent(self, task: SubagentTask) -> tuple[str, TurnResult]:
        """Run the task's agent in a child session of its parent: a new one, or the earlier
        child ``task_id`` (checked with ``task_agent``), which goes on with its history. Its
        model is the agent's own (config, agent file), else the parent turn's. The child's
        usage and cost are added to the parent's turn."""
        parent_session_id, agent, title = task.parent_session_id, task.agent, task.title
        parent = self._active.get(parent_session_id)
        model = self._agent_model(agent) or (parent.model if parent else None)
        if task.task_id is not None:
            self.task_agent(parent_session_id, task.task_id)
            child_id = task.task_id
        else:
            child_id = self.runtime.store.sessions.create(title=title, parent_id=parent_session_id).id
        self._task_agents[child_id] = agent
        # The child's rules are its own agent's, narrowed by every deny of the agents above it;
        # its questions name its task.
        self.runtime.permissions.inherit(
            child_id, parent_session_id, parent.agent if parent else "coder", title
        )
        self.runtime.bus.publish(SubagentStarted(parent_session_id, task.call_id, child_id, agent, title))
        with hook_decision(None):  # the task call's own hook answer is not its child's
            result = await self.run(child_id, task.prompt, agent=agent, model=model)
        if parent is not None and parent.turn is not None:
            _add_child_usage(parent.turn, result)
        return child_id, result

    def task_agent(self, parent_session_id: str, task_id: str) -> str:
        """The sub-agent the earlier task ``task_id`` of this parent ran (from this loop's
        memory, else from the parent's stored task results); ToolError, one line, for an
        id that is not a child session of this parent."""
        child = self.runtime.store.sessions.get(task_id)
        if child is None or child.parent_id != parent_session_id:
            raise ToolError(
                f"task: {task_id} is not a task_id of this session: pass one a task result of "
                "this session gave, or omit task_id to start a new task"
            )
        agent = self._task_agents.get(task_id) or self._stored_task_agent(parent_session_id, task_id)
        if agent is None:
            raise ToolError(
                f"task: task {task_id} has no recorded sub-agent: omit task_id to start a new task"
            )
        return agent

    def _stored_task_agent(self, parent_session_id: str, task_id: str) -> str | None:
        """The subagent_type the parent's stored task result for ``task_id`` names."""
        for message in reversed(self.runtime.store.messages.list(parent_session_id)):
            for part in message.parts:
                metadata = part.get("metadata") if part.get("type") == "tool_result" else None
                if isinstance(metadata, dict) and metadata.get("task_id") == task_id:
                    agent = metadata.get("subagent_type")
                    return agent if isinstance(agent, str) else None
        return None

    def _agent_model(self, agent: str) -> str | None:
        return configured_model(self.runtime.config, self._agent(agent))

    async def wait_background(self) -> None:
        """Wait for background work (session titles) to finish."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def aclose(self) -> None:
        """Run the SessionEnd hooks, cancel background work and stop following the store;
        call at shutdown."""
        if self._sessions and self.runtime.hooks.declared("SessionEnd"):
            hooks = self.runtime.hooks
            for session_id in sorted(self._sessions - self._task_agents.keys()):  # conversations, not tasks
                ended = await hooks.run("SessionEnd", session_id=session_id, reason="other")
                hooks.announce(session_id, ended.shown)
        if self._notifying is not None:
            self._notifying.cancel()
            await asyncio.gather(self._notifying, return_exceptions=True)
        for task in list(self._background):
            task.cancel()
        await self.wait_background()
        self._transcripts.close()

    # -- one turn --------------------------------------------------------------------------

    def _new_turn(self, session_id: str, agent: str, model: str, prompt: str) -> _Turn:
        settings = self.runtime.config.agents.get(agent)
        route = self._route(model)
        thinks = route.facts.reasoning is not False  # a model configured as not reasoning gets no effort
        options = route.stream_options()
        # The agent's own settings win over the model's configured maxOutput.
        if settings and settings.max_tokens is not None:
            options["max_tokens"] = settings.max_tokens
        if settings and thinks and settings.reasoning_effort is not None:
            options["reasoning_effort"] = settings.reasoning_effort
        tools = tools_for(self._agent(agent), self._tools, self.runtime.mcp.tools())
        if not self.runtime.skills.skills:  # nothing to load: the tool is not offered
            tools.pop(SkillTool.name, None)
        for name, tool in tools.items():
            if name not in self._specs:
                self._specs[name] = tool.spec()
        return _Turn(
            session_id=session_id,
            agent=agent,
            model=model,
            route=route,
            tools=tools,
            specs=[self._specs[name] for name in tools],
            options=options,
            context_tokens=_grown(self._counted(session_id), prompt),
        )

    async def _turn(self, turn: _Turn, active: _Active) -> TurnResult:
        bus = self.runtime.bus
        before = self._latest_versions(turn.session_id)
        bus.publish(TurnStarted(turn.session_id, turn.agent, turn.model))
        try:
            reason = await self._steps(turn)
        except asyncio.CancelledError:
            self._save_cancelled(turn)
            bus.publish(TurnCancelled(turn.session_id))
            # ``cancel`` ends the turn as "cancelled" and the task goes on. When its caller
            # cancelled the task as well (a connection closing while the turn stops), the
            # two may arrive as one CancelledError: the task must still end.
            if not active.cancel_requested or active.task.uncancel() > active.cancellations_before:
                raise
            return self._result(turn, before, "cancelled")
        except OpencodeError as err:
            self._end_marker(turn, "failed", error=str(err))
            bus.publish(TurnFailed(turn.session_id, str(err)))
            return self._result(turn, before, "failed", error=str(err))
        except Exception as err:
            # A bug, not a model failure: front-ends must still see the turn end.
            message = f"internal error ({type(err).__name__}: {err}): please report it"
            self._end_marker(turn, "failed", error=message)
            bus.publish(TurnFailed(turn.session_id, message))
            raise
        bus.publish(TurnFinished(turn.session_id, turn.response, reason))
        return self._result(turn, before, reason)

    async def _steps(self, turn: _Turn) -> str:
        """Model responses and tool rounds until the model stops; returns the turn's reason."""
        if self._agent(turn.agent).conversational:
            runtime = self.runtime
            turn.outside_context = await allowed_outside(
                runtime.root, runtime.config, runtime.permissions, turn.session_id, turn.agent
            )
        for _ in range(self.max_steps):
            request = await self._request(turn)
            try:
                finish, calls = await self._stream(turn, request)
            except ProviderError as err:
                if err.kind != "context_length" or not self._can_compact(turn):
                    raise
                await self._compact(turn)  # the provider counted more than we did: compact, retry
                finish, calls = await self._stream(turn, await self._request(turn))
            if not calls:
                if self._deliver_steering(turn):
                    continue  # the model had finished: it reads the message and goes on
                if not await self._stop_refused(turn):
                    return finish
                continue
            await self._run_calls(turn, calls)
            self._deliver_steering(turn)
        self._end_marker(turn, "max_steps")
        return "max_steps"

    async def _stop_refused(self, turn: _Turn) -> bool:
        """Whether a Stop (SubagentStop) hook makes the model go on: its reason is then
        added to the conversation for the next step."""
        reason = await stop_refused(
            self.runtime.hooks, turn.session_id, subagent=turn.session_id in self._task_agents,
            active=turn.stop_hook_active,
        )  # fmt: skip
        if reason is None:
            return False
        turn.stop_hook_active = True
        part = context_part("Stop hook", f"A Stop hook asks you to go on before stopping: {reason}")
        self.runtime.store.messages.add(turn.session_id, "user", [part])
        turn.context_tokens = _grown(turn.context_tokens, part["text"])
        return True

    async def _request(self, turn: _Turn) -> list[dict[str, Any]]:
        """The messages of the next request, compacting the history first when it fills
        90% of the model's window."""
        messages, history_tokens = await self._messages(turn)
        size = await self._measure(turn, messages, history_tokens)
        tokens, window = size.total, size.window
        if not compaction.needs_compaction(tokens, window):
            return messages
        if turn.compacted:
            raise compaction.CompactionError(
                f"The conversation is still too long for {turn.model} after compacting "
                f"({tokens} of {window} tokens): start a new session"
            )
        if not self._can_compact(turn):
            return messages  # autoCompact is off: let the provider decide
        await self._compact(turn)
        return (await self._messages(turn))[0]

    async def _messages(self, turn: _Turn) -> tuple[list[dict[str, Any]], int]:
        """System prompt and the history the model sees (from the last summary on), and
        the history's token estimate. The history is extended from the last request's
        (app.llm.chat_history)."""
        await self._transcripts.load(turn.session_id)
        session = self.runtime.store.sessions.get(turn.session_id)
        skills = self.runtime.skills.summaries() if SkillTool.name in turn.tools else ()
        system = build_system_prompt(
            self._agent(turn.agent), self.runtime.root, self.runtime.config, turn.outside_context, skills
        )
        history = await self._histories.build(
            turn.session_id,
            self._transcripts.list(turn.session_id),
            session.summary_message_id if session else None,
            model=turn.model,
            vision=turn.vision,
        )
        return [{"role": "system", "content": system}, *history.messages], history.tokens

    async def _image_mentions(self, prompt: str, model: str) -> list[Mention]:
        """The images the prompt names (@shot.png, a pasted path) that exist; ImageError,
        in one line, for an @image that does not or a model without vision."""
        mentions = []
        for mention in image_mentions(prompt):
            path = Path(mention.path).expanduser()
            path = path if path.is_absolute() else self.runtime.root / path
            if path.is_file():
                mentions.append(mention)
            elif mention.explicit:
                raise ImageError(f"{mention.path} does not exist: check the path after @")
        if mentions and not await self._takes_images(self._route(model)):
            raise ImageError(
                f"{model} does not take images, so {mentions[0].path} was not sent: "
                "choose a vision model (--model) or leave the image out"
            )
        return mentions

    async def _mentions(
        self, session_id: str, agent: str, prompt: str, images: list[Mention], confined: bool
    ) -> tuple[list[Part], list[Image]]:
        """The parts of the files and folders the prompt mentions (``@path``), and the
        ``images`` it names, each read as ``view`` reads it (app.prompt.mentions); each
        mention refused is announced as MentionRefused. ``confined``: the prompt is a
        repository's command template, whose mentions never reach outside the workspace."""
        context = self.runtime.context(session_id, agent, vision=True)
        attachments, refusals = await attach_mentions(prompt, context, self._tools, confined=confined)
        read, refused = await attach_images(images, context, self._tools["view"], confined=confined)
        for refusal in [*refusals, *refused]:
            self.runtime.bus.publish(MentionRefused(session_id, refusal.path, refusal.line))
        return [attachment.part() for attachment in attachments], read

    async def _takes_images(self, route: Route) -> bool:
        """The configured vision flag of the model, else litellm's model map."""
        if route.facts.vision is not None:
            return route.facts.vision
        if route.model not in self._vision:
            lookup = getattr(self.provider, "supports_vision", litellm_supports_vision)
            self._vision[route.model] = await asyncio.to_thread(lookup, route.litellm_model)
        return self._vision[route.model]

    def _route(self, model: str) -> Route:
        return route_for(model, self.runtime.config.providers, self._env)

    async def _stream(self, turn: _Turn, messages: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        """One model response, streamed into a new assistant message."""
        bus = self.runtime.bus
        message = turn.message = StreamedMessage(
            self.runtime.store.messages, turn.session_id, turn.model, self.flush_interval
        )
        finish = "stop"
        calls: list[ToolCall] = []
        call_ids: set[str] = set()
        thinking: list[ThinkingBlock] = []
        if turn.route.problem:
            raise ProviderError(turn.route.problem, "auth")
        stream = self.provider.stream(
            model=turn.model, messages=messages, tools=turn.specs or None, **turn.options
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if isinstance(event, StreamedText):
                    message.append_text("text", event.text)
                    bus.publish(TextDelta(turn.session_id, message.ensure(), event.text))
                elif isinstance(event, StreamedReasoning):
                    message.append_text("reasoning", event.text)
                    bus.publish(ReasoningDelta(turn.session_id, message.ensure(), event.text))
                elif isinstance(event, ToolCall):
                    # Some local servers send no id, or one id for several calls; each
                    # result needs an id of its own to pair with its call.
                    if not event.id or event.id in call_ids:
                        event = dataclasses.replace(event, id=f"call_{uuid.uuid4().hex[:16]}")
                    calls.append(event)
                    call_ids.add(event.id)
                    message.parts.append(tool_call_part(event.id, event.name, event.arguments))
                elif isinstance(event, ThinkingBlock):
                    thinking.append(event)
                elif isinstance(event, Usage):
                    await self._add_usage(turn, event)
                elif isinstance(event, Finish):
                    finish = event.reason
                elif isinstance(event, Retrying):
                    bus.publish(ModelRetrying(turn.session_id, event.attempt, event.delay, event.reason))
        if thinking:
            message.sign_reasoning(
                [signed_reasoning_part(block.text, block.signature, block.redacted) for block in thinking]
            )
        turn.response = message.text or turn.response
        turn.calls = calls
        turn.calls_message_id = message.close(finish)
        turn.message = None
        return finish, calls

    async def _add_usage(self, turn: _Turn, usage: Usage) -> None:
        turn.prompt_tokens += usage.prompt_tokens
        turn.completion_tokens += usage.completion_tokens
        turn.cache_read_tokens += usage.cache_read_tokens
        turn.cache_write_tokens += usage.cache_write_tokens
        turn.cost += usage.cost
        turn.context_tokens = usage.prompt_tokens + usage.completion_tokens
        self._context_tokens[turn.session_id] = (turn.context_tokens, self._transcripts.reshaped(turn.session_id))
        session = self.runtime.store.sessions.add_usage(
            turn.session_id, usage.prompt_tokens, usage.completion_tokens, usage.cost
        )
        self.runtime.bus.publish(
            UsageUpdated(
                turn.session_id,
                usage.prompt_tokens,
                usage.completion_tokens,
                session.cost,
                await self._window(turn.route),
                usage.cache_read_tokens,
                usage.cache_write_tokens,
            )
        )

    async def _window(self, route: Route) -> int:
        """The configured context window of the model, else the provider's (litellm's)."""
        if route.facts.context_window:
            return route.facts.context_window
        if route.model not in self._windows:
            lookup = getattr(self.provider, "context_window", litellm_context_window)
            self._windows[route.model] = await asyncio.to_thread(lookup, route.litellm_model)
        return self._windows[route.model]

    # -- tool calls ------------------------------------------------------------------------

    async def _run_calls(self, turn: _Turn, calls: list[ToolCall]) -> None:
        """Run one message's calls: consecutive read-only calls together (at most
        MAX_CONCURRENT_CALLS at once), the others one at a time in order. Only the first
        MAX_CALLS_PER_MESSAGE run; each call past them, and after a denial each remaining
        call, gets an error result instead."""
        message_id = turn.calls_message_id
        turn.results = {}
        denied = False
        running = asyncio.Semaphore(MAX_CONCURRENT_CALLS)

        async def run(call: ToolCall) -> bool:
            async with running:
                return await self._run_call(turn, message_id, call)

        for batch in batches(calls[:MAX_CALLS_PER_MESSAGE], turn.tools):
            if denied:
                self._refuse_calls(turn, message_id, batch, SKIPPED_OUTPUT)
                continue
            async with asyncio.TaskGroup() as group:
                runs = [group.create_task(run(call)) for call in batch]
            denied = any(run.result() for run in runs)
        self._refuse_calls(turn, message_id, calls[MAX_CALLS_PER_MESSAGE:], over_the_cap(len(calls)))
        self._store_results(turn)

    def _refuse_calls(self, turn: _Turn, message_id: str, calls: list[ToolCall], output: str) -> None:
        """Give each of ``calls`` the error result ``output`` without running it."""
        for call in calls:
            self._publish_started(turn, message_id, call)
            self._finish_call(turn, message_id, call, tool_result_part(call.id, call.name, output, error=True))

    async def _run_call(self, turn: _Turn, message_id: str, call: ToolCall) -> bool:
        """Run one call (with the hooks that select it) and record its result; True when
        permission was denied."""
        self._publish_started(turn, message_id, call)
        ctx = self.runtime.context(
            turn.session_id, turn.agent, message_id=message_id, call_id=call.id, vision=turn.vision
        )
        hooks = self.runtime.hooks
        if refusal := self.runtime.skills.refusal(turn.session_id, call.name):
            part, denied = tool_result_part(call.id, call.name, refusal, error=True), False
        elif calls_hooked(hooks, call.name):
            part, denied = await run_hooked_call(hooks, call, turn.tools, ctx)
        else:
            part, denied = await execute(call, turn.tools, ctx)
        self._finish_call(turn, message_id, call, part)
        return denied

    def _publish_started(self, turn: _Turn, message_id: str, call: ToolCall) -> None:
        self.runtime.bus.publish(
            ToolCallStarted(
                turn.session_id, message_id, call.id, call.name, arguments_for_display(call.arguments)
            )
        )

    def _finish_call(self, turn: _Turn, message_id: str, call: ToolCall, part: Part) -> None:
        turn.results[call.id] = part
        self.runtime.bus.publish(
            ToolCallFinished(
                turn.session_id,
                message_id,
                call.id,
                call.name,
                part["output"],
                part["metadata"],
                part["error"],
            )
        )

    def _deliver_steering(self, turn: _Turn) -> bool:
        """At a tool boundary: the messages the user steered with, stored as user messages
        in the order sent (the next request carries them); whether there were any."""
        texts = self._steering.pop(turn.session_id, [])
        for text in texts:
            self.runtime.store.messages.add(turn.session_id, "user", [text_part(text)])
            turn.context_tokens = _grown(turn.context_tokens, text)
        return bool(texts)

    def _store_results(self, turn: _Turn) -> None:
        """The tool message: every call's result in call order."""
        parts = [turn.results[call.id] for call in turn.calls if call.id in turn.results]
        message = self.runtime.store.messages.add(turn.session_id, "tool", parts)
        self.runtime.store.messages.update(message.id, parts, finished=True)
        turn.context_tokens = _grown(turn.context_tokens, parts)
        turn.calls, turn.results = [], {}

    # -- endings ---------------------------------------------------------------------------

    def _save_cancelled(self, turn: _Turn) -> None:
        """Keep what was produced and leave a valid history: partial text, the results of
        calls that finished, "cancelled" results for the others, a final "cancelled" part."""
        self.runtime.permissions.cancel_session(turn.session_id)
        if turn.calls:
            for call in turn.calls:
                if call.id not in turn.results:
                    self._finish_call(
                        turn,
                        turn.calls_message_id,
                        call,
                        tool_result_part(call.id, call.name, CANCELLED_OUTPUT, error=True),
                    )
            self._store_results(turn)
        self._end_marker(turn, "cancelled")

    def _end_marker(self, turn: _Turn, reason: str, error: str | None = None) -> None:
        """Close the message being streamed with ``reason``, or add an assistant message
        holding only that finish part, so a replay shows how the turn ended."""
        message = turn.message or StreamedMessage(
            self.runtime.store.messages, turn.session_id, turn.model, self.flush_interval
        )
        message.close(reason, error)
        turn.message = None

    def _result(
        self, turn: _Turn, before: dict[str, tuple[str, str]], reason: str, error: str | None = None
    ) -> TurnResult:
        changes = self.runtime.store.history.list_latest_session_files(turn.session_id)
        # A file first met in this turn and left as it was (created then deleted) did not change.
        changed = [
            change
            for change in changes
            if before.get(change.path) != (change.session_id, change.version)
            and not (change.path not in before and change.unchanged)
        ]
        return TurnResult(
            response=turn.response,
            usage={
                "prompt_tokens": turn.prompt_tokens,
                "completion_tokens": turn.completion_tokens,
                "cache_read_tokens": turn.cache_read_tokens,
                "cache_write_tokens": turn.cache_write_tokens,
            },
            cost=turn.cost,
            files_changed=[change.path for change in changed],
            reason=reason,
            error=error,
            files_deleted=[change.path for change in changed if change.deleted],
        )

    def _latest_versions(self, session_id: str) -> dict[str, tuple[str, str]]:
        """path -> (session, version) of the latest change in the session tree."""
        changes = self.runtime.store.history.list_latest_session_files(session_id)
        return {change.path: (change.session_id, change.version) for change in changes}

    # -- helpers that answer once: compaction and titles -------------------------------------

    def _can_compact(self, turn: _Turn) -> bool:
        return self.runtime.config.auto_compact and not turn.compacted

    async def _compact(self, turn: _Turn, trigger: str = "auto") -> None:
        """Condense the history into a summary message in the same session (PreCompact
        hooks run first; ``trigger`` is manual or auto, as their matcher sees it)."""
        turn.compacted = True
        hooks = self.runtime.hooks
        if hooks.declared("PreCompact"):
            before = await hooks.run(
                "PreCompact", session_id=turn.session_id, names=(trigger,), trigger=trigger, custom_instructions=""
            )
            hooks.announce(turn.session_id, before.shown)
        model = self._helper_model("summarizer", turn.model)
        session = self.runtime.store.sessions.get(turn.session_id)
        # Another model reads the history once: built whole, so the turn's kept one stays as
        # it is; it gets neither the turn model's thinking nor images it may not take.
        summary_id = session.summary_message_id if session else None
        history = to_chat(self._transcripts.list(turn.session_id), summary_id, model=model)
        request = compaction.summary_request(
            build_system_prompt(self._agent("summarizer"), self.runtime.root, self.runtime.config), history
        )
        try:
            summary, usage = await self._complete(model, request)
        except ProviderError as err:
            raise compaction.CompactionError(
                f"Could not compact the session ({err}): start a new session"
            ) from None
        await self._add_usage(turn, usage)
        if not summary.strip():
            raise compaction.CompactionError(
                "Could not compact the session: the summary came back empty; start a new session"
            )
        message = StreamedMessage(self.runtime.store.messages, turn.session_id, model, self.flush_interval)
        message.append_text("text", summary.strip())
        summary_id = message.close("compacted")
        self.runtime.store.sessions.update(turn.session_id, summary_message_id=summary_id)
        turn.context_tokens = 0  # unknown until the next response: estimated from the request
        self.runtime.bus.publish(SessionCompacted(turn.session_id, summary_id))

    async def _generate_title(self, session_id: str, prompt: str, turn_model: str) -> None:
        """Title the session from its first prompt; the prompt's first words if the model fails."""
        model = self._helper_model("title", turn_model)
        system = build_system_prompt(self._agent("title"), self.runtime.root, self.runtime.config)
        try:
            reply, usage = await self._complete(model, title_request(system, prompt))
            self.runtime.store.sessions.add_usage(
                session_id, usage.prompt_tokens, usage.completion_tokens, usage.cost
            )
            title = title_from_reply(reply) or fallback_title(prompt)
        except ProviderError:
            title = fallback_title(prompt)
        with contextlib.suppress(OpencodeError):  # the session may have been deleted meanwhile
            self.runtime.store.sessions.update(session_id, title=title)

    def _helper_model(self, agent: str, turn_model: str) -> str:
        return self._agent_model(agent) or turn_model

    def _agent(self, name: str) -> Agent:
        return self.runtime.agents.get(name)

    async def _complete(self, model: str, messages: list[dict[str, Any]]) -> tuple[str, Usage]:
        """A whole answer without tools, as text, and its usage."""
        route = self._route(model)
        if route.problem:
            raise ProviderError(route.problem, "auth")
        options = route.stream_options()
        text: list[str] = []
        usage = Usage()
        async with contextlib.aclosing(
            self.provider.stream(model=model, messages=messages, tools=None, **options)
        ) as events:
            async for event in events:
                if isinstance(event, StreamedText):
                    text.append(event.text)
                elif isinstance(event, Usage):
                    usage = event
        return "".join(text), usage

    def _in_background(self, work) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _add_child_usage(turn: _Turn, child: TurnResult) -> None:
    """A sub-agent's usage and cost counted in its parent's turn (not in its context size)."""
    turn.prompt_tokens += child.usage["prompt_tokens"]
    turn.completion_tokens += child.usage["completion_tokens"]
    turn.cache_read_tokens += child.usage["cache_read_tokens"]
    turn.cache_write_tokens += child.usage["cache_write_tokens"]
    turn.cost += child.cost


def _grown(known_tokens: int, added: object) -> int:
    """A known context size plus an estimate of ``added``; unknown (0) stays unknown."""
    return known_tokens + estimate_tokens(added) if known_tokens else 0
