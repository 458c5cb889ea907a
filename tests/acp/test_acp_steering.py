"""Prompts sent while a turn runs steer it (docs/acp.md, "Steering"), over the real ACP
wire against the fake OpenAI server. A real bash process holds the turn's first tool step
open on a FIFO until the test lets it go, so the messages are sent at a known point."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from acp import RequestError

from tests.acp.test_acp import text
from tests.gated_turn import bash, release, users
from tests.llm.fake_openai import Text
from tests.waiting import eventually


def allow_bash(workspace: Path) -> None:
    (workspace / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"bash": "allow"}}}))


def gated_first_step(workspace: Path, fake_llm) -> Path:
    """The turn's first step runs bash ``cat gate``, which waits until ``release(gate)``."""
    gate = workspace / "gate"
    os.mkfifo(gate)
    allow_bash(workspace)
    fake_llm.reply(bash("cat gate", "c1"))
    return gate


async def steer_gated_turn(client, fake_llm, sid: str, steering: str) -> tuple[asyncio.Task, asyncio.Task]:
    """Start the turn, wait for its first request, then send ``steering`` while it runs;
    returns both prompts once the running turn has taken the steering."""
    turn = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text("run three steps")))
    await eventually(lambda: len(fake_llm.requests) == 1, what="the turn's first request")
    steered = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text(steering)))
    await eventually(lambda: client.updates(sid, "agent_thought_chunk"), what="the steering taken")
    return turn, steered


async def test_prompts_sent_during_a_turn_reach_its_next_step(workspace: Path, fake_llm, acp_agent):
    gate = gated_first_step(workspace, fake_llm)
    fake_llm.reply(bash("echo two", "c2"))
    fake_llm.reply(bash("echo three", "c3"))
    fake_llm.reply(Text("All three done."))
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        turn = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text("run three steps")))
        await eventually(lambda: len(fake_llm.requests) == 1, what="the turn's first request")
        plain = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text("use the staging server")))
        await eventually(lambda: len(client.updates(sid, "agent_thought_chunk")) == 1, what="the first steering taken")
        command = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text("/steer and be brief")))
        await eventually(lambda: len(client.updates(sid, "agent_thought_chunk")) == 2, what="the second steering taken")
        assert [chunk["content"]["text"] for chunk in client.updates(sid, "agent_thought_chunk")] == [
            "next step: use the staging server\n", "next step: and be brief\n",
        ]  # fmt: skip
        assert not plain.done() and not command.done()
        release(gate).join(timeout=60)

        responses = await asyncio.wait_for(asyncio.gather(turn, plain, command), 60)
        assert [response.stop_reason for response in responses] == ["end_turn"] * 3
        assert len(fake_llm.requests) == 4
        first, after_first_tool, *rest = fake_llm.requests
        assert users(first) == ["run three steps"]
        messages = after_first_tool["messages"]
        assert messages[-3]["role"] == "tool" and messages[-3]["tool_call_id"] == "c1"
        assert messages[-2:] == [
            {"role": "user", "content": "use the staging server"}, {"role": "user", "content": "and be brief"},
        ]  # fmt: skip
        assert users(rest[-1]) == ["run three steps", "use the staging server", "and be brief"]


async def test_steer_with_no_turn_running_is_the_next_prompt(workspace: Path, fake_llm, acp_agent):
    fake_llm.reply(Text("Using staging."))
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        empty = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("/steer")), 60)
        assert empty.stop_reason == "end_turn" and not fake_llm.requests
        said = client.updates(sid, "agent_message_chunk")[-1]["content"]["text"]
        assert said == "/steer takes the message to give the running reply, e.g. /steer use the v2 API"

        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("/steer use staging")), 60)
        assert response.stop_reason == "end_turn"
        assert users(fake_llm.requests[0]) == ["use staging"]
        assert client.updates(sid, "agent_message_chunk")[-1]["content"]["text"] == "Using staging."


async def test_steering_a_cancelled_turn_is_cancelled_too(workspace: Path, fake_llm, acp_agent):
    gated_first_step(workspace, fake_llm)
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        turn, steering = await steer_gated_turn(client, fake_llm, sid, "stop that")
        await client.connection.cancel(session_id=sid)
        responses = await asyncio.wait_for(asyncio.gather(turn, steering), 60)
        assert [response.stop_reason for response in responses] == ["cancelled", "cancelled"]
        assert len(fake_llm.requests) == 1


async def test_steering_a_turn_that_fails_after_reading_it_answers_its_error(workspace: Path, fake_llm, acp_agent):
    gate = gated_first_step(workspace, fake_llm)
    fake_llm.fail(400, "the scripted provider refuses")
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        turn, steering = await steer_gated_turn(client, fake_llm, sid, "use staging")
        release(gate).join(timeout=60)
        outcomes = await asyncio.wait_for(asyncio.gather(turn, steering, return_exceptions=True), 60)
        assert all(isinstance(outcome, RequestError) for outcome in outcomes)
        assert [str(outcome) for outcome in outcomes][0] == str(outcomes[1])
        assert users(fake_llm.requests[1])[-1] == "use staging" and len(fake_llm.requests) == 2
