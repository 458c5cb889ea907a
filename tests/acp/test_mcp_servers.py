"""The MCP servers an editor sends with session/new and session/load, end to end: a real
`opencode acp` process, real MCP servers (tests/mcp/calc_server.py), the scripted model
behind the fake OpenAI server calling their tools."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from app.acp.mcp_servers import editor_server_configs
from app.config import McpServerConfig
from tests.acp.test_acp import final_updates, text
from tests.acp.wire_check import conversation_problems
from tests.llm.fake_openai import Text, ToolCall
from tests.mcp.conftest import CALC_SERVER, calc_over_http
from tests.waiting import eventually

SH = "/bin/sh"


def calc(name: str, *, env: dict[str, str] | None = None, wrapper: str | None = None) -> McpServerStdio:
    """The calc server as an editor sends it; ``wrapper`` is shell run first (``$0`` is
    the interpreter, ``$1`` the script), to count starts or to start slowly."""
    pairs = [EnvVariable(name=key, value=value) for key, value in (env or {}).items()]
    if wrapper is None:
        return McpServerStdio(name=name, command=sys.executable, args=[str(CALC_SERVER)], env=pairs)
    script = f'{wrapper}; exec "$0" "$1"'
    return McpServerStdio(
        name=name, command=SH, args=["-c", script, sys.executable, str(CALC_SERVER)], env=pairs
    )


def offered(fake_llm, request: int = 0) -> set[str]:
    return {tool["function"]["name"] for tool in fake_llm.requests[request].get("tools") or []}


def acp_log(workspace: Path) -> str:
    return (workspace / ".opencode/logs/acp.log").read_text()


async def prompt(client, session_id: str, words: str) -> str:
    response = await asyncio.wait_for(client.connection.prompt(session_id=session_id, prompt=text(words)), 90)
    return response.stop_reason


async def test_the_model_calls_a_tool_of_a_stdio_server_the_editor_sent(
    workspace, fake_llm, acp_agent, tmp_path
):
    """The editor's env reaches the server (it writes its pid where MCP_PID_FILE says),
    the call asks the editor first, its answer reaches the model and the editor, every
    frame follows the schema, and the server ends with the agent."""
    pid_file = tmp_path / "calc.pid"
    fake_llm.reply(ToolCall("calc_add", json.dumps({"a": 19, "b": 23}), id="m1"))
    fake_llm.reply(Text("It is 42."))
    async with acp_agent(workspace, fake_llm, ["allow_once"]) as client:
        servers = [calc("calc", env={"MCP_PID_FILE": str(pid_file)})]
        sid = (await client.connection.new_session(cwd=str(workspace), mcp_servers=servers)).session_id
        stop = await prompt(client, sid, "add 19 and 23")

    assert stop == "end_turn"
    assert {"calc_add", "calc_echo"} <= offered(fake_llm)
    assert fake_llm.requests[1]["messages"][-1]["role"] == "tool"
    assert fake_llm.requests[1]["messages"][-1]["content"] == "42"
    assert [asked["toolCall"]["toolCallId"] for asked in client.permission_requests] == ["m1"]
    done = final_updates(client, sid)["m1"]
    assert (done["status"], done["content"][0]["content"]["text"]) == ("completed", "42")
    initialized = next(frame["result"] for frame in client.frames if frame.get("id") == 0)
    assert initialized["agentCapabilities"]["mcpCapabilities"] == {"http": True}
    assert conversation_problems(client.wire) == []
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_server_that_fails_to_start_leaves_the_turn_working(workspace, fake_llm, acp_agent):
    fake_llm.reply(Text("Nothing to call."))
    missing = str(workspace.parent / "no-such-mcp-server")
    async with acp_agent(workspace, fake_llm) as client:
        broken = McpServerStdio(name="broken", command=missing, args=[], env=[])
        sid = (await client.connection.new_session(cwd=str(workspace), mcp_servers=[broken])).session_id
        stop = await prompt(client, sid, "hello")

    assert stop == "end_turn"
    assert offered(fake_llm) and not any(name.startswith("broken_") for name in offered(fake_llm))
    assert f"MCP server broken failed: command not found ({missing})" in acp_log(workspace)


async def test_the_projects_server_of_a_name_wins_and_a_server_sent_again_starts_once(
    workspace, fake_llm, acp_agent, tmp_path
):
    """.opencode.json's calc is used, not the editor's calc of the same name (a command
    that does not exist); the editor's extra, sent by session/new and again by a second
    session/new and a session/load, is started once and serves the second session."""
    (workspace / ".opencode.json").write_text(json.dumps({
        "mcpServers": {"calc": {"command": sys.executable, "args": [str(CALC_SERVER)]}},
    }))  # fmt: skip
    starts = tmp_path / "starts.txt"
    sent = [
        McpServerStdio(name="calc", command=str(workspace.parent / "no-such-mcp-server"), args=[], env=[]),
        calc("extra", wrapper=f"echo started >> {starts}"),
    ]
    fake_llm.reply(
        ToolCall("calc_add", json.dumps({"a": 1, "b": 2}), id="c1"),
        ToolCall("extra_echo", json.dumps({"text": "hi"}), id="x1"),
    )
    fake_llm.reply(Text("3 and hi."))
    async with acp_agent(workspace, fake_llm, ["allow_once", "allow_once"]) as client:
        first = (await client.connection.new_session(cwd=str(workspace), mcp_servers=sent)).session_id
        second = (await client.connection.new_session(cwd=str(workspace), mcp_servers=sent)).session_id
        await client.connection.load_session(cwd=str(workspace), session_id=first, mcp_servers=sent)
        stop = await prompt(client, second, "use both")

    assert stop == "end_turn"
    outputs = {
        u["toolCallId"]: u["content"][0]["content"]["text"] for u in final_updates(client, second).values()
    }
    assert outputs == {"c1": "3", "x1": "hi"}
    assert starts.read_text() == "started\n"
    assert "editor MCP server calc: skipped, the opencode configuration defines that name" in acp_log(
        workspace
    )
    assert conversation_problems(client.wire) == []


async def test_an_http_server_the_editor_sent_is_called_with_its_headers(workspace, fake_llm, acp_agent):
    """HTTP is advertised, so it has to work: streamable HTTP at the editor's url."""
    fake_llm.reply(ToolCall("web_add", json.dumps({"a": 20, "b": 22}), id="w1"))
    fake_llm.reply(Text("42."))
    async with calc_over_http() as url:
        web = HttpMcpServer(type="http", name="web", url=url, headers=[HttpHeader(name="X-Test", value="1")])
        async with acp_agent(workspace, fake_llm, ["allow_once"]) as client:
            sid = (await client.connection.new_session(cwd=str(workspace), mcp_servers=[web])).session_id
            stop = await prompt(client, sid, "add")

    assert stop == "end_turn"
    assert fake_llm.requests[1]["messages"][-1]["content"] == "42"
    assert conversation_problems(client.wire) == []


async def test_a_session_opened_while_a_turn_waits_for_servers_does_not_break_that_turn(
    workspace, fake_llm, acp_agent
):
    """The first prompt waits for its slow server to connect; meanwhile a second session
    brings another server. The waiting turn goes on and sees the slow server's tools."""
    fake_llm.reply(Text("Ready."))
    async with acp_agent(workspace, fake_llm) as client:
        # slow starts only once the test lets it: the turn waits as long as the test wants
        slow = [calc("slow", wrapper="until [ -e release-slow ]; do sleep 0.05; done")]
        first = (await client.connection.new_session(cwd=str(workspace), mcp_servers=slow)).session_id
        turn = asyncio.create_task(prompt(client, first, "hello"))
        await eventually(lambda: "waiting for MCP servers to connect: slow" in acp_log(workspace), timeout=30)
        assert not turn.done() and not fake_llm.requests
        await client.connection.new_session(cwd=str(workspace), mcp_servers=[calc("quick")])
        (workspace / "release-slow").touch()
        stop = await turn
        await eventually(lambda: "MCP server quick connected" in acp_log(workspace), timeout=30)

    assert stop == "end_turn"
    assert "slow_add" in offered(fake_llm)


def test_editor_servers_become_config_and_an_unadvertised_transport_is_skipped_with_a_reason(caplog):
    sent = [
        McpServerStdio(name="calc", command="/bin/calc", args=["-v"], env=[EnvVariable(name="K", value="1")]),
        HttpMcpServer(
            type="http", name="web", url="http://h/mcp", headers=[HttpHeader(name="Auth", value="t")]
        ),
        SseMcpServer(type="sse", name="old", url="http://h/sse", headers=[]),
        McpServerStdio(name="calc", command="/bin/other", args=[], env=[]),
    ]

    configs = editor_server_configs(sent)

    assert configs == {
        "calc": McpServerConfig(command="/bin/calc", args=["-v"], env={"K": "1"}),
        "web": McpServerConfig(type="http", url="http://h/mcp", headers={"Auth": "t"}),
    }
    assert "editor MCP server old: its sse transport is not supported" in caplog.text
