"""The ACP agent: sessions, prompts, modes and commands over one editor connection.

Each session lives in the workspace its ``cwd`` names (one Runtime per workspace, with
the interactive permission policy: questions go to the editor). Prompts run on the
agent loop; ``TurnRelay`` streams what happens while they run."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
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
from app.errors import OpencodeError
from app.llm.agent import AgentLoop
from app.llm.models import choose_model
from app.llm.scripted import provider_for
from app.llm.title import fallback_title
from app.runtime import Runtime
from app.slash_commands import CommandCall, session_handler

log = logging.getLogger(__name__)
MODES = [
    SessionMode(id="coder", name="Coder", description="The assistant: reads, edits and runs, delegating research"),
    SessionMode(id="workhorse", name="Workhorse", description="Implementation work without sub-agents"),
]
CHANGES = AvailableCommand(name="changes", description="List the files this session changed (no model call)")
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "max_steps": "max_turn_requests",
                "cancelled": "cancelled", "content_filter": "refusal", "refusal": "refusal"}  # fmt: skip


@dataclass
class AcpSession:
    id: str
    runtime: Runtime
    loop: AgentLoop
    mode: str = "coder"


class OpencodeAgent:
    """Implements the SDK's ``Agent`` protocol (methods are called by its router)."""

    def __init__(self, channel: ClientChannel | None = None) -> None:
        self.channel = channel
        self._runtimes: dict[Path, Runtime] = {}
        self._loops: dict[Path, AgentLoop] = {}
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
        return NewSessionResponse(session_id=session.id, modes=_modes(session.mode))

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
        return LoadSessionResponse(modes=_modes(session.mode))

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in {mode.id for mode in MODES}:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}: use coder or workhorse"})
        session.mode = mode_id
        await self._send(session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id))
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        if text.strip() == "/changes":
            await self._send(session_id, _agent_text(self._changes(session)))
            return PromptResponse(stop_reason="end_turn")
        agent, model = session.mode, None
        try:
            invocation = session.runtime.commands.resolve(text, "acp")
            if invocation is not None and invocation.command.kind == "session":
                handler = session_handler(invocation.command)
                line = await handler(CommandCall(session.loop, session_id, invocation.arguments))
                await self._send(session_id, _agent_text(line))
                return PromptResponse(stop_reason="end_turn")
        except OpencodeError as error:  # an unknown command, or one that could not act: its line
            await self._send(session_id, _agent_text(str(error)))
            return PromptResponse(stop_reason="end_turn")
        if invocation is not None:  # a prompt command: its text, on its agent and model if it names them
            text, agent, model = invocation.prompt(), invocation.command.agent or agent, invocation.command.model
        store = session.runtime.store.sessions
        if not store.get(session_id).title:  # titled from the prompt: no model call spent on it
            store.update(session_id, title=fallback_title(text))
        relay = TurnRelay(session.runtime, self.channel, session_id)
        try:
            result = await session.loop.run(session_id, text, agent=agent, model=model)
        except OpencodeError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        finally:
            await relay.finish()
        if result.reason == "failed":
            raise RequestError.internal_error({"message": result.error})
        usage = result.usage
        return PromptResponse(
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

    async def close(self) -> None:
        for loop in self._loops.values():
            await loop.aclose()
        for runtime in self._runtimes.values():
            runtime.close()

    # -- helpers ---------------------------------------------------------------------------

    def _workspace(self, cwd: str) -> tuple[Runtime, AgentLoop]:
        if not Path(cwd).is_absolute():  # ACP: "Must be an absolute path"; it would resolve against our cwd
            raise RequestError.invalid_params(
                {"message": f"cwd {cwd} is not an absolute path: send the workspace folder's absolute path"}
            )
        root = Path(cwd).resolve()
        if not root.is_dir():
            raise RequestError.invalid_params({"message": f"cwd {cwd} is not a directory: open a folder first"})
        if root not in self._runtimes:
            try:
                runtime = Runtime.build(root, policy="interactive")
                model = choose_model(None, runtime.config.agents.coder.model, os.environ, runtime.config.providers)
                loop = AgentLoop(runtime, provider_for(model or ""))
            except OpencodeError as error:
                raise RequestError.invalid_params({"message": str(error)}) from None
            for notice in [*runtime.notices, *runtime.commands.notices]:
                log.warning("%s", notice)
            self._runtimes[root], self._loops[root] = runtime, loop
            log.info("workspace %s", root)
        return self._runtimes[root], self._loops[root]

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
        changes = session.runtime.store.history.list_latest_session_files(session.id)
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
    """``/changes`` and every slash command that works over ACP (app/slash_commands.py),
    custom ones included."""
    return [CHANGES] + [
        AvailableCommand(
            name=command.name,
            description=command.description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=command.hint)) if command.hint else None,
        )
        for command in runtime.commands.available("acp")
    ]


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


def _modes(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=MODES)


def _agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))

