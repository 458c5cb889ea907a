"""Which model to talk to, and with which credentials: pure functions over the CLI flag,
the config and the environment, so choosing a model never waits for litellm's import."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

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
    the environment. None means "let litellm use its own defaults". An apiKey written as
    {env:VAR} is VAR's value (None when VAR is unset)."""
    name = provider_of(model)
    entry = providers_config.get(name)
    configured = _setting(entry, "api_key", "apiKey")
    api_key = expand_secret(configured, env) if configured else _from_env(env, PROVIDER_ENV_VARS.get(name))
    base_url = _setting(entry, "base_url", "baseURL") or _from_env(env, BASE_URL_ENV_VARS.get(name))
    if base_url and not api_key and not (configured and secret_variable(configured)):
        api_key = NO_KEY_PLACEHOLDER
    return api_key, base_url


_ENV_REFERENCE = re.compile(r"^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")


def secret_variable(value: str) -> str | None:
    """VAR when ``value`` is written {env:VAR}, else None."""
    match = _ENV_REFERENCE.match(value.strip())
    return match.group(1) if match else None


def expand_secret(value: str, env: Mapping[str, str]) -> str | None:
    """A configured secret: {env:VAR} reads VAR (None when unset or empty), anything
    else is the value itself."""
    variable = secret_variable(value)
    return _from_env(env, variable) if variable else value


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; a cache price left unset is the input price."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, uncached: int, completion: int, cache_read: int, cache_write: int) -> float:
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (uncached * self.input + completion * self.output + cache_read * read + cache_write * write) / 1e6


@dataclass(frozen=True)
class ModelFacts:
    """What the config says of one model (None: ask litellm)."""

    name: str | None = None
    context_window: int | None = None
    max_output: int | None = None
    prices: Prices | None = None
    vision: bool | None = None
    reasoning: bool | None = None


class StreamOptions(TypedDict, total=False):
    """The keywords of a model call beside its messages and tools, each one optional:
    what a provider's ``stream`` takes and what a route and an agent's settings set."""

    max_tokens: int | None
    reasoning_effort: str | None
    api_key: str | None
    base_url: str | None
    route: str | None
    """litellm's name for the model when it differs from the name the user knows."""
    prompt_cache: bool
    """Place prompt-cache breakpoints (for a model that takes them)."""
    prices: Prices | None
    """A custom model's prices, replacing litellm's."""


@dataclass(frozen=True)
class Route:
    """How to reach a model: the name litellm routes (a custom provider's
    "mylocal/qwen" goes out as "openai/qwen" to its baseURL), the credentials, whether
    to place prompt-cache breakpoints, and the configured facts. ``problem`` is the one
    line to fail with when the configuration cannot work (an {env:VAR} key unset)."""

    model: str
    litellm_model: str
    api_key: str | None
    base_url: str | None
    prompt_cache: bool
    facts: ModelFacts
    custom: bool = False
    problem: str | None = None

    def stream_options(self) -> StreamOptions:
        """The provider.stream keywords this route sets."""
        options: StreamOptions = {"prompt_cache": self.prompt_cache}
        if self.litellm_model != self.model:
            options["route"] = self.litellm_model
        if self.api_key:
            options["api_key"] = self.api_key
        if self.base_url:
            options["base_url"] = self.base_url
        if self.facts.prices is not None:
            options["prices"] = self.facts.prices
        if self.facts.max_output is not None:
            options["max_tokens"] = self.facts.max_output
        return options


def route_for(model: str, providers_config: Mapping[str, Any], env: Mapping[str, str]) -> Route:
    """The route to ``model`` given providers.<name> in config and the environment."""
    name = provider_of(model)
    entry = providers_config.get(name)
    api = _setting(entry, "api", "api")
    model_id = model.split("/", 1)[1] if "/" in model else model
    api_key, base_url = credentials_for(model, providers_config, env)
    problem = None
    configured = _setting(entry, "api_key", "apiKey")
    if configured and (variable := secret_variable(configured)) and not api_key:
        problem = (
            f"providers.{name}.apiKey reads {{env:{variable}}}, but {variable} is not set: "
            f"export {variable} or write the key in .opencode.json"
        )
    if api and not api_key:
        api_key = NO_KEY_PLACEHOLDER  # local servers ignore the key; the clients insist on one
    cache = _setting(entry, "cache", "cache")
    return Route(
        model=model,
        litellm_model=f"{api}/{model_id}" if api else model,
        api_key=api_key,
        base_url=base_url,
        prompt_cache=True if cache is None else bool(cache),
        facts=_facts((_setting(entry, "models", "models") or {}).get(model_id)),
        custom=bool(api),
        problem=problem,
    )


def _facts(spec: Any) -> ModelFacts:
    if spec is None:
        return ModelFacts()
    cost = _setting(spec, "cost", "cost")
    prices = None
    if cost is not None:
        prices = Prices(
            input=_setting(cost, "input", "input") or 0.0,
            output=_setting(cost, "output", "output") or 0.0,
            cache_read=_setting(cost, "cache_read", "cacheRead"),
            cache_write=_setting(cost, "cache_write", "cacheWrite"),
        )
    return ModelFacts(
        name=_setting(spec, "name", "name"),
        context_window=_setting(spec, "context_window", "contextWindow"),
        max_output=_setting(spec, "max_output", "maxOutput"),
        prices=prices,
        vision=_setting(spec, "vision", "vision"),
        reasoning=_setting(spec, "reasoning", "reasoning"),
    )


def _from_env(env: Mapping[str, str], var: str | None) -> str | None:
    """The variable's value, treating unset, empty and "no such variable" alike."""
    return (env.get(var) if var else None) or None
