"""MCP tools through the agent loop: the scripted model sees the server's tools, calls
one, the user is asked under the tool's name, and the server's answer goes back."""

from __future__ import annotations

from typing import Any

from app.agents.catalog import AgentCatalog, tools_for
from app.llm.agent import AgentLoop
from app.llm.events import ToolCallFinished
from app.llm.scripted import Script, ScriptedProvider
from app.permission import PermissionReply
from tests.mcp.conftest import calc_server


class RecordingProvider(ScriptedProvider):
    """The scripted model, keeping the tool definitions each request offered."""

    def __init__(self, script: Script) -> None:
        super().__init__(script)
        self.offered: list[list[dict[str, Any]]] = []

    def stream(self, *, model: str, messages: list[dict], tools: list[dict] | None, **options: Any):
        self.offered.append(tools or [])
        return super().stream(model=model, messages=messages, tools=tools, **options)


async def test_the_model_calls_an_mcp_tool_through_the_agent_loop(make_runtime, permission_answers):
    runtime = make_runtime("interactive", {"mcpServers": {"calc": calc_server()}})
    session_id = runtime.store.sessions.create().id
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    finished = runtime.bus.subscribe(ToolCallFinished)
    step = {"toolCalls": [{"name": "calc_add", "arguments": {"a": 19, "b": 23}}]}
    provider = RecordingProvider(Script.model_validate({"turns": [{"steps": [step, {"text": "It is 42."}]}]}))
    loop = AgentLoop(runtime, provider)
    try:
        result = await loop.run(session_id, "add 19 and 23", model="scripted/test")
        call = await finished.get()
    finally:
        finished.close()
        await loop.aclose()
        await runtime.mcp.aclose()

    assert result.response == "It is 42."
    offered = {spec["function"]["name"]: spec for tools in provider.offered for spec in tools}
    assert offered["calc_add"]["function"]["parameters"]["required"] == ["a", "b"]
    assert [request.tool for request in answers.requests] == ["calc_add"]
    assert (call.tool, call.output, call.error) == ("calc_add", "42", False)
    tool_message = [m for m in runtime.store.messages.list(session_id) if m.role == "tool"][0]
    assert tool_message.parts[0]["output"] == "42"


def test_only_the_working_agents_get_mcp_tools():
    mcp = {"calc_add": "mcp tool"}
    builtin = {"view": "view tool"}

    assert tools_for(AgentCatalog().get("coder"), builtin, mcp) == {"view": "view tool", "calc_add": "mcp tool"}
    assert "calc_add" in tools_for(AgentCatalog().get("workhorse"), builtin, mcp)
    assert tools_for(AgentCatalog().get("explorer"), builtin, mcp) == {"view": "view tool"}
