"""A model is checked before any request, from litellm's own data files (read, never
imported) and the environment: its name, then its provider's API key."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.config import Config
from app.llm.api_keys import missing_key_problem
from app.llm.model_names import model_name_problem
from app.llm.preflight import model_problem

NO_PROVIDERS = Config().providers


@pytest.mark.parametrize(
    "model",
    ["gpt-4o-mini", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro",
     "openrouter/anthropic/claude-sonnet-4.5", "ollama_chat/llama3.2", "hosted_vllm/my-model",
     "anthropic/claude-next-one", "scripted/demo"],
)  # fmt: skip
def test_names_litellm_can_serve_pass(model: str):
    """A known provider takes any model name: new models come out before litellm's map has them."""
    assert model_name_problem(model) is None


def test_an_unknown_bare_name_fails_with_close_matches():
    assert model_name_problem("claude-sonet-4-5").startswith(
        "unknown model claude-sonet-4-5: did you mean anthropic/claude-sonnet-4-5"
    )
    assert model_name_problem("gpt4o-mini").startswith(
        "unknown model gpt4o-mini: did you mean openai/gpt-4o-mini"
    )
    assert model_name_problem("nosuchmodel") == (
        "unknown model nosuchmodel: litellm does not know it; "
        "name it as provider/model, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-5"
    )


def test_an_unknown_provider_fails_naming_the_close_ones_unless_the_config_names_it():
    problem = model_name_problem("antropic/claude-sonnet-4-5")
    assert problem.startswith(
        "unknown model antropic/claude-sonnet-4-5: litellm has no provider called 'antropic'"
    )
    assert "did you mean anthropic" in problem
    assert model_name_problem("mylab/model-7", ["mylab"]) is None


@pytest.mark.parametrize(
    ("model", "variable", "config_key"),
    [("openai/gpt-4o-mini", "OPENAI_API_KEY", "openai"), ("gpt-4o-mini", "OPENAI_API_KEY", "openai"),
     ("anthropic/claude-foo", "ANTHROPIC_API_KEY", "anthropic"), ("gemini/gemini-2.5-pro", "GEMINI_API_KEY", "gemini"),
     ("groq/openai/gpt-oss-120b", "GROQ_API_KEY", "groq"), ("together_ai/x", "TOGETHERAI_API_KEY", "together_ai"),
     ("publicai/x", "PUBLICAI_API_KEY", "publicai")],
)  # fmt: skip
def test_a_missing_key_names_the_variable_and_the_config_key(model: str, variable: str, config_key: str):
    assert missing_key_problem(model, NO_PROVIDERS, {}) == (
        f"no API key for {model}: set {variable} in the environment "
        f"or providers.{config_key}.apiKey in .opencode.json"
    )
    assert missing_key_problem(model, NO_PROVIDERS, {variable: "sk-1"}) is None


def test_a_key_in_config_another_variable_litellm_reads_or_an_own_server_is_enough():
    with_key = Config.model_validate({"providers": {"openai": {"apiKey": "sk-1"}}}).providers
    with_server = Config.model_validate(
        {"providers": {"anthropic": {"baseURL": "http://localhost:9/v1"}}}
    ).providers
    assert missing_key_problem("openai/gpt-5", with_key, {}) is None
    assert missing_key_problem("anthropic/claude-x", with_server, {}) is None
    assert missing_key_problem("gemini/gemini-2.5-pro", NO_PROVIDERS, {"GOOGLE_API_KEY": "k"}) is None
    assert (
        missing_key_problem("openai/local", NO_PROVIDERS, {"OPENAI_BASE_URL": "http://localhost:8080/v1"})
        is None
    )
    assert (
        missing_key_problem("openai/gpt-5", NO_PROVIDERS, {"OPENAI_API_KEY": ""}) is not None
    )  # empty is unset


def test_providers_without_a_key_scheme_here_are_left_to_litellm():
    for model in (
        "ollama_chat/llama3.2",
        "bedrock/anthropic.claude-v2",
        "vertex_ai/gemini-pro",
        "scripted/demo",
    ):
        assert missing_key_problem(model, NO_PROVIDERS, {}) is None


def test_the_name_is_checked_before_the_key():
    assert model_problem("nosuch/model", NO_PROVIDERS, {}).startswith("unknown model nosuch/model")
    assert model_problem("openai/gpt-5", NO_PROVIDERS, {}).startswith("no API key for openai/gpt-5")
    assert model_problem("openai/gpt-5", NO_PROVIDERS, {"OPENAI_API_KEY": "sk"}) is None


def test_checking_imports_no_litellm():
    code = (
        "import sys\n"
        "from app.llm.preflight import model_problem\n"
        "from app.config import Config\n"
        "assert model_problem('nosuchmodel', Config().providers, {})\n"
        "assert model_problem('openai/gpt-5', Config().providers, {})\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'litellm'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout == "[]\n"


async def test_the_agent_loop_refuses_such_a_model_before_storing_or_sending_anything(runtime):
    """What ACP and the TUI rely on: the turn never starts, so nothing is sent or retried."""
    from app.llm.agent import AgentLoop, ModelNotUsableError
    from app.llm.provider import Provider

    loop = AgentLoop(runtime, Provider(), env={})
    session_id = runtime.store.sessions.create(title="t").id
    with pytest.raises(ModelNotUsableError, match="^no API key for openai/gpt-5: set OPENAI_API_KEY"):
        await loop.run(session_id, "hi", model="openai/gpt-5")
    with pytest.raises(ModelNotUsableError, match="^unknown model nosuchmodel"):
        await loop.run(session_id, "hi", model="nosuchmodel")
    assert runtime.store.messages.list(session_id) == []


def test_the_onboarding_variables_are_the_ones_the_key_check_names():
    from app.llm.api_keys import KEY_VARIABLES
    from app.llm.models import PROVIDER_ENV_VARS

    assert {name: KEY_VARIABLES[name][0] for name in PROVIDER_ENV_VARS} == PROVIDER_ENV_VARS
