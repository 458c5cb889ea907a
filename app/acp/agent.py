"""The ACP agent: sessions, prompts, modes and commands over one editor connection.

Each session lives in the workspace its ``cwd`` names (one Runtime per workspace, with
the interactive permission policy: questions go to the editor). Prompts run on the
agent loop; ``TurnRelay`` streams what happens while they run."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    UnstructuredCommandInput,
    Usage,
)

from app import __version__
from app.acp.channel import ClientChannel
from app.acp.mcp_servers import MCP_CAPABILITIES, EditorServer, connect_editor_servers
from app.acp.relay import TurnRelay
from app.acp.replay import replay
from app.acp.steering import TurnOutcome
from app.acp.workspaces import Workspaces
from app.core.errors import OpencodeError
from app.headless.run import CannotStart, pick_session, usable_model
from app.llm.agent import AgentLoop, TurnResult
from app.llm.title import fallback_title
from app.prompt.slash_commands import CommandCall, session_handler
from app.runtime import Runtime

log = logging.getLogger(__name__)
CHANGES = AvailableCommand(name="changes", description="List the files this session changed (no model call)")
STEER_USAGE = "/steer takes the message to give the running reply, e.g. /steer use the v2 API"
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "max_steps": "max_turn_requests",
                "cancelled": "cancelled", "content_filter": "refusal", "refusal": "refusal"}  # fmt: skip


@dataclass
class AcpSession:
    id: str
    runtime: Runtime
    loop: AgentLoop
    mode: str = "coder"
    turn: asyncio.Future[TurnOutcome] | None = None
    """While a prompt of this connection runs the session's turn: that turn's outcome."""


class OpencodeAgent:
    """Implements the SDK's ``Agent`` protocol (methods are called by its router). One per
    connection; ``workspaces`` may be shared by several (``opencode serve``), and then
    belongs to whoever made it."""

    def __init__(self, channel: ClientChannel | None = None, workspaces: Workspaces | None = None) -> None:
        self.channel = channel
        self._own_workspaces = workspaces is None
        self._workspaces = Workspaces() if workspaces is None else workspaces
        self._sessions: dict[str, AcpSession] = {}
        self._announcements: set[asyncio.Task[None]] = set()

    async def initialize(self, **_: Any) -> InitializeResponse:
        """ACP answers the client's version when the agent speaks it, else the agent's
        latest: we speak only PROTOCOL_VERSION, so that is the answer to any request (an
        older 0 included), and the client decides whether it can go on."""
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=MCP_CAPABILITIES,
            ),
            auth_methods=[],  # no sign-in; set, so the list is sent as reference agents send it
            agent_info=Implementation(name="opencode", title="opencode", version=__version__),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[EditorServer] | None = None, **_: Any
    ) -> NewSessionResponse:
        runtime, loop = self._workspace(cwd)
        connect_editor_servers(runtime, mcp_servers or [])
        session = self._open(runtime.store.sessions.create().id, runtime, loop)
        self._announce_commands(session)
        return NewSessionResponse(session_id=session.id, modes=_modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[EditorServer] | None = None, **_: Any
    ) -> LoadSessionResponse:
        runtime, loop = self._workspace(cwd)
        if runtime.store.sessions.get(session_id) is None:
            raise RequestError.invalid_params({"message": f"no session {session_id} in {runtime.root}: start a new one"})
        connect_editor_servers(runtime, mcp_servers or [])
        session = self._open(session_id, runtime, loop)
        for update in replay(runtime, session_id):
            await self._send(session_id, update)
        self._announce_commands(session)
        return LoadSessionResponse(modes=_modes(session))

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        primary = [agent.name for agent in session.runtime.agents.primary()]
        if mode_id not in primary:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}: use one of {', '.join(primary)}"})
        session.mode = mode_id
        await self._send(session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id))
        return SetSessionModeResponse()

    async def prompt(
        self, session_id: str, prompt: list[Any], opencode: dict[str, Any] | None = None, **_: Any
    ) -> PromptResponse:
        """``opencode`` is the request's ``_meta.opencode``: ``model`` names the turn's model
        (an attached ``-p --model``). The response's ``_meta.opencode`` is the turn as
        ``-p`` reports it (``turn_summary``)."""
        text = prompt_text(prompt)
        _refuse_lone_surrogates(text)
        session = self._session(session_id)
        if text.strip() == "/changes":
            await self._send(session_id, _agent_text(self._changes(session)))
            return PromptResponse(stop_reason="end_turn")
        agent, model = session.mode, (opencode or {}).get("model")
        try:
            invocation = session.runtime.commands.resolve(text, "acp")
            if invocation is not None and invocation.command.name == "steer":
                return await self._steer_command(session, invocation.arguments, agent)
            if invocation is not None and invocation.command.kind == "session":
                handler = session_handler(invocation.command)
                line = await handler(CommandCall(session.loop, session_id, invocation.arguments))
                await self._send(session_id, _agent_text(line))
                return PromptResponse(stop_reason="end_turn")
        except OpencodeError as error:  # an unknown command, or one that could not act: its line
            await self._send(session_id, _agent_text(str(error)))
            return PromptResponse(stop_reason="end_turn")
        if invocation is None and session.turn is not None:  # a prompt while the turn runs steers it
            return await self._steer(session, text, agent)
        confined = invocation is not None and invocation.command.repository
        if invocation is not None:  # a prompt command: its text, on its agent and model if it names them
            agent = session.runtime.agents.command_agent(agent, invocation.command.agent)
            text, model = invocation.prompt(), invocation.command.model
        return await self._run(session, text, agent, model, confined=confined)

    async def _steer_command(self, session: AcpSession, message: str, agent: str) -> PromptResponse:
        """``/steer MESSAGE``: as a prompt sent while the turn runs; with no turn running,
        the message is the next prompt."""
        if not message:
            await self._send(session.id, _agent_text(STEER_USAGE))
            return PromptResponse(stop_reason="end_turn")
        return await self._steer(session, message, agent)

    async def _steer(self, session: AcpSession, text: str, agent: str) -> PromptResponse:
        """Give the running turn ``text`` at its next tool boundary and answer when that
        turn ends, with its stop reason. A turn that ended before reading it (or was
        just starting or ending) leaves it for the next turn: this prompt runs it, or
        steers the turn another such prompt started first. Cancelled turns cancel it."""
        while (running := session.turn) is not None:
            steered = session.loop.steer(session.id, text)
            if steered:  # the editor learns that the running reply took it, as the TUI's "next step" label
                await self._send(session.id, _agent_thought(f"next step: {text}\n"))
            outcome = await asyncio.shield(running)
            if steered and outcome.delivered(text):
                return outcome.answer()
            if outcome.cancelled:
                return PromptResponse(stop_reason="cancelled")
        return await self._run(session, text, agent, None, confined=False)

    async def _run(
        self, session: AcpSession, text: str, agent: str, model: str | None, *, confined: bool
    ) -> PromptResponse:
        """One turn of the loop on ``text``; prompts sent meanwhile steer it (``_steer``)."""
        outcome, session.turn = TurnOutcome(), asyncio.get_running_loop().create_future()
        running = session.turn
        try:
            outcome.response = await self._turn(session, text, agent, model, confined=confined)
            return outcome.response
        except RequestError as error:
            outcome.error = error
            raise
        finally:
            session.turn = None
            outcome.undelivered = session.loop.take_steering(session.id)
            running.set_result(outcome)

    async def _turn(
        self, session: AcpSession, text: str, agent: str, model: str | None, *, confined: bool
    ) -> PromptResponse:
        session_id = session.id
        store = session.runtime.store.sessions
        stored = store.get(session_id)
        if stored is not None and not stored.title:  # titled from the prompt: no model call spent on it
            store.update(session_id, title=fallback_title(text))
        assert self.channel is not None, "the server sets the channel before it reads any request"
        relay = TurnRelay(session.runtime, self.channel, session_id)
        try:
            result = await session.loop.run(session_id, text, agent=agent, model=model, confined=confined)
        except OpencodeError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        finally:
            await relay.finish()
        summary = turn_summary(result, session.loop.max_steps, relay.unapproved)
        if result.reason == "failed":
            raise RequestError.internal_error({"message": result.error, "opencode": summary})
        usage = result.usage
        return PromptResponse(
            field_meta={"opencode": summary},
            stop_reason=STOP_REASONS.get(result.reason, "end_turn"),
            usage=Usage(
                input_tokens=usage["prompt_tokens"],
                output_tokens=usage["completion_tokens"],
                total_tokens=usage["prompt_tokens"] + usage["completion_tokens"],
                cached_read_tokens=usage["cache_read_tokens"] or None,
                cached_write_tokens=usage["cache_write_tokens"] or None,
            ),
        )

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.loop.cancel(session_id)  # also answers its pending permission questions

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``_opencode/headless``: what a ``-p`` attached to ``opencode serve`` needs before
        its turn, decided by the same code as a run in its own process (the primary agent,
        the model and its check, the session: a new one, ``continue`` or ``sessionId``).
        The session joins this connection, in the agent's mode. An error's ``data.line`` is
        the whole line ``-p`` prints (exit 2); ``notices`` are a new workspace's lines."""
        if method != "opencode/headless":
            raise RequestError.method_not_found(f"_{method}")
        opened = self._workspaces.open(str(params.get("cwd", "")))
        runtime, prompt, agent = opened.runtime, str(params.get("prompt", "")), str(params.get("agent") or "coder")
        notices = [*runtime.notices, *runtime.commands.notices, *runtime.hook_notices(asking=False)] if opened.new else []
        self.admit_headless(params, runtime)
        try:
            runtime.agents.primary_agent(agent)
            model, _ = usable_model(runtime, agent, params.get("model"), os.environ)
            session_id = pick_session(runtime, prompt, bool(params.get("continue")), params.get("sessionId"), model)
        except CannotStart as stop:
            raise RequestError.invalid_params({"message": str(stop), "line": str(stop), "notices": notices}) from None
        except OpencodeError as error:
            line = f"opencode: error: {error}"
            raise RequestError.invalid_params({"message": str(error), "line": line, "notices": notices}) from None
        self._open(session_id, runtime, opened.loop).mode = agent
        return {"sessionId": session_id, "model": model, "notices": notices}

    def admit_headless(self, params: dict[str, Any], runtime: Runtime) -> None:
        """Raise the ACP error that refuses a ``-p`` client before its session is picked;
        every client is admitted here (``opencode serve`` checks its environment)."""

    async def close(self) -> None:
        if self._own_workspaces:
            await self._workspaces.close()

    # -- helpers ---------------------------------------------------------------------------

    def _workspace(self, cwd: str) -> tuple[Runtime, AgentLoop]:
        opened = self._workspaces.open(cwd)
        return opened.runtime, opened.loop

    def _open(self, session_id: str, runtime: Runtime, loop: AgentLoop) -> AcpSession:
        session = self._sessions.get(session_id) or AcpSession(session_id, runtime, loop)
        self._sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id}: call session/new or session/load"})
        return session

    def _changes(self, session: AcpSession) -> str:
        """The files that differ from before the session (one created then deleted does not)."""
        changes = [c for c in session.runtime.store.history.list_latest_session_files(session.id) if not c.unchanged]
        if not changes:
            return "No files changed in this session."
        return "\n".join(f"{'deleted' if c.deleted else 'changed'} {c.path}" for c in changes)

    def _announce_commands(self, session: AcpSession) -> None:
        """Send the commands once the session's response is out: an editor learns the
        session id from that response and may drop updates for an id it does not know
        yet (Zed does, for session/new). The task is queued now and runs when this
        request's handler has returned, and the SDK queues the response before then."""
        task = asyncio.create_task(self._send_commands(session))
        self._announcements.add(task)
        task.add_done_callback(self._announcements.discard)

    async def _send_commands(self, session: AcpSession) -> None:
        """The command files are read again for each session, so one added since the
        editor's last session is offered (and runs) without restarting the agent."""
        known = set(session.runtime.commands.notices)
        registry = await asyncio.to_thread(session.runtime.reload_commands)
        for notice in registry.notices:
            if notice not in known:
                log.warning("%s", notice)
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=available_commands(session.runtime)
        )
        await self._send(session.id, update)

    async def _send(self, session_id: str, update: Any) -> None:
        assert self.channel is not None, "the server sets the channel before serving"
        await self.channel.update(session_id, update)


def available_commands(runtime: Runtime) -> list[AvailableCommand]:
    """``/changes`` and every slash command that works over ACP (app/prompt/slash_commands.py),
    custom ones included."""
    return [CHANGES] + [
        AvailableCommand(
            name=command.name,
            description=command.description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=command.hint)) if command.hint else None,
        )
        for command in runtime.commands.available("acp")
    ]


def _refuse_lone_surrogates(text: str) -> None:
    """JSON may escape half of a UTF-16 pair alone ("\\udcff"), which is no character:
    no stored text can hold it, so the prompt is refused before anything is stored."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise RequestError.invalid_params(
            {"message": f"the prompt holds {text[err.start]!r}, half of a UTF-16 pair, which is no character: "
             "send the prompt as Unicode text"}
        ) from None


def prompt_text(blocks: list[Any]) -> str:
    """The prompt as text: text blocks as they are, an embedded file as a fenced block
    with its URI, a link to a file as its URI (the model can view it)."""
    pieces: list[str] = []
    for block in blocks:
        match getattr(block, "type", None):
            case "text":
                pieces.append(block.text)
            case "resource_link":
                pieces.append(block.uri)
            case "resource" if hasattr(block.resource, "text"):
                pieces.append(f"{block.resource.uri}\n```\n{block.resource.text}\n```")
    return "\n\n".join(pieces)


def turn_summary(result: TurnResult, max_steps: int, unapproved: list[Any]) -> dict[str, Any]:
    """A finished turn as ``-p`` reports it: its answer, usage, cost and changed files,
    why it ended, the loop's step limit and the calls refused for want of approval."""
    return {
        "response": result.response, "usage": result.usage, "cost": result.cost,
        "filesChanged": result.files_changed, "filesDeleted": result.files_deleted, "reason": result.reason,
        "error": result.error,
        "maxSteps": max_steps, "unapproved": [{"tool": e.tool, "subject": e.subject} for e in unapproved],
    }  # fmt: skip


def _modes(session: AcpSession) -> SessionModeState:
    """The session's primary agents as modes: coder, plan and the custom primary agents."""
    modes = [
        SessionMode(id=agent.name, name=agent.name.capitalize(), description=agent.description or None)
        for agent in session.runtime.agents.primary()
    ]
    return SessionModeState(current_mode_id=session.mode, available_modes=modes)


def _agent_thought(text: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=text))


def _agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))

