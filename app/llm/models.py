"""Which model to talk to, and with which credentials: pure functions over the CLI flag,
the config and the environment, so choosing a model never waits for litellm's import."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Provider name (the litellm model prefix) -> the variable holding its API key.
# The order is the preference order when several keys are present.
PROVIDER_ENV_VARS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "groq": "GROQ_API_KEY",
    "xai": "XAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "mistral": "MISTRAL_API_KEY",
}

# A capable coding model per provider, used when only a key is known.
DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "anthropic/claude-sonnet-4-5",
    "openai": "openai/gpt-5",
    "gemini": "gemini/gemini-2.5-pro",
    "openrouter": "openrouter/anthropic/claude-sonnet-4.5",
    "groq": "groq/openai/gpt-oss-120b",
    "xai": "xai/grok-code-fast-1",
    "deepseek": "deepseek/deepseek-chat",
    "mistral": "mistral/devstral-medium-latest",
}

# Variables that point a provider at another server (OpenAI-compatible local servers).
BASE_URL_ENV_VARS: dict[str, str] = {"openai": "OPENAI_BASE_URL"}

# Sent when a custom server is set but no key: the OpenAI client refuses to start without
# one, and local servers (llama.cpp, LM Studio, vLLM) ignore it.
NO_KEY_PLACEHOLDER = "sk-no-key-required"


def _onboarding_message() -> str:
    width = max(len(var) for var in PROVIDER_ENV_VARS.values())
    keys = "\n".join(
        f"  {var:<{width}}  (then uses {DEFAULT_MODELS[name]})" for name, var in PROVIDER_ENV_VARS.items()
    )
    return (
        "No model is configured. Set one of these environment variables and start again:\n"
        f"{keys}\n"
        "or set providers.<name>.apiKey in .opencode.json, or pass --model provider/model.\n"
        "For a local or self-hosted model:\n"
        "  OpenAI-compatible server: OPENAI_BASE_URL=http://localhost:8080/v1 opencode --model openai/<name>\n"
        "  Ollama: opencode --model ollama_chat/llama3.2"
    )


ONBOARDING_MESSAGE = _onboarding_message()

# The same facts in a few lines, for the TUI's first screen (an 80x24 terminal must keep
# room for the chat and the prompt).
ONBOARDING_NOTE = (
    f"No model is configured. Set {', '.join(PROVIDER_ENV_VARS.values())} "
    "(or providers.<name>.apiKey in .opencode.json) and start again. "
    "For a local server: OPENAI_BASE_URL=http://localhost:8080/v1 with --model openai/<name>, "
    "or --model ollama_chat/llama3.2 for Ollama."
)


def provider_of(model: str) -> str:
    """The provider prefix of a litellm model name ("anthropic/claude-..." -> "anthropic")."""
    return model.split("/", 1)[0] if "/" in model else ""


def _setting(entry: Any, snake: str, camel: str) -> Any:
    """One provider setting, whether the config hands us raw JSON (camelCase keys)
    or the pydantic model (snake_case attributes)."""
    if entry is None:
        return None
    if isinstance(entry, Mapping):
        return entry.get(camel, entry.get(snake))
    return getattr(entry, snake, None)


def choose_model(
    cli_model: str | None,
    agent_model: str | None,
    env: Mapping[str, str],
    providers_config: Mapping[str, Any],
) -> str | None:
    """--model, else the agent's model from config, else the default model of the first
    provider (in PROVIDER_ENV_VARS order) that has a key and is not disabled, else None
    (the caller then shows ONBOARDING_MESSAGE)."""
    if cli_model:
        return cli_model
    if agent_model:
        return agent_model
    for name, var in PROVIDER_ENV_VARS.items():
        entry = providers_config.get(name)
        if _setting(entry, "disabled", "disabled"):
            continue
        if env.get(var) or _setting(entry, "api_key", "apiKey"):
            return DEFAULT_MODELS[name]
    return None


def credentials_for(
    model: str, providers_config: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """(api_key, base_url) for a model: the config's providers.<name> entry first, then
    the environment. None means "let litellm use its own defaults"."""
    name = provider_of(model)
    entry = providers_config.get(name)
    api_key = _setting(entry, "api_key", "apiKey") or _from_env(env, PROVIDER_ENV_VARS.get(name))
    base_url = _setting(entry, "base_url", "baseURL") or _from_env(env, BASE_URL_ENV_VARS.get(name))
    if base_url and not api_key:
        api_key = NO_KEY_PLACEHOLDER
    return api_key, base_url


def _from_env(env: Mapping[str, str], var: str | None) -> str | None:
    """The variable's value, treating unset, empty and "no such variable" alike."""
    return (env.get(var) if var else None) or None
