"""Drive `opencode acp` as a real subprocess with the SDK's client over stdio, against the
local fake OpenAI server. `acp_agent(workspace, fake, answers)` yields an `EditorClient`
connected to a fresh server; every raw frame the client received is kept."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from tests.llm.conftest import fake_llm  # noqa: F401 - the fixture, shared
from tests.llm.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]


class EditorClient:
    """The editor's side: answers permission questions from a list ("allow_once",
    "reject_once", ...; "cancel": cancel the prompt, then answer cancelled;
    "cancel-silently": cancel the prompt and never answer; "error": answer with a
    JSON-RPC error) and keeps every frame the agent sent, as JSON (``frames``), and every
    frame both ways in the order it saw them (``wire``: (sender, message) pairs, the sender
    "client" or "agent")."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.frames: list[dict[str, Any]] = []
        self.wire: list[tuple[str, dict[str, Any]]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.connection: Any = None
        self.prompting_session: str | None = None

    def observe(self, event: StreamEvent) -> None:
        self.wire.append(("agent" if event.direction is StreamDirection.INCOMING else "client", event.message))
        if event.direction is StreamDirection.INCOMING:
            self.frames.append(event.message)
            if event.message.get("method") == "session/request_permission":
                self.permission_requests.append(event.message["params"])

    def updates(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The raw `update` objects of session/update frames, in order."""
        found = [
            frame["params"]["update"]
            for frame in self.frames
            if frame.get("method") == "session/update" and frame["params"]["sessionId"] == session_id
        ]
        return [u for u in found if kind is None or u["sessionUpdate"] == kind]

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **_: Any):
        answer = self.answers.pop(0)
        if answer == "cancel":
            await self.connection.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "cancel-silently":
            await self.connection.cancel(session_id=session_id)
            await asyncio.Event().wait()
        if answer == "error":
            raise RequestError.internal_error({"details": "the editor's dialog crashed"})
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        """Frames are kept raw by `observe`; nothing else to do."""


@pytest.fixture
def acp_agent(tmp_path: Path) -> Callable[..., Any]:
    @asynccontextmanager
    async def start(workspace: Path, fake: FakeOpenAI, answers: list[str] = ()) -> AsyncIterator[EditorClient]:
        client = EditorClient(list(answers))
        env = {
            **fake.env,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONPATH": str(REPO),
        }
        with open(tmp_path / "acp-stderr.txt", "wb") as stderr:
            async with spawn_agent_process(
                client, sys.executable, "-m", "app.cli", "acp", "-C", str(workspace),
                env=env, cwd=workspace, transport_kwargs={"stderr": stderr},
                observers=[client.observe],
            ) as (connection, _process):  # fmt: skip
                client.connection = connection
                await asyncio.wait_for(connection.initialize(protocol_version=PROTOCOL_VERSION), 30)
                yield client

    return start
