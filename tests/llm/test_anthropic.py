"""Anthropic's Messages API through the real litellm client, against the format-faithful
fake (fake_anthropic.py): streaming, tool round trips, prompt caching and its usage and
cost, extended thinking with tools, and the errors a real server gives."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.headless.run import run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.agent import AgentLoop
from app.llm.events import UsageUpdated
from app.llm.provider import (
    Finish,
    Provider,
    ProviderError,
    Retrying,
    TextDelta,
    ThinkingBlock,
    ToolCall,
    ToolCallDelta,
    Usage,
    ensure_litellm,
)
from app.runtime import Runtime
from tests.llm.fake_anthropic import FakeAnthropic, Reasoning, Text, sign
from tests.llm.fake_anthropic import ToolCall as ScriptedCall
from tests.llm.fake_server import READ_TOOL, answered

SYSTEM = {"role": "system", "content": "You are a careful coding assistant. " * 60}
HELLO = [SYSTEM, {"role": "user", "content": "hello"}]


async def collect(fake: FakeAnthropic, provider: Provider | None = None, **call) -> list:
    arguments = {"model": fake.model, "messages": HELLO, "tools": None, **call}
    stream = (provider or Provider(retry_base_delay=0.005)).stream(
        base_url=fake.base_url, api_key=fake.api_key, **arguments
    )
    return [event async for event in stream]


def of_type(events: list, kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


def breakpoints(request: dict) -> list[str]:
    """Where a request placed cache_control: "tools", "system", or "messages.<i>"."""
    found = ["tools" for tool in request.get("tools") or [] if "cache_control" in tool]
    found += ["system" for block in request.get("system") or [] if "cache_control" in block]
    for index, message in enumerate(request["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        found += [f"messages.{index}" for block in content if "cache_control" in block]
    return found


# -- streaming ---------------------------------------------------------------------------


async def test_text_and_two_tool_calls_stream_with_their_json_reassembled(fake_anthropic):
    first, second = '{"path": "src/app.py"}', '{"path": "README.md"}'
    fake_anthropic.reply(
        Text("Reading "), Text("both."), ScriptedCall("read", first, fragments=4), ScriptedCall("read", second)
    )

    events = await collect(fake_anthropic, tools=[READ_TOOL])

    assert of_type(events, TextDelta) == [TextDelta("Reading "), TextDelta("both.")]
    assert of_type(events, ToolCall) == [
        ToolCall("toolu_fake0000", "read", first),
        ToolCall("toolu_fake0001", "read", second),
    ]
    assert [d.index for d in of_type(events, ToolCallDelta) if d.arguments_delta] == [0] * 4 + [1] * 3
    assert events[-1] == Finish("tool_calls")
    sent = fake_anthropic.received[0]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == fake_anthropic.api_key
    assert sent.body["system"][0]["text"] == SYSTEM["content"]
    assert sent.body["tools"][0]["name"] == "read"


async def test_a_tool_result_round_trip_is_accepted(fake_anthropic):
    fake_anthropic.reply(ScriptedCall("read", '{"path": "a.txt"}', id="toolu_a"))
    fake_anthropic.reply(Text("a.txt holds x."))
    [call] = of_type(await collect(fake_anthropic, tools=[READ_TOOL]), ToolCall)
    history = answered(HELLO, call, "x")

    events = await collect(fake_anthropic, messages=history, tools=[READ_TOOL])

    assert of_type(events, TextDelta) == [TextDelta("a.txt holds x.")]
    [result] = fake_anthropic.requests[1]["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_a"


# -- prompt caching, usage and cost --------------------------------------------------------


async def test_cache_breakpoints_make_the_second_request_read_the_prefix(fake_anthropic):
    fake_anthropic.reply(Text("Hi"), usage=(12, 3))
    fake_anthropic.reply(Text("Again"), usage=(9, 2))
    first = await collect(fake_anthropic, tools=[READ_TOOL], prompt_cache=True)
    longer = [*HELLO, {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "again"}]

    second = await collect(fake_anthropic, messages=longer, tools=[READ_TOOL], prompt_cache=True)

    assert breakpoints(fake_anthropic.requests[0]) == ["system", "messages.0"]
    assert breakpoints(fake_anthropic.requests[1]) == ["system", "messages.1", "messages.2"]
    written, read = fake_anthropic.reported
    assert written["cache_creation_input_tokens"] > 0 and written["cache_read_input_tokens"] == 0
    assert read["cache_read_input_tokens"] == written["cache_creation_input_tokens"]
    [usage] = of_type(second, Usage)
    assert usage.cache_read_tokens == read["cache_read_input_tokens"]
    assert usage.cache_write_tokens == read["cache_creation_input_tokens"]
    assert usage.prompt_tokens == 9 + usage.cache_read_tokens + usage.cache_write_tokens
    assert of_type(first, Usage)[0].cache_write_tokens == written["cache_creation_input_tokens"]


async def test_cost_prices_cache_reads_and_writes_at_litellms_cache_prices(fake_anthropic):
    litellm = await ensure_litellm()
    info = litellm.get_model_info(fake_anthropic.model)
    fake_anthropic.reply(Text("Hi"), usage=(100, 20))
    fake_anthropic.reply(Text("Again"), usage=(100, 20))
    await collect(fake_anthropic, prompt_cache=True)

    [usage] = of_type(await collect(fake_anthropic, prompt_cache=True), Usage)

    assert usage.cache_read_tokens > 0
    expected = (
        100 * info["input_cost_per_token"]
        + usage.cache_read_tokens * info["cache_read_input_token_cost"]
        + usage.cache_write_tokens * info["cache_creation_input_token_cost"]
        + 20 * info["output_cost_per_token"]
    )
    assert usage.cost == pytest.approx(expected)
    assert info["cache_read_input_token_cost"] < info["input_cost_per_token"]


async def test_without_prompt_cache_no_breakpoint_is_sent(fake_anthropic):
    fake_anthropic.reply(Text("Hi"))

    [usage] = of_type(await collect(fake_anthropic, tools=[READ_TOOL]), Usage)

    assert breakpoints(fake_anthropic.requests[0]) == []
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (0, 0)


# -- thinking ------------------------------------------------------------------------------


async def test_reasoning_effort_turns_thinking_on_and_the_signed_block_comes_back(fake_anthropic):
    fake_anthropic.reply(Reasoning("The user "), Reasoning("greets me."), Text("Hi!"))

    events = await collect(fake_anthropic, reasoning_effort="low")

    thinking = fake_anthropic.requests[0]["thinking"]
    assert thinking["type"] == "enabled" and thinking["budget_tokens"] >= 1024
    assert of_type(events, ThinkingBlock) == [ThinkingBlock("The user greets me.", sign("The user greets me."))]


# -- errors a real server gives --------------------------------------------------------------


async def test_a_rejected_key_is_not_retried_and_says_rejected(fake_anthropic):
    with pytest.raises(ProviderError) as caught:
        await collect_with_key(fake_anthropic, "sk-ant-wrong")

    assert caught.value.kind == "auth"
    assert str(caught.value) == (
        f"The provider rejected the API key for {fake_anthropic.model}: "
        "check ANTHROPIC_API_KEY or providers.anthropic.apiKey in .opencode.json"
    )
    assert len(fake_anthropic.received) == 1


async def collect_with_key(fake: FakeAnthropic, key: str) -> list:
    stream = Provider(retry_base_delay=0.005).stream(
        model=fake.model, messages=HELLO, tools=None, base_url=fake.base_url, api_key=key
    )
    return [event async for event in stream]


async def test_a_forbidden_key_403_is_not_retried(fake_anthropic):
    fake_anthropic.fail(403, "Your API key does not have permission to use the specified resource.", type_="permission_error")

    with pytest.raises(ProviderError) as caught:
        await collect(fake_anthropic)

    assert caught.value.kind == "auth" and "rejected" in str(caught.value)
    assert len(fake_anthropic.received) == 1


async def test_a_429_with_retry_after_1_is_retried_after_about_a_second(fake_anthropic):
    fake_anthropic.fail(429, "Number of requests has exceeded your rate limit", type_="rate_limit_error", retry_after="1")
    fake_anthropic.reply(Text("ok"))

    events = await collect(fake_anthropic, Provider())  # the real delays: Retry-After is honoured as sent

    [retry] = of_type(events, Retrying)
    assert retry.delay == pytest.approx(1.0)
    first, second = fake_anthropic.received
    assert 0.9 <= second.at - first.at < 30  # the upper bound only catches "never waited for"
    assert of_type(events, TextDelta) == [TextDelta("ok")]


@pytest.mark.parametrize("status", [500, 529])
async def test_overloaded_and_server_errors_are_retried(fake_anthropic, status):
    fake_anthropic.fail(status, "Overloaded", type_="overloaded_error")
    fake_anthropic.reply(Text("ok"))

    events = await collect(fake_anthropic)

    assert len(of_type(events, Retrying)) == 1 and len(fake_anthropic.received) == 2


async def test_the_fake_refuses_a_tool_result_without_its_tool_use(fake_anthropic):
    orphan = [*HELLO, {"role": "assistant", "content": "Done."}, {"role": "tool", "tool_call_id": "toolu_x", "content": "x"}]

    with pytest.raises(ProviderError) as caught:
        await collect(fake_anthropic, messages=orphan, tools=[READ_TOOL])

    assert caught.value.kind == "request"
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_x" in str(caught.value)


def continued_after_call(thinking_blocks: list[dict] | None) -> list[dict]:
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "toolu_a", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
    }
    if thinking_blocks is not None:
        assistant["thinking_blocks"] = thinking_blocks
    return [*HELLO, assistant, {"role": "tool", "tool_call_id": "toolu_a", "content": "x"}]


async def test_the_fake_refuses_a_tool_turn_without_its_thinking_when_thinking_is_on(fake_anthropic):
    with pytest.raises(ProviderError) as caught:
        await collect(fake_anthropic, messages=continued_after_call(None), tools=[READ_TOOL], reasoning_effort="low")

    assert str(caught.value).startswith(
        "anthropic/claude-sonnet-4-5 rejected the request (HTTP 400): messages.1.content.0.type: "
        "Expected `thinking` or `redacted_thinking`, but found `tool_use`."
    )


async def test_the_fake_refuses_an_altered_signature(fake_anthropic):
    altered = [{"type": "thinking", "thinking": "I will read it.", "signature": sign("I will read it!")}]

    with pytest.raises(ProviderError) as caught:
        await collect(fake_anthropic, messages=continued_after_call(altered), tools=[READ_TOOL], reasoning_effort="low")

    assert "Invalid `signature` in `thinking` block" in str(caught.value)


async def test_the_fake_accepts_the_thinking_block_sent_back_as_received(fake_anthropic):
    fake_anthropic.reply(Text("ok"))
    block = [{"type": "thinking", "thinking": "I will read it.", "signature": sign("I will read it.")}]

    await collect(fake_anthropic, messages=continued_after_call(block), tools=[READ_TOOL], reasoning_effort="low")

    assert fake_anthropic.requests[0]["messages"][1]["content"][0] == {"type": "thinking", **block[0]}


# -- the agent loop against it ---------------------------------------------------------------


def anthropic_loop(runtime: Runtime, fake: FakeAnthropic) -> AgentLoop:
    return AgentLoop(runtime, Provider(retry_base_delay=0.005), env={"ANTHROPIC_API_KEY": fake.api_key})


def anthropic_config(fake: FakeAnthropic, **coder) -> dict:
    return {
        "providers": {"anthropic": {"baseURL": fake.base_url}},
        "agents": {"coder": coder},
        "lsp": {"python": {"disabled": True}},
    }


async def test_an_edit_turn_with_thinking_sends_each_signed_block_back_and_reads_the_cache(
    make_runtime, fake_anthropic, workspace: Path
):
    (workspace / "greet.py").write_text("print('helo')\n")
    runtime = make_runtime(config=anthropic_config(fake_anthropic, reasoningEffort="low"))
    loop = anthropic_loop(runtime, fake_anthropic)
    session = runtime.store.sessions.create(title="t").id
    usage_events = runtime.bus.subscribe(UsageUpdated)
    fix = {"filePath": "greet.py", "oldString": "helo", "newString": "hello"}
    fake_anthropic.reply(Reasoning("Look first."), ScriptedCall("view", '{"filePath": "greet.py"}', id="toolu_v"))
    fake_anthropic.reply(Reasoning("Fix the typo."), Text("Fixing."), ScriptedCall("edit", json.dumps(fix), id="toolu_e"))
    fake_anthropic.reply(Text("Fixed."))

    result = await loop.run(session, "fix the typo in greet.py", model=fake_anthropic.model)

    assert result.reason == "stop", result.error
    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    first, second, third = fake_anthropic.requests
    assert second["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": "Look first.", "signature": sign("Look first.")
    }
    assert third["messages"][3]["content"][0] == {
        "type": "thinking", "thinking": "Fix the typo.", "signature": sign("Fix the typo.")
    }
    for request in (second, third):
        marks = breakpoints(request)
        assert marks[0] == "system" and len(marks) == 3
        assert marks[-1] == f"messages.{len(request['messages']) - 1}"
    assert [usage["cache_read_input_tokens"] > 0 for usage in fake_anthropic.reported] == [False, True, True]
    assert result.usage["cache_read_tokens"] == sum(u["cache_read_input_tokens"] for u in fake_anthropic.reported)
    assert result.usage["cache_write_tokens"] == sum(u["cache_creation_input_tokens"] for u in fake_anthropic.reported)
    updates = [usage_events.get_nowait() for _ in range(3)]
    assert [u.cache_read_tokens for u in updates] == [u["cache_read_input_tokens"] for u in fake_anthropic.reported]
    stored = [m for m in runtime.store.messages.list(session) if m.role == "assistant"]
    assert stored[0].parts[0] == {"type": "reasoning", "text": "Look first.", "signature": sign("Look first.")}
    await loop.aclose()


async def test_cache_false_in_config_sends_no_breakpoints(make_runtime, fake_anthropic):
    config = anthropic_config(fake_anthropic)
    config["providers"]["anthropic"]["cache"] = False
    runtime = make_runtime(config=config)
    loop = anthropic_loop(runtime, fake_anthropic)
    fake_anthropic.reply(Text("Hi"))

    result = await loop.run(runtime.store.sessions.create(title="t").id, "hi", model=fake_anthropic.model)

    assert result.reason == "stop"
    assert breakpoints(fake_anthropic.requests[0]) == []
    await loop.aclose()


async def test_switching_model_mid_session_sends_no_thinking_to_the_other_provider(
    make_runtime, fake_anthropic, fake_llm, workspace: Path
):
    (workspace / "a.txt").write_text("x\n")
    config = anthropic_config(fake_anthropic, reasoningEffort="low")
    runtime = make_runtime(config=config)
    env = {"ANTHROPIC_API_KEY": fake_anthropic.api_key, **fake_llm.env}
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env=env)
    session = runtime.store.sessions.create(title="t").id
    fake_anthropic.reply(Reasoning("Read it."), ScriptedCall("view", '{"filePath": "a.txt"}'))
    fake_anthropic.reply(Text("It holds x."))
    fake_llm.reply(Text("Still x."))
    fake_anthropic.reply(Text("Yes, x."))

    await loop.run(session, "what is in a.txt?", model=fake_anthropic.model)
    switched = await loop.run(session, "sure?", model=fake_llm.model)
    back = await loop.run(session, "and now?", model=fake_anthropic.model)

    assert switched.reason == "stop" and back.reason == "stop", (switched.error, back.error)
    sent_to_openai = json.dumps(fake_llm.requests[0])
    assert sign("Read it.") not in sent_to_openai and "thinking" not in sent_to_openai
    assert fake_anthropic.requests[-1]["messages"][1]["content"][0]["signature"] == sign("Read it.")
    await loop.aclose()


def test_headless_json_usage_reports_cache_reads_and_writes(workspace: Path, fake_anthropic):
    config = {"providers": {"anthropic": {"baseURL": fake_anthropic.base_url}}, "lsp": {"python": {"disabled": True}}}
    (workspace / ".opencode.json").write_text(json.dumps(config))
    env = {"ANTHROPIC_API_KEY": fake_anthropic.api_key}
    fake_anthropic.reply(Text("Hi."), usage=(20, 2))
    fake_anthropic.reply(Text("Again."), usage=(15, 3))
    payloads = []
    for continue_last in (False, True):
        out = io.StringIO()
        request = HeadlessRequest("hello", output_format="json", model=fake_anthropic.model, continue_last=continue_last)
        code = run_headless(workspace, request, env=env, stdout=out, stderr=io.StringIO())
        assert code == 0
        payloads.append(json.loads(out.getvalue()))

    first, second = (payload["usage"] for payload in payloads)
    written, read = fake_anthropic.reported
    assert first["cache_write_tokens"] == written["cache_creation_input_tokens"] > 0
    assert second["cache_read_tokens"] == read["cache_read_input_tokens"] > 0
    assert second["prompt_tokens"] == 15 + read["cache_read_input_tokens"] + read["cache_creation_input_tokens"]
    assert payloads[1]["cost"] > 0
