"""The provider adapter, driven through the real litellm client over HTTP to the fake server."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.llm.models import (
    DEFAULT_MODELS,
    NO_KEY_PLACEHOLDER,
    ONBOARDING_MESSAGE,
    PROVIDER_ENV_VARS,
    choose_model,
    credentials_for,
)
from app.llm.provider import (
    DEFAULT_CONTEXT_WINDOW,
    FIRST_REQUEST_MODULES,
    MAX_DELAY_FACTOR,
    Finish,
    Provider,
    ProviderError,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    context_window,
    ensure_litellm,
    start_background_import,
)
from tests.llm.fake_openai import FakeOpenAI, Reasoning, Text, ToolCallFragment
from tests.llm.fake_openai import ToolCall as ScriptedCall
from tests.llm.fake_server import READ_TOOL

REPO_ROOT = Path(__file__).resolve().parents[2]
HELLO = [{"role": "user", "content": "hello"}]
FAST_BASE_DELAY = 0.005  # keeps every retry (and the Retry-After cap) well under a second


def fast_provider(**overrides) -> Provider:
    return Provider(**{"retry_base_delay": FAST_BASE_DELAY, **overrides})


async def collect(fake: FakeOpenAI, provider: Provider | None = None, **call) -> list:
    arguments = {"model": fake.model, "messages": HELLO, "tools": None, **call}
    stream = (provider or fast_provider()).stream(base_url=fake.base_url, api_key=fake.api_key, **arguments)
    return [event async for event in stream]


async def failure(fake: FakeOpenAI, provider: Provider | None = None, **call) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(fake, provider, **call)
    assert "\n" not in str(caught.value)
    return caught.value


def of_type(events: list, kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


# -- streaming -------------------------------------------------------------------------------


async def test_text_streams_in_order_then_usage_then_finish(fake_llm):
    fake_llm.reply(Text("Hel"), Text("lo, "), Text("world"), usage=(12, 3))

    events = await collect(fake_llm)

    assert events == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("world"),
        Usage(prompt_tokens=12, completion_tokens=3, cost=0.0),
        Finish("stop"),
    ]
    sent = fake_llm.requests[0]
    assert sent["messages"] == HELLO
    assert sent["model"] == "fake-model"
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


async def test_reasoning_deltas_come_before_the_answer(fake_llm):
    fake_llm.reply(Reasoning("The user "), Reasoning("greets me."), Text("Hi!"))

    events = await collect(fake_llm)

    deltas = [e for e in events if isinstance(e, ReasoningDelta | TextDelta)]
    assert deltas == [ReasoningDelta("The user "), ReasoningDelta("greets me."), TextDelta("Hi!")]


async def test_tool_call_arguments_split_over_chunks_are_assembled(fake_llm):
    arguments = '{"path": "src/app.py", "offset": 10, "limit": 200}'
    fake_llm.reply(Text("Reading it."), ScriptedCall("read", arguments, id="call_abc", fragments=5))

    events = await collect(fake_llm, tools=[READ_TOOL])

    fragments = of_type(events, ToolCallDelta)
    assert len(fragments) == 5
    assert "".join(f.arguments_delta for f in fragments) == arguments
    assert of_type(events, ToolCall) == [ToolCall("call_abc", "read", arguments)]
    assert events[-1] == Finish("tool_calls")
    assert fake_llm.requests[0]["tools"] == [READ_TOOL]


async def test_parallel_tool_calls_with_interleaved_fragments_are_kept_apart_by_index(fake_llm):
    fake_llm.reply(
        ToolCallFragment(0, '{"pa', id="call_a", name="read"),
        ToolCallFragment(1, '{"pa', id="call_b", name="read"),
        ToolCallFragment(1, 'th": "b.txt"}'),
        ToolCallFragment(0, 'th": "a.txt"}'),
    )

    events = await collect(fake_llm, tools=[READ_TOOL])

    assert of_type(events, ToolCall) == [
        ToolCall("call_a", "read", '{"path": "a.txt"}'),
        ToolCall("call_b", "read", '{"path": "b.txt"}'),
    ]


async def test_tool_call_without_arguments_gets_an_empty_json_object(fake_llm):
    fake_llm.reply(ScriptedCall("list_sessions", "", id="call_1"))

    events = await collect(fake_llm, tools=[READ_TOOL])

    assert of_type(events, ToolCall) == [ToolCall("call_1", "list_sessions", "{}")]


async def test_tool_calls_finish_as_tool_calls_even_when_the_provider_says_stop(fake_llm):
    fake_llm.reply(ScriptedCall("read", '{"path": "a"}'), finish_reason="stop")

    events = await collect(fake_llm, tools=[READ_TOOL])

    assert events[-1] == Finish("tool_calls")


async def test_limits_and_reasoning_effort_reach_the_server(fake_llm):
    fake_llm.reply(Text("ok"))

    await collect(fake_llm, max_tokens=321, reasoning_effort="high")

    assert fake_llm.requests[0]["max_tokens"] == 321
    assert fake_llm.requests[0]["reasoning_effort"] == "high"


async def test_length_finish_reason_is_passed_through(fake_llm):
    fake_llm.reply(Text("cut sh"), finish_reason="length")

    events = await collect(fake_llm)

    assert events[-1] == Finish("length")


async def test_stopping_early_closes_a_stream_that_would_hang(fake_llm):
    fake_llm.reply(Text("first"), Text("never sent"), hang_after=2)
    stream = fast_provider().stream(
        model=fake_llm.model, messages=HELLO, tools=None, base_url=fake_llm.base_url, api_key=fake_llm.api_key
    )

    assert await anext(stream) == TextDelta("first")
    await asyncio.wait_for(stream.aclose(), timeout=10)  # a hang here would fail the test


# -- usage and cost --------------------------------------------------------------------------


async def test_known_model_is_priced_from_litellms_map(fake_llm):
    litellm = await ensure_litellm()
    prices = litellm.model_cost["gpt-4o-mini"]
    fake_llm.reply(Text("ok"), usage=(1000, 200))

    events = await collect(fake_llm, model="openai/gpt-4o-mini")

    [usage] = of_type(events, Usage)
    expected = 1000 * prices["input_cost_per_token"] + 200 * prices["output_cost_per_token"]
    assert usage.cost == pytest.approx(expected)
    assert usage.cost > 0


async def test_missing_usage_chunk_is_estimated(fake_llm):
    fake_llm.reply(Text("a reply of several words"), usage=None)

    events = await collect(fake_llm)

    [usage] = of_type(events, Usage)
    assert usage.prompt_tokens > 0
    assert usage.completion_tokens > 0
    assert usage.cost == 0.0


async def test_unknown_model_has_default_context_window():
    assert context_window("openai/fake-model") == DEFAULT_CONTEXT_WINDOW


async def test_known_model_context_window_comes_from_litellm():
    litellm = await ensure_litellm()
    model = DEFAULT_MODELS["anthropic"]

    assert context_window(model) == litellm.get_model_info(model)["max_input_tokens"]
    assert context_window(model) != DEFAULT_CONTEXT_WINDOW


# -- retries ---------------------------------------------------------------------------------


async def test_rate_limit_is_retried_after_retry_after_capped_by_the_base_delay(fake_llm):
    fake_llm.fail(429, "Rate limit reached", type_="rate_limit_error", retry_after="30")
    fake_llm.reply(Text("finally"))

    events = await collect(fake_llm)

    [retry] = of_type(events, Retrying)
    assert retry.attempt == 1
    assert retry.delay == pytest.approx(FAST_BASE_DELAY * MAX_DELAY_FACTOR)  # 30 s asked, capped
    assert "Rate limit reached" in retry.reason
    assert of_type(events, TextDelta) == [TextDelta("finally")]
    assert len(fake_llm.requests) == 2


async def test_retry_after_ms_is_honoured_exactly(fake_llm):
    fake_llm.fail(429, "slow down", type_="rate_limit_error", headers={"retry-after-ms": "40"})
    fake_llm.reply(Text("ok"))

    events = await collect(fake_llm)

    [retry] = of_type(events, Retrying)
    assert retry.delay == pytest.approx(0.04)


async def test_server_error_is_retried_with_jittered_backoff(fake_llm):
    fake_llm.fail(500, "The server had an error", type_="server_error")
    fake_llm.fail(502, "Bad gateway", type_="server_error")
    fake_llm.reply(Text("recovered"))

    events = await collect(fake_llm)

    first, second = of_type(events, Retrying)
    assert FAST_BASE_DELAY <= first.delay <= 1.5 * FAST_BASE_DELAY
    assert 2 * FAST_BASE_DELAY <= second.delay <= 3 * FAST_BASE_DELAY
    assert of_type(events, TextDelta) == [TextDelta("recovered")]
    assert len(fake_llm.requests) == 3


async def test_retries_stop_at_the_limit_with_a_clear_error(fake_llm):
    for _ in range(3):
        fake_llm.fail(503, "Overloaded", type_="server_error")

    error = await failure(fake_llm, fast_provider(max_retries=2))

    assert error.kind == "server"
    assert str(error) == (
        "The provider of openai/fake-model failed (HTTP 503) after 2 retries: try again later (Overloaded)"
    )
    assert len(fake_llm.requests) == 3


async def test_timeout_before_any_content_is_retried(fake_llm):
    fake_llm.reply(Text("lost"), hang_after=0)
    fake_llm.reply(Text("second try"))

    events = await collect(fake_llm, fast_provider(timeout=0.3))

    assert len(of_type(events, Retrying)) == 1
    assert of_type(events, TextDelta) == [TextDelta("second try")]
    assert len(fake_llm.requests) == 2


async def test_failure_after_content_was_streamed_is_not_retried(fake_llm):
    fake_llm.reply(Text("half an ans"), Text("wer"), hang_after=2)
    fake_llm.reply(Text("must not be requested"))

    error = await failure(fake_llm, fast_provider(timeout=0.3))

    assert error.kind == "timeout"
    assert str(error) == "openai/fake-model did not answer in time: check the network and try again"
    assert len(fake_llm.requests) == 1


async def test_unreachable_server_names_the_address(fake_llm):
    address = fake_llm.base_url
    fake_llm.close()

    with pytest.raises(ProviderError) as caught:
        await collect_from(address, fast_provider(max_retries=1))

    assert caught.value.kind == "connection"
    assert str(caught.value) == (
        f"Could not reach the provider for openai/fake-model at {address} after 1 retry: "
        "check the network or the baseURL setting"
    )


async def collect_from(base_url: str, provider: Provider) -> list:
    stream = provider.stream(
        model="openai/fake-model", messages=HELLO, tools=None, base_url=base_url, api_key="k"
    )
    return [event async for event in stream]


# -- errors that are not retried -------------------------------------------------------------


async def test_rejected_key_names_the_variable_and_the_config_key(fake_llm):
    fake_llm.fail(
        401, "Incorrect API key provided: test", type_="invalid_request_error", code="invalid_api_key"
    )

    error = await failure(fake_llm)

    assert error.kind == "auth"
    assert str(error) == (
        "The provider rejected the API key for openai/fake-model: "
        "check OPENAI_API_KEY or providers.openai.apiKey in .opencode.json"
    )
    assert len(fake_llm.requests) == 1


async def test_context_length_error_says_to_compact(fake_llm):
    fake_llm.fail(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
        type_="invalid_request_error",
        code="context_length_exceeded",
    )

    error = await failure(fake_llm)

    assert error.kind == "context_length"
    message = str(error)
    assert message.startswith("The conversation is too long for openai/fake-model (")
    assert "maximum context length is 8192 tokens" in message
    assert message.endswith("): compact the session or start a new one")
    assert len(fake_llm.requests) == 1


async def test_model_the_server_does_not_serve_is_an_unknown_model(fake_llm):
    fake_llm.fail(
        404, "The model `fake-model` does not exist", type_="invalid_request_error", code="model_not_found"
    )

    error = await failure(fake_llm)

    assert error.kind == "unknown_model"
    assert str(error) == (
        "Unknown model openai/fake-model: the provider does not serve it "
        "(The model `fake-model` does not exist); check the name or pass another --model"
    )


async def test_model_without_a_provider_prefix_is_an_unknown_model(fake_llm):
    error = await failure(fake_llm, model="no-such-model")

    assert error.kind == "unknown_model"
    assert str(error) == (
        "Unknown model no-such-model: name its provider too, as provider/model (e.g. anthropic/claude-sonnet-4-5)"
    )
    assert fake_llm.requests == []


async def test_a_provider_litellm_does_not_know_is_named_as_such(fake_llm):
    error = await failure(fake_llm, model="nosuch/model")

    assert error.kind == "unknown_model"
    assert str(error) == (
        "Unknown model nosuch/model: there is no provider called 'nosuch'; "
        "name a known one, as provider/model (e.g. anthropic/claude-sonnet-4-5)"
    )
    assert fake_llm.requests == []


async def test_other_client_errors_carry_the_providers_words(fake_llm):
    fake_llm.fail(400, "Invalid 'messages[0].role': unexpected value", type_="invalid_request_error")

    error = await failure(fake_llm)

    assert error.kind == "request"
    assert (
        str(error)
        == "openai/fake-model rejected the request (HTTP 400): Invalid 'messages[0].role': unexpected value"
    )


# -- the fake server itself ------------------------------------------------------------------


async def test_fake_server_answers_non_streamed_requests(fake_llm):
    litellm = await ensure_litellm()
    fake_llm.reply(Reasoning("short"), Text("A title"), ScriptedCall("read", '{"path": "x"}'), usage=(7, 2))

    response = await litellm.acompletion(
        model=fake_llm.model,
        messages=HELLO,
        base_url=fake_llm.base_url,
        api_key=fake_llm.api_key,
        max_retries=0,
    )

    message = response.choices[0].message
    assert message.content == "A title"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "x"}
    assert response.usage.prompt_tokens == 7
    assert fake_llm.requests[0].get("stream") in (None, False)


# -- model choice ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cli", "agent", "env", "providers", "expected"),
    [
        ("groq/x", "openai/y", {"ANTHROPIC_API_KEY": "k"}, {}, "groq/x"),
        (None, "openai/y", {"ANTHROPIC_API_KEY": "k"}, {}, "openai/y"),
        (None, None, {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, {}, DEFAULT_MODELS["anthropic"]),
        (None, None, {"GEMINI_API_KEY": "k"}, {}, DEFAULT_MODELS["gemini"]),
        (None, None, {"ANTHROPIC_API_KEY": ""}, {}, None),
        (None, None, {}, {"mistral": {"apiKey": "k"}}, DEFAULT_MODELS["mistral"]),
        (
            None,
            None,
            {"ANTHROPIC_API_KEY": "k", "XAI_API_KEY": "k"},
            {"anthropic": {"disabled": True}},
            DEFAULT_MODELS["xai"],
        ),
        (None, None, {}, {}, None),
    ],
    ids=[
        "cli-wins",
        "agent-next",
        "first-key-in-order",
        "gemini-key",
        "empty-key",
        "config-key",
        "disabled",
        "none",
    ],
)
def test_choose_model_precedence(cli, agent, env, providers, expected):
    assert choose_model(cli, agent, env, providers) == expected


def test_choose_model_reads_pydantic_style_provider_settings():
    class Settings:  # the config room's model exposes snake_case attributes
        api_key = "k"
        disabled = False

    assert choose_model(None, None, {}, {"deepseek": Settings()}) == DEFAULT_MODELS["deepseek"]


def test_every_provider_has_a_default_model_and_is_named_in_the_onboarding_message():
    assert DEFAULT_MODELS.keys() == PROVIDER_ENV_VARS.keys()
    for name, var in PROVIDER_ENV_VARS.items():
        assert var in ONBOARDING_MESSAGE
        assert DEFAULT_MODELS[name].startswith(f"{name}/")
    assert "OPENAI_BASE_URL" in ONBOARDING_MESSAGE
    assert "--model ollama_chat/llama3.2" in ONBOARDING_MESSAGE


def test_credentials_prefer_config_then_environment():
    env = {"ANTHROPIC_API_KEY": "from-env", "OPENAI_API_KEY": "openai-env"}
    providers = {"openai": {"apiKey": "from-config", "baseURL": "http://localhost:8080/v1"}}

    assert credentials_for("anthropic/claude-sonnet-4-5", providers, env) == ("from-env", None)
    assert credentials_for("openai/gpt-5", providers, env) == ("from-config", "http://localhost:8080/v1")
    assert credentials_for("ollama_chat/llama3.2", providers, env) == (None, None)


def test_openai_base_url_from_the_environment_needs_no_key():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:1234/v1"}

    assert credentials_for("openai/qwen3", {}, env) == (NO_KEY_PLACEHOLDER, "http://127.0.0.1:1234/v1")


# -- lazy import -----------------------------------------------------------------------------


def test_importing_the_provider_does_not_import_litellm():
    script = "import sys, app.llm.provider; print('litellm' in sys.modules)"

    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


async def test_background_import_yields_litellm_with_its_first_request_warmed():
    start_background_import()
    module = await ensure_litellm()

    assert module is sys.modules["litellm"]
    assert all(name in sys.modules for name in FIRST_REQUEST_MODULES)


def test_the_short_onboarding_note_names_every_variable_and_the_local_options():
    from app.llm.models import ONBOARDING_NOTE

    for var in PROVIDER_ENV_VARS.values():
        assert var in ONBOARDING_NOTE
    assert "OPENAI_BASE_URL" in ONBOARDING_NOTE and "--model ollama_chat/llama3.2" in ONBOARDING_NOTE


async def test_a_connection_cut_mid_answer_says_so_and_what_was_kept(fake_llm):
    fake_llm.reply(Text("half an ans"), Text("wer"), cut_after=2)
    fake_llm.reply(Text("must not be requested"))

    error = await failure(fake_llm, fast_provider())

    assert str(error) == (
        "The connection to the provider of openai/fake-model dropped in the middle of its answer: "
        "what it had sent is kept in the conversation; send your prompt again to have it go on"
    )
    assert len(fake_llm.requests) == 1
