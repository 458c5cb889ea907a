"""Gemini's generateContent API through the real litellm client, against the
format-faithful fake (fake_gemini.py): streamed text, function calls and their
responses, usage, and the errors a real server gives."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from app.llm.agent import AgentLoop
from app.llm.provider import Finish, Provider, ProviderError, ReasoningDelta, TextDelta, ToolCall, Usage
from tests.llm.fake_gemini import FakeGemini, Reasoning, Text, call_signature
from tests.llm.fake_gemini import ToolCall as ScriptedCall
from tests.llm.fake_server import READ_TOOL, answered

HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]


async def collect(fake: FakeGemini, **call) -> list:
    arguments = {"model": fake.model, "messages": HELLO, "tools": None, "api_key": fake.api_key, **call}
    stream = Provider(retry_base_delay=0.005).stream(base_url=fake.base_url, **arguments)
    return [event async for event in stream]


def of_type(events: list, kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


async def test_text_streams_with_usage_from_usage_metadata(fake_gemini):
    fake_gemini.reply(Text("Hel"), Text("lo"), usage=(21, 4))

    events = await collect(fake_gemini)

    assert of_type(events, TextDelta) == [TextDelta("Hel"), TextDelta("lo")]
    [usage] = of_type(events, Usage)
    assert (usage.prompt_tokens, usage.completion_tokens) == (21, 4)
    assert usage.cost > 0  # litellm prices gemini-2.5-flash
    assert events[-1] == Finish("stop")
    sent = fake_gemini.received[0]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert sent.query["alt"] == "sse"
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]


async def test_a_function_call_and_its_response_round_trip(fake_gemini):
    fake_gemini.reply(Reasoning("Need the file."), ScriptedCall("read", '{"path": "a.txt"}'))
    fake_gemini.reply(Text("It holds x."))
    first = await collect(fake_gemini, tools=[READ_TOOL], reasoning_effort="low")
    [call] = of_type(first, ToolCall)
    history = answered(HELLO, call, "x")

    second = await collect(fake_gemini, messages=history, tools=[READ_TOOL])

    assert (call.name, call.arguments) == ("read", '{"path": "a.txt"}')
    assert of_type(first, ReasoningDelta) == [ReasoningDelta("Need the file.")]
    assert first[-1] == Finish("tool_calls")
    assert fake_gemini.requests[0]["generationConfig"]["thinkingConfig"]["thinkingBudget"] > 0
    assert of_type(second, TextDelta) == [TextDelta("It holds x.")]


async def test_the_fake_refuses_a_function_response_without_its_call(fake_gemini):
    orphan = {
        "contents": [
            {"role": "user", "parts": [{"text": "hello"}]},
            {"role": "model", "parts": [{"text": "ok"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"content": "x"}}}]},
        ]
    }

    status, body = post(fake_gemini, "/v1beta/models/gemini-2.5-flash:generateContent", orphan)

    assert status == 400
    assert body["error"]["message"] == (
        "Please ensure that function response turn comes immediately after a function call turn."
    )


def post(fake: FakeGemini, path: str, body: dict) -> tuple[int, dict]:
    """A raw request, for what litellm itself would refuse to send."""
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=30)
    try:
        connection.request("POST", path, json.dumps(body), {"x-goog-api-key": fake.api_key})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


async def test_a_history_litellm_cannot_convert_fails_at_once_without_retries(fake_gemini):
    orphan = [*HELLO, {"role": "assistant", "content": "ok"}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]

    with pytest.raises(ProviderError) as caught:
        await collect(fake_gemini, messages=orphan, tools=[READ_TOOL])

    assert caught.value.kind == "unsent"
    assert str(caught.value).startswith("Could not send the request to gemini/gemini-2.5-flash (")
    assert fake_gemini.received == []


async def test_an_invalid_key_is_an_auth_error_not_retried(fake_gemini):
    with pytest.raises(ProviderError) as caught:
        await collect(fake_gemini, api_key="wrong")

    assert caught.value.kind == "auth"
    assert str(caught.value) == (
        f"The provider rejected the API key for {fake_gemini.model}: "
        "check GEMINI_API_KEY or providers.gemini.apiKey in .opencode.json"
    )
    assert len(fake_gemini.received) == 1


async def test_an_edit_turn_runs_through_the_agent_loop(make_runtime, fake_gemini, workspace: Path):
    (workspace / "greet.py").write_text("print('helo')\n")
    config = {"providers": {"gemini": {"baseURL": fake_gemini.base_url}}, "lsp": {"python": {"disabled": True}}}
    runtime = make_runtime(config=config)
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env={"GEMINI_API_KEY": fake_gemini.api_key})
    session = runtime.store.sessions.create(title="t").id
    fake_gemini.reply(ScriptedCall("view", '{"filePath": "greet.py"}'))
    fake_gemini.reply(ScriptedCall("edit", '{"filePath": "greet.py", "oldString": "helo", "newString": "hello"}'))
    fake_gemini.reply(Text("Fixed."), usage=(300, 3))

    result = await loop.run(session, "fix the typo", model=fake_gemini.model)

    assert result.reason == "stop", result.error
    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    assert result.files_changed == ["greet.py"]
    await loop.aclose()


async def test_gemini_3_gets_each_function_calls_thought_signature_back(make_runtime, fake_gemini, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    config = {"providers": {"gemini": {"baseURL": fake_gemini.base_url}}, "lsp": {"python": {"disabled": True}}}
    runtime = make_runtime(config=config)
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env={"GEMINI_API_KEY": fake_gemini.api_key})
    fake_gemini.reply(Reasoning("Read it first."), ScriptedCall("view", '{"filePath": "a.txt"}'))
    fake_gemini.reply(Text("It holds x."))

    result = await loop.run(runtime.store.sessions.create(title="t").id, "what is in a.txt?", model="gemini/gemini-3-pro-preview")

    assert result.reason == "stop", result.error
    [model_turn] = [c for c in fake_gemini.requests[1]["contents"] if c["role"] == "model"]
    [call] = [part for part in model_turn["parts"] if "function_call" in part or "functionCall" in part]
    assert call.get("thoughtSignature", call.get("thought_signature")) == call_signature("view", {"filePath": "a.txt"})
    await loop.aclose()
