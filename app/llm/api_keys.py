"""Whether a model's provider has an API key, decided from the environment and the config
before any request: without one, litellm sends the request anyway and the provider's
refusal looks like a server failure (retried) or a rejected key. A provider whose key
scheme is not listed here (cloud accounts such as bedrock or vertex_ai, local servers
such as ollama) is left to litellm."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from app.llm.model_names import litellm_folder, model_index
from app.llm.models import BASE_URL_ENV_VARS, provider_of

KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "sambanova": ("SAMBANOVA_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    "replicate": ("REPLICATE_API_KEY", "REPLICATE_API_TOKEN"),
    "ai21": ("AI21_API_KEY",),
    "ai21_chat": ("AI21_API_KEY",),
    "anyscale": ("ANYSCALE_API_KEY",),
    "nlp_cloud": ("NLP_CLOUD_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "dashscope": ("DASHSCOPE_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "novita": ("NOVITA_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
    "hyperbolic": ("HYPERBOLIC_API_KEY",),
    "featherless_ai": ("FEATHERLESS_AI_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "volcengine": ("VOLCENGINE_API_KEY",),
    "inception": ("INCEPTION_API_KEY",),
    "vercel_ai_gateway": ("VERCEL_AI_GATEWAY_API_KEY",),
}
"""Provider -> the variables litellm reads its key from; the first is the one named."""

OPENAI_LIKE_TABLE = "llms/openai_like/providers.json"
"""litellm's table of OpenAI-compatible providers, each with its key variable."""


@cache
def key_variables() -> Mapping[str, tuple[str, ...]]:
    """KEY_VARIABLES, plus the OpenAI-compatible providers litellm's own table lists."""
    table: dict[str, tuple[str, ...]] = {}
    folder = litellm_folder()
    try:
        listed = json.loads((folder / OPENAI_LIKE_TABLE).read_text(encoding="utf-8")) if folder else {}
    except (OSError, ValueError):
        listed = {}
    for name, entry in listed.items() if isinstance(listed, dict) else ():
        variable = entry.get("api_key_env") if isinstance(entry, dict) else None
        if isinstance(variable, str) and variable:
            table[name] = (variable,)
    return {**table, **KEY_VARIABLES}


def missing_key_problem(model: str, providers_config: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """One line naming the variable (and the config key) to set when ``model``'s provider
    needs an API key and none is set; None when one is, or none is needed (a configured
    base URL means a server of the user's own, which may need none)."""
    provider = _provider(model)
    variables = key_variables().get(provider)
    if variables is None:
        return None
    entry = providers_config.get(provider)
    if getattr(entry, "api_key", None) or getattr(entry, "base_url", None):
        return None
    if any(env.get(variable) for variable in (*variables, *_base_url_variables(provider))):
        return None
    return (
        f"no API key for {model}: set {variables[0]} in the environment "
        f"or providers.{provider}.apiKey in .opencode.json"
    )


def _provider(model: str) -> str:
    """The model's provider prefix, or for a bare name the provider litellm infers."""
    provider = provider_of(model)
    if provider:
        return provider
    index = model_index()
    return index.bare_models.get(model, "") if index is not None else ""


def _base_url_variables(provider: str) -> tuple[str, ...]:
    """Variables pointing the provider at another server (litellm reads <NAME>_API_BASE)."""
    stem = provider.upper()
    listed = BASE_URL_ENV_VARS.get(provider)
    return (f"{stem}_API_BASE", f"{stem}_BASE_URL", *((listed,) if listed else ()))
