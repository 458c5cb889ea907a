"""`opencode acp` held to the Agent Client Protocol's schema: every frame of real sessions,
both ways, checked by wire_check.py against acp_schema.json (ACP v1's rules for the
messages we use) and the JSON-RPC ordering and error-code rules."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import EmbeddedResourceContentBlock, ResourceContentBlock, TextResourceContents

from app.acp.agent import STOP_REASONS
from app.acp.permissions import OPTIONS
from app.acp.updates import TOOL_KINDS
from tests.acp.test_acp import text
from tests.acp.wire_check import AGENT, CLIENT, SCHEMA, conversation_problems
from tests.llm.fake_openai import FakeOpenAI, Reasoning, Text, ToolCall
from tests.waiting import eventually

Frames = list[tuple[str, dict[str, Any]]]
SID = "s1"


def update(content: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": content}}


def a_turn() -> Frames:
    """A small conforming conversation for the checker's own tests."""
    return [
        (CLIENT, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        (AGENT, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "authMethods": []}}),
        (CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        (AGENT, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID}}),
        (CLIENT, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                  "params": {"sessionId": SID, "prompt": [{"type": "text", "text": "rm a"}]}}),
        (AGENT, update({"sessionUpdate": "tool_call_update", "toolCallId": "d1", "status": "completed", "content": [
            {"type": "diff", "path": "/w/a", "oldText": "a\n", "newText": "", "deleted": True},
        ]})),
        (AGENT, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
    ]  # fmt: skip


def replaced(index: int, message: dict[str, Any]) -> Callable[[Frames], Frames]:
    return lambda frames: [*frames[:index], (frames[index][0], message), *frames[index + 1:]]


def moved(source: int, target: int) -> Callable[[Frames], Frames]:
    def move(frames: Frames) -> Frames:
        frame = frames.pop(source)
        frames.insert(target, frame)
        return frames

    return move


def diff_with(**fields: Any) -> Callable[[Frames], Frames]:
    def edit(frames: Frames) -> Frames:
        frames[5][1]["params"]["update"]["content"][0].update(fields)
        return frames

    return edit


BROKEN = {
    "a misspelt field": (replaced(6, {"jsonrpc": "2.0", "id": 2, "result": {"stop_reason": "end_turn"}}),
                         "'stopReason' is a required property"),
    "a value outside an enum": (replaced(6, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "done"}}),
                                "'done' is not one of"),
    "an invented field on a diff": (diff_with(removed=True), "'removed' was unexpected"),
    "an MCP server's env as an object": (
        replaced(2, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": [
            {"name": "calc", "command": "/bin/calc", "args": [], "env": {"K": "1"}}]}}),
        "{'K': '1'} is not of type 'array'",
    ),
    "a wrong type": (diff_with(deleted="yes"), "'yes' is not of type 'boolean'"),
    "an update before session/new's response": (moved(5, 3), "before the editor learned its id"),
    "turn output after the turn's response": (moved(5, 6), "while no prompt or load of it runs"),
    "a reserved error code": (replaced(6, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32500, "message": "x"}}),
                              "reserved by JSON-RPC"),
    "a response that answers nothing": (lambda frames: [*frames, (AGENT, {"jsonrpc": "2.0", "id": 9, "result": {}})],
                                        "which no open request has"),
    "a request never answered": (lambda frames: frames[:-1], "session/prompt request 2 was never answered"),
    "a method the editor never offered": (
        lambda frames: [*frames, (AGENT, {"jsonrpc": "2.0", "id": 0, "method": "fs/read_text_file",
                                          "params": {"sessionId": SID, "path": "/w/a"}})],
        "never offered",
    ),
}  # fmt: skip


def test_the_checker_passes_a_conforming_turn_with_the_deleted_flag():
    assert conversation_problems(a_turn()) == []


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_the_checker_catches(case: str):
    break_it, expected = BROKEN[case]
    problems = conversation_problems(break_it(copy.deepcopy(a_turn())))
    assert any(expected in problem for problem in problems), problems


def test_the_values_we_map_to_are_the_schemas():
    def enum(definition: str) -> set[str]:
        return set(SCHEMA["$defs"][definition]["enum"])

    assert set(STOP_REASONS.values()) <= enum("StopReason")
    assert set(TOOL_KINDS.values()) | {"move", "other"} <= enum("ToolKind")
    assert {option.kind for option in OPTIONS} <= enum("PermissionOptionKind")


def script_a_session(fake: FakeOpenAI) -> None:
    """Thinking, text, a read, a plan, an edit and a delete (both allowed), a refused write; then
    a delete cancelled while its question is open; then a reply cancelled mid-stream."""
    fake.reply(Reasoning("Plan first."), Text("Looking."), ToolCall("view", json.dumps({"filePath": "a.py"}), id="v1"))
    plan = [{"content": "Edit a.py", "status": "in_progress", "priority": "high"},
            {"content": "Tidy notes", "status": "cancelled"}]  # fmt: skip
    fake.reply(ToolCall("todowrite", json.dumps({"todos": plan}), id="t1"))
    fake.reply(ToolCall("edit", json.dumps({"filePath": "a.py", "oldString": "x = 1", "newString": "x = 2"}), id="e1"))
    fake.reply(ToolCall("delete", json.dumps({"path": "notes.txt"}), id="d1"))
    fake.reply(ToolCall("write", json.dumps({"filePath": "secret.txt", "content": "no\n"}), id="w1"))
    fake.reply(Text("Done."))
    fake.reply(ToolCall("delete", json.dumps({"path": "build"}), id="d2"))
    fake.reply(Text("one "), Text("two "), Text("three"), hang_after=3)


LIVE_UPDATES = {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "usage_update",
                "available_commands_update", "current_mode_update", "plan"}  # fmt: skip
REPLAYED_UPDATES = {"user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "plan"}


def updates(frames: Frames) -> list[dict[str, Any]]:
    return [message["params"]["update"] for _, message in frames if message.get("method") == "session/update"]


def diffs(frames: Frames) -> list[dict[str, Any]]:
    contents = [update["content"] for update in updates(frames) if isinstance(update.get("content"), list)]
    return [item for content in contents for item in content if item["type"] == "diff"]


def client_methods(frames: Frames) -> set[str]:
    return {message["method"] for sender, message in frames if sender == CLIENT and "method" in message}


def permission_outcomes(frames: Frames) -> set[str]:
    results = [message.get("result") or {} for sender, message in frames if sender == CLIENT]
    return {result["outcome"]["outcome"] for result in results if "outcome" in result}


def with_context(workspace: Path, words: str) -> list[Any]:
    """A prompt as editors send one: text, a link to a file and a file embedded (ACP's
    baseline plus the embeddedContext we advertise)."""
    link = ResourceContentBlock(type="resource_link", name="a.py", uri=(workspace / "a.py").as_uri())
    note = TextResourceContents(uri=(workspace / "notes.txt").as_uri(), text="gone\n")
    return [*text(words), link, EmbeddedResourceContentBlock(type="resource", resource=note)]


async def stop_reason(client, session_id: str, prompt: str | list[Any]) -> str:
    blocks = text(prompt) if isinstance(prompt, str) else prompt
    return (await asyncio.wait_for(client.connection.prompt(session_id=session_id, prompt=blocks), 60)).stop_reason


async def prompt_and_cancel_once_talking(client, session_id: str) -> str:
    prompt = asyncio.create_task(client.connection.prompt(session_id=session_id, prompt=text("talk")))
    await eventually(
        lambda: any(chunk["content"]["text"] == "one " for chunk in client.updates(session_id, "agent_message_chunk")),
        what="the first message chunk",
    )
    await client.connection.cancel(session_id=session_id)
    return (await asyncio.wait_for(prompt, 30)).stop_reason


async def test_every_frame_of_a_session_and_its_reload_follows_the_schema(workspace, fake_llm, acp_agent):
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "notes.txt").write_text("gone\n")
    (workspace / "build").mkdir()
    (workspace / "build/b.txt").write_text("b\n")
    script_a_session(fake_llm)
    async with acp_agent(workspace, fake_llm, ["allow_once", "allow_once", "reject_once", "cancel"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        await client.connection.set_session_mode(session_id=sid, mode_id="coder")
        stops = [await stop_reason(client, sid, with_context(workspace, "tidy up"))]
        stops.append(await stop_reason(client, sid, "remove build"))
        stops.append(await prompt_and_cancel_once_talking(client, sid))
        stops.append(await stop_reason(client, sid, "/changes"))
        live = client.wire

    assert conversation_problems(live) == []
    assert stops == ["end_turn", "cancelled", "cancelled", "end_turn"]
    assert LIVE_UPDATES <= {update["sessionUpdate"] for update in updates(live)}
    assert permission_outcomes(live) == {"selected", "cancelled"}
    assert client_methods(live) >= {"initialize", "session/cancel", "session/set_mode"}
    assert {Path(diff["path"]).name for diff in diffs(live) if diff.get("deleted")} == {"notes.txt"}
    assert (workspace / "build/b.txt").exists()

    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        replayed = client.wire

    assert conversation_problems(replayed) == []
    assert REPLAYED_UPDATES <= {update["sessionUpdate"] for update in updates(replayed)}


async def test_initialize_answers_the_one_version_we_speak_and_lists_no_auth_methods(workspace, fake_llm, acp_agent):
    """ACP: the version the client asked for if the agent supports it, else the agent's
    latest. We speak 1 only, so an older 0 gets 1 too (the client then decides)."""
    async with acp_agent(workspace, fake_llm) as client:
        answers = [await client.connection.initialize(protocol_version=asked) for asked in (0, 1, 9)]
    results = [message["result"] for sender, message in client.wire if sender == AGENT and "result" in message]

    assert [answer.protocol_version for answer in answers] == [1, 1, 1]
    assert [result["authMethods"] for result in results] == [[], [], [], []]  # the fixture's initialize too
    assert conversation_problems(client.wire) == []


async def test_a_relative_cwd_is_refused_as_the_spec_asks_for_an_absolute_path(workspace, fake_llm, acp_agent):
    (workspace / "sub").mkdir()
    async with acp_agent(workspace, fake_llm) as client:
        with pytest.raises(RequestError) as refused:
            await client.connection.new_session(cwd="sub")

    assert refused.value.code == -32602
    assert refused.value.data["message"] == "cwd sub is not an absolute path: send the workspace folder's absolute path"
    assert conversation_problems(client.wire) == []
