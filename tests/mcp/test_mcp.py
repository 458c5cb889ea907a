"""MCP tools against a real server process (calc_server.py over stdio, and over HTTP):
listing, the permission engine, calls and their results, failing and dying servers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import pytest

from app.config import McpServerConfig
from app.core.errors import PermissionDeniedError, ToolError
from app.mcp import McpManager, McpStatusChanged, tool_name
from app.permission import PermissionReply
from tests.mcp.conftest import calc_over_http, calc_server


async def test_server_tools_are_listed_as_server_underscore_tool(mcp_runtime):
    runtime = await mcp_runtime({"calc": calc_server()})

    tools = runtime.mcp.tools()

    assert {"calc_add", "calc_echo", "calc_write_note", "calc_crash"} <= set(tools)
    spec = tools["calc_add"].spec()["function"]
    assert spec["name"] == "calc_add"
    assert spec["description"] == "Add two integers."
    assert spec["parameters"]["properties"].keys() == {"a", "b"}
    assert spec["parameters"]["required"] == ["a", "b"]
    assert spec["parameters"]["title"] == "addArguments"  # the server's schema, untouched


async def test_connecting_publishes_status_events(make_runtime):
    runtime = make_runtime(config={"mcpServers": {"calc": calc_server()}})
    subscription = runtime.bus.subscribe(McpStatusChanged)
    try:
        await runtime.mcp.wait_ready()
        seen = [await subscription.get(), await subscription.get()]
    finally:
        subscription.close()
        await runtime.mcp.aclose()

    assert [(event.server, event.state) for event in seen] == [("calc", "connecting"), ("calc", "connected")]
    assert seen[1].tools == 5  # add, echo, write_note, picture, crash


async def test_an_interactive_call_asks_under_the_tool_name_then_returns_the_server_answer(
    mcp_runtime, permission_answers, session_id
):
    runtime = await mcp_runtime({"calc": calc_server()}, policy="interactive")
    answers = permission_answers(runtime, PermissionReply("allow_once"))

    result = await runtime.mcp.tools()["calc_add"].call('{"a": 2, "b": 40}', runtime.context(session_id))

    assert result.output == "42"
    assert result.metadata == {"server": "calc", "tool": "add"}
    [request] = answers.requests
    assert request.tool == "calc_add"
    assert request.subject == '{"a":2,"b":40}'
    assert json.loads(request.preview.text) == {"a": 2, "b": 40}


async def test_a_denied_call_never_reaches_the_server(mcp_runtime, permission_answers, session_id, workspace):
    runtime = await mcp_runtime({"calc": calc_server()}, policy="interactive")
    permission_answers(runtime, PermissionReply("deny"))

    with pytest.raises(PermissionDeniedError):
        await runtime.mcp.tools()["calc_write_note"].call({"text": "hi"}, runtime.context(session_id))

    assert not (workspace / "note.txt").exists()


async def test_headless_denies_and_headless_yes_allows(mcp_runtime, session_id, workspace):
    denied = await mcp_runtime({"calc": calc_server()}, policy="headless")
    with pytest.raises(PermissionDeniedError):
        await denied.mcp.tools()["calc_write_note"].call({"text": "no"}, denied.context(session_id))
    assert not (workspace / "note.txt").exists()

    allowed = await mcp_runtime({"calc": calc_server()}, policy="headless-yes")
    result = await allowed.mcp.tools()["calc_write_note"].call({"text": "yes"}, allowed.context(session_id))
    assert result.output == "written"
    assert (workspace / "note.txt").read_text() == "yes"  # stdio servers run in the workspace


async def test_a_rule_on_the_tool_name_allows_without_asking(mcp_runtime, permission_answers, session_id):
    runtime = await mcp_runtime(
        {"calc": calc_server()}, policy="interactive", permission={"rules": {"calc_echo": "allow"}}
    )
    answers = permission_answers(runtime)

    result = await runtime.mcp.tools()["calc_echo"].call(
        {"text": "héllo\nworld"}, runtime.context(session_id)
    )

    assert result.output == "héllo\nworld"
    assert answers.requests == []


async def test_arguments_must_be_an_object_and_the_server_validates_the_rest(mcp_runtime, session_id):
    runtime = await mcp_runtime({"calc": calc_server()})
    add = runtime.mcp.tools()["calc_add"]

    with pytest.raises(ToolError, match="must be a JSON object"):
        await add.call("[1, 2]", runtime.context(session_id))
    with pytest.raises(ToolError) as failure:
        await add.call({"a": "x"}, runtime.context(session_id))

    message = str(failure.value)
    assert message.startswith("calc_add: the server reported an error:")
    assert "\n" not in message and "validation error" in message


async def test_non_text_content_is_summarised(mcp_runtime, session_id):
    runtime = await mcp_runtime({"calc": calc_server()})

    result = await runtime.mcp.tools()["calc_picture"].call({}, runtime.context(session_id))

    assert result.output == "a tiny picture\n[image: image/png, 4 bytes, not shown]"


async def test_a_bad_command_fails_alone_and_the_runtime_still_works(make_runtime, session_id, workspace):
    config = {"mcpServers": {"broken": {"command": "/nonexistent/mcp-server"}, "calc": calc_server()}}
    runtime = make_runtime(config=config)
    subscription = runtime.bus.subscribe(McpStatusChanged)
    try:
        await runtime.mcp.wait_ready()
        events = []
        while len([e for e in events if e.state != "connecting"]) < 2:
            events.append(await subscription.get())
    finally:
        subscription.close()
        await runtime.mcp.aclose()

    [failed] = [event for event in events if event.server == "broken" and event.state == "failed"]
    assert "command not found" in failed.message and "/nonexistent/mcp-server" in failed.message
    assert any(event.server == "calc" and event.state == "connected" for event in events)
    (workspace / "a.txt").write_text("still here\n")
    listing = await runtime.tools["ls"].call({}, runtime.context(session_id))
    assert "a.txt" in listing.output


async def test_a_server_that_exits_at_start_reports_its_last_words(mcp_runtime):
    script = "import sys; sys.stderr.write('boom: MCP_TOKEN is not set\\n'); sys.exit(1)"
    runtime = await mcp_runtime({"dies": {"command": sys.executable, "args": ["-c", script]}})

    [status] = runtime.mcp.statuses()
    assert status.state == "failed"
    assert "boom: MCP_TOKEN is not set" in status.message
    assert runtime.mcp.tools() == {}


async def test_a_server_name_with_a_slash_connects_and_logs_inside_the_log_folder(mcp_runtime, workspace):
    runtime = await mcp_runtime({"acme/calc": calc_server()})

    assert [(s.server, s.state) for s in runtime.mcp.statuses()] == [("acme/calc", "connected")]
    assert "acme_calc_add" in runtime.mcp.tools()
    [log] = (workspace / ".opencode" / "mcp").iterdir()
    assert log.is_file() and log.name.startswith("acme_calc")


async def test_a_server_that_never_answers_times_out(runtime, workspace):
    silent = McpServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    manager = McpManager(
        {"silent": silent},
        runtime.bus,
        cwd=workspace,
        log_dir=workspace / ".logs",
        connect_timeout=0.5,
    )
    try:
        await asyncio.wait_for(manager.wait_ready(), timeout=10)
        [status] = manager.statuses()
    finally:
        await manager.aclose()

    assert (status.state, status.message) == ("failed", "no answer within 0.5 s")


async def test_a_server_that_dies_turns_calls_into_tool_errors(mcp_runtime, session_id):
    runtime = await mcp_runtime({"calc": calc_server()})
    tools = runtime.mcp.tools()
    ctx = runtime.context(session_id)

    with pytest.raises(ToolError, match="'calc' stopped during the call to crash"):
        await tools["calc_crash"].call({}, ctx)
    with pytest.raises(ToolError, match="'calc' is not connected"):
        await tools["calc_add"].call({"a": 1, "b": 1}, ctx)

    assert runtime.mcp.statuses()[0].state == "failed"
    assert runtime.mcp.tools() == {}


async def test_a_server_that_dies_while_idle_shows_as_failed_at_once(mcp_runtime, workspace):
    pid_file = workspace.parent / "idle.pid"
    runtime = await mcp_runtime({"calc": calc_server(env={"MCP_PID_FILE": str(pid_file)})})
    async with runtime.bus.subscribe(McpStatusChanged) as events:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        status = await asyncio.wait_for(events.get(), 10)

    assert (status.server, status.state, status.message) == ("calc", "failed", "the server stopped")
    assert runtime.mcp.tools() == {}  # gone from the next turn's list, without a call first


async def test_disabled_servers_are_not_started(mcp_runtime):
    runtime = await mcp_runtime({"calc": calc_server(disabled=True)})

    assert runtime.mcp.statuses() == []
    assert runtime.mcp.tools() == {}


async def test_closing_ends_the_server_process(mcp_runtime, workspace):
    pid_file = workspace.parent / "calc.pid"
    runtime = await mcp_runtime({"calc": calc_server(env={"MCP_PID_FILE": str(pid_file)})})
    pid = int(pid_file.read_text())

    await runtime.mcp.aclose()

    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert runtime.mcp.statuses()[0].state == "closed"


async def test_streamable_http_server_with_headers(mcp_runtime, session_id):
    async with calc_over_http() as url:
        runtime = await mcp_runtime({"web": {"type": "http", "url": url, "headers": {"X-Test": "1"}}})
        assert runtime.mcp.statuses()[0].state == "connected", runtime.mcp.statuses()
        result = await runtime.mcp.tools()["web_add"].call({"a": 20, "b": 22}, runtime.context(session_id))

    assert result.output == "42"


def test_names_keep_only_characters_providers_accept():
    assert tool_name("git hub", "create.issue") == "git_hub_create_issue"
    assert len(tool_name("s" * 40, "t" * 40)) == 64


def test_long_names_are_cut_yet_stay_distinct_and_stable():
    first, second = tool_name("s" * 40, "t" * 40 + "_one"), tool_name("s" * 40, "t" * 40 + "_two")
    assert len(first) == len(second) == 64 and first != second
    assert first == tool_name("s" * 40, "t" * 40 + "_one")  # the same every run: rules keep matching


async def test_two_servers_whose_names_read_the_same_both_keep_their_tools(mcp_runtime, session_id):
    runtime = await mcp_runtime({"x.y": calc_server(), "x_y": calc_server()})
    tools = runtime.mcp.tools()

    assert len(tools) == 10
    assert tools["x_y_add"].server == "x.y"  # the first in config order keeps the plain name
    [renamed] = [tool for tool in tools.values() if tool.server == "x_y" and tool.remote_name == "add"]
    assert renamed.name.startswith("x_y_add_") and renamed.spec()["function"]["name"] == renamed.name
    result = await renamed.call({"a": 1, "b": 2}, runtime.context(session_id))
    assert (result.output, result.metadata["server"]) == ("3", "x_y")
