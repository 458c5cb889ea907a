"""Custom providers defined only in .opencode.json (`providers.<name>` with `api`,
`baseURL`, `apiKey`, `models`): a full edit turn each through the real litellm client
against the OpenAI and Anthropic fakes, with the configured context window driving
compaction and the configured prices driving cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import load_config
from app.llm.agent import AgentLoop
from app.llm.events import SessionCompacted, UsageUpdated
from app.llm.models import Prices, route_for
from app.llm.provider import Provider
from app.runtime import Runtime
from tests.llm.fake_anthropic import FakeAnthropic
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

WINDOW = 50_000
FIX = {"filePath": "greet.py", "oldString": "helo", "newString": "hello"}


def write_config(workspace: Path, providers: dict) -> None:
    config = {"providers": providers, "lsp": {"python": {"disabled": True}}}
    (workspace / ".opencode.json").write_text(json.dumps(config))


# (input, output) per response: the first fills 95% of the configured window.
SCRIPTED_USAGE = [(int(WINDOW * 0.95), 10), (500, 20), (900, 30), (1000, 5)]


def edit_turn_script(fake) -> None:
    """view, then (after a response that fills the window) compaction, then edit, then done."""
    first, summary, edit, done = SCRIPTED_USAGE
    fake.reply(ToolCall("view", '{"filePath": "greet.py"}', id="toolu_view"), usage=first)
    fake.reply(Text("SUMMARY: the user wants the typo in greet.py fixed; it was viewed."), usage=summary)
    fake.reply(ToolCall("edit", json.dumps(FIX), id="toolu_edit"), usage=edit)
    fake.reply(Text("Fixed."), usage=done)


async def run_turn(workspace: Path, model: str, env: dict) -> tuple[Runtime, AgentLoop, object, list]:
    runtime = Runtime.build(workspace, policy="headless-yes")  # reads .opencode.json like the CLI
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env=env)
    session = runtime.store.sessions.create(title="t").id
    events = runtime.bus.subscribe(UsageUpdated, SessionCompacted)
    result = await loop.run(session, "fix the typo in greet.py", model=model)
    published = events.drain()
    await loop.aclose()
    runtime.close()
    return runtime, loop, result, published


async def test_a_custom_openai_compatible_provider_runs_an_edit_turn(workspace: Path, fake_llm: FakeOpenAI):
    (workspace / "greet.py").write_text("print('helo')\n")
    write_config(workspace, {
        "gateway": {
            "api": "openai",
            "baseURL": fake_llm.base_url,
            "apiKey": "{env:GATEWAY_TOKEN}",
            "models": {"coder-7b": {"name": "Coder 7B", "contextWindow": WINDOW, "cost": {"input": 2, "output": 8}}},
        }
    })
    edit_turn_script(fake_llm)

    _, _, result, published = await run_turn(workspace, "gateway/coder-7b", {"GATEWAY_TOKEN": "tok-123"})

    assert result.reason == "stop", result.error
    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    assert [request["model"] for request in fake_llm.requests] == ["coder-7b"] * 4
    assert {r.headers["authorization"] for r in fake_llm.received} == {"Bearer tok-123"}
    assert any(isinstance(event, SessionCompacted) for event in published)  # the configured window, not 128k
    assert {event.context_window for event in published if isinstance(event, UsageUpdated)} == {WINDOW}
    prompt, completion = (sum(counts) for counts in zip(*SCRIPTED_USAGE, strict=True))
    assert result.cost == pytest.approx((prompt * 2 + completion * 8) / 1e6)


async def test_a_custom_anthropic_compatible_provider_runs_an_edit_turn_with_caching(
    workspace: Path, fake_anthropic: FakeAnthropic
):
    (workspace / "greet.py").write_text("print('helo')\n")
    prices = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    write_config(workspace, {
        "corp": {
            "api": "anthropic",
            "baseURL": fake_anthropic.base_url,
            "apiKey": fake_anthropic.api_key,
            "models": {"claude-corp": {"contextWindow": WINDOW, "maxOutput": 4096, "cost": prices}},
        }
    })
    edit_turn_script(fake_anthropic)

    _, _, result, published = await run_turn(workspace, "corp/claude-corp", {})

    assert result.reason == "stop", result.error
    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    assert [request["model"] for request in fake_anthropic.requests] == ["claude-corp"] * 4
    assert {request["max_tokens"] for request in fake_anthropic.requests} == {4096}
    assert any(isinstance(event, SessionCompacted) for event in published)
    reported = fake_anthropic.reported
    assert any(usage["cache_read_input_tokens"] for usage in reported)  # caching applies to the custom route
    expected = sum(
        u["input_tokens"] * 3 + u["output_tokens"] * 15
        + u["cache_read_input_tokens"] * 0.3 + u["cache_creation_input_tokens"] * 3.75
        for u in reported
    ) / 1e6
    assert result.cost == pytest.approx(expected)


def test_a_custom_route_names_litellms_model_and_the_configured_facts(workspace: Path):
    write_config(workspace, {
        "local": {"api": "openai", "baseURL": "http://127.0.0.1:1234/v1", "models": {"qwen": {"contextWindow": 32768}}}
    })
    config = load_config(workspace, env={"HOME": str(workspace / "no-home")})

    route = route_for("local/qwen", config.providers, {})

    assert (route.litellm_model, route.base_url, route.custom) == ("openai/qwen", "http://127.0.0.1:1234/v1", True)
    assert route.api_key  # a placeholder: local servers ignore it, the client needs one
    assert route.facts.context_window == 32768 and route.facts.prices is None
    assert route_for("anthropic/claude-sonnet-4-5", config.providers, {}).litellm_model == "anthropic/claude-sonnet-4-5"


async def test_an_unset_env_key_fails_the_turn_in_one_line_naming_the_variable(workspace: Path, fake_llm):
    write_config(workspace, {"gateway": {"api": "openai", "baseURL": fake_llm.base_url, "apiKey": "{env:GATEWAY_TOKEN}"}})

    _, _, result, _ = await run_turn(workspace, "gateway/coder-7b", {})

    assert result.reason == "failed"
    assert result.error == (
        "providers.gateway.apiKey reads {env:GATEWAY_TOKEN}, but GATEWAY_TOKEN is not set: "
        "export GATEWAY_TOKEN or write the key in .opencode.json"
    )
    assert fake_llm.requests == []


def test_prices_are_per_million_tokens_and_cache_prices_default_to_input():
    assert Prices(input=3, output=15).cost(1_000_000, 0, 0, 0) == pytest.approx(3)
    assert Prices(input=3, output=15, cache_read=0.3).cost(0, 1000, 10_000, 0) == pytest.approx(0.003 + 0.015)
    assert Prices(input=3).cost(0, 0, 0, 1_000_000) == pytest.approx(3)


async def test_a_rejected_key_of_a_custom_provider_names_its_config_key(workspace: Path, fake_anthropic):
    write_config(workspace, {"corp": {"api": "anthropic", "baseURL": fake_anthropic.base_url, "apiKey": "wrong"}})

    _, _, result, _ = await run_turn(workspace, "corp/claude-corp", {})

    assert result.error == (
        "The provider rejected the API key for corp/claude-corp: check providers.corp.apiKey in .opencode.json"
    )
    assert len(fake_anthropic.received) == 1


def test_the_local_server_example_in_the_docs_is_a_valid_config(tmp_path: Path):
    text = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text(encoding="utf-8")
    example = next(block for block in text.split("```json\n")[1:] if '"local"' in block).split("```")[0]
    (tmp_path / ".opencode.json").write_text(example)

    config = load_config(tmp_path, env={"HOME": str(tmp_path / "no-home")})

    route = route_for(config.agents.coder.model, config.providers, {})
    assert (route.litellm_model, route.base_url) == ("openai/qwen2.5-coder-7b", "http://localhost:8080/v1")
    assert route.facts.context_window == 32768 and route.facts.prices == Prices(0, 0)


async def test_reasoning_effort_is_not_sent_to_a_model_configured_as_not_reasoning(workspace: Path, fake_llm):
    config = {
        "providers": {"gw": {"api": "openai", "baseURL": fake_llm.base_url, "models": {"plain": {"reasoning": False}, "thinker": {}}}},
        "agents": {"coder": {"reasoningEffort": "high"}},
        "lsp": {"python": {"disabled": True}},
    }
    (workspace / ".opencode.json").write_text(json.dumps(config))
    fake_llm.reply(Text("ok"))
    fake_llm.reply(Text("ok"))

    await run_turn(workspace, "gw/plain", {})
    await run_turn(workspace, "gw/thinker", {})

    assert "reasoning_effort" not in fake_llm.requests[0]
    assert fake_llm.requests[1]["reasoning_effort"] == "high"
