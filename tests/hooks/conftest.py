"""Hooks tests: a workspace, a home folder of its own (the user's ~/.claude and data
folder), real hook scripts from fixtures/ run as subprocesses, and the agent loop talking
to the fake OpenAI server through the real litellm client."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from app.config import Config
from app.llm.agent import AgentLoop, TurnResult
from app.llm.provider import Provider
from app.runtime import Runtime
from tests.llm.conftest import fake_llm  # noqa: F401 - the fixture, shared
from tests.llm.fake_openai import FakeOpenAI, ToolCall

FIXTURES = Path(__file__).parent / "fixtures"


def script(name: str, *args: str) -> str:
    """A hook command running the fixture script ``name`` with this Python."""
    return shlex.join([sys.executable, str(FIXTURES / name), *args])


def settings(event: str, command: str, matcher: str = "", **entry: object) -> dict:
    """A settings file's content declaring one hook."""
    return {"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **entry}]}]}}


def write_json(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def call(tool: str, /, **arguments: object) -> ToolCall:
    return ToolCall(tool, json.dumps(arguments), id=f"call_{tool}_{len(json.dumps(arguments))}")


def logged(path: Path) -> list[dict]:
    """The events a record_event.py hook wrote, one per line."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Harness:
    """A runtime whose user folder is ``home``, and a loop on the fake server."""

    def __init__(
        self, workspace: Path, home: Path, fake: FakeOpenAI, policy: str, trust: bool, config: dict | None
    ) -> None:
        config = Config.model_validate({"lsp": {"python": {"disabled": True}}, **(config or {})})
        self.runtime = Runtime.build(workspace, config=config, policy=policy, env={"HOME": str(home)})
        self.runtime.trust_project_hooks = trust
        self.fake = fake
        self.loop = AgentLoop(self.runtime, Provider(retry_base_delay=0.005), env=fake.env)
        self.session_id = self.runtime.store.sessions.create(title="test").id
        self.events = self.runtime.bus.subscribe()

    async def run(self, prompt: str) -> TurnResult:
        return await self.loop.run(self.session_id, prompt, model=self.fake.model)

    def published(self, *types: type) -> list:
        return [event for event in self.events.drain() if isinstance(event, types)]

    def tool_outputs(self, request: int) -> list[str]:
        return [m["content"] for m in self.fake.requests[request]["messages"] if m["role"] == "tool"]


@pytest.fixture
def harness(workspace: Path, home: Path, fake_llm: FakeOpenAI):  # noqa: F811 - the fixture imported above
    built: list[Harness] = []

    def make(policy: str = "headless-yes", trust: bool = False, config: dict | None = None) -> Harness:
        made = Harness(workspace, home, fake_llm, policy, trust, config)
        built.append(made)
        return made

    yield make
    for made in built:
        made.runtime.close()
