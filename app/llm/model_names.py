"""Which model names litellm can serve, answered from the data files litellm ships
(its price map and its provider table) without importing litellm, whose import takes
seconds: a misspelt --model fails at once, with the names it was close to.

A name is taken when its provider prefix is a provider litellm knows, or one the
config's `providers` names (the provider then judges the rest of the name: new models
come out before litellm's map lists them), or when litellm's map knows the bare name
(litellm then infers its provider, as for `gpt-4o-mini`)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from app.llm.models import DEFAULT_MODELS, PROVIDER_ENV_VARS, provider_of
from app.llm.scripted import SCRIPTED_PREFIX

PRICE_MAP = "model_prices_and_context_window_backup.json"
PROVIDER_TABLE = "provider_endpoints_support_backup.json"
CHAT_MODES = frozenset({"chat", "responses"})
"""The map's modes of models that hold a conversation (the rest embed, draw, speak...)."""
MAX_SUGGESTIONS = 3


@dataclass(frozen=True)
class ModelIndex:
    """What litellm's data files say: the model names in its price map (with each one's
    provider, for bare names) and every provider prefix it accepts."""

    providers: frozenset[str]
    bare_models: Mapping[str, str]
    """A map name without a provider prefix -> the provider litellm infers for it."""
    chat_models: Mapping[str, str]
    """A chat model's own name (its last path segment) -> the provider/model name offered
    as a close match (from the model's own provider when the map has it from several)."""


def litellm_folder() -> Path | None:
    """litellm's package folder, found without running its __init__."""
    spec = importlib.util.find_spec("litellm")
    locations = spec.submodule_search_locations if spec is not None else None
    return Path(next(iter(locations))) if locations else None


@cache
def model_index() -> ModelIndex | None:
    """The index, read once per process; None when litellm or its data files are missing
    (then every name is left to litellm)."""
    folder = litellm_folder()
    try:
        prices = json.loads((folder / PRICE_MAP).read_text(encoding="utf-8")) if folder else None
        table = json.loads((folder / PROVIDER_TABLE).read_text(encoding="utf-8")) if folder else None
    except (OSError, ValueError):
        return None
    if not isinstance(prices, dict) or not isinstance(table, dict):
        return None
    return _build_index(prices, table.get("providers", {}))


def _build_index(prices: Mapping[str, Any], provider_table: Collection[str]) -> ModelIndex:
    providers = set(provider_table)
    bare: dict[str, str] = {}
    chat: dict[str, str] = {}
    for name, info in prices.items():
        provider = info.get("litellm_provider") if isinstance(info, Mapping) else None
        if not isinstance(provider, str) or " " in provider:  # the map's "sample_spec" entry
            continue
        providers.add(provider)
        if "/" in name:
            providers.add(provider_of(name))
        else:
            bare[name] = provider
        if info.get("mode") in CHAT_MODES:
            full = name if "/" in name else f"{provider}/{name}"
            short = full.rsplit("/", 1)[1]
            if short not in chat or _preferred(full) < _preferred(chat[short]):
                chat[short] = full
    return ModelIndex(frozenset(providers), bare, chat)


_DIRECT_PROVIDERS = list(PROVIDER_ENV_VARS)


def _preferred(full_name: str) -> tuple[int, int]:
    """Sort key among names of one model: the model's own provider first, then shorter."""
    provider = provider_of(full_name)
    rank = _DIRECT_PROVIDERS.index(provider) if provider in _DIRECT_PROVIDERS else len(_DIRECT_PROVIDERS)
    return rank, len(full_name)


def model_name_problem(model: str, configured_providers: Collection[str] = ()) -> str | None:
    """One line saying why litellm cannot serve ``model`` and what to pass instead, or
    None when the name is fine (or litellm's files cannot tell)."""
    if model.startswith(SCRIPTED_PREFIX):
        return None
    index = model_index()
    if index is None:
        return None
    provider = provider_of(model)
    if provider:
        if provider in index.providers or provider in configured_providers:
            return None
        matches = _close(provider, sorted(index.providers | set(configured_providers)))
        nearest = f"; did you mean {_listed(matches)}?" if matches else ""
        return (
            f"unknown model {model}: litellm has no provider called {provider!r}{nearest} "
            f"(pass --model provider/model, e.g. {DEFAULT_MODELS['anthropic']})"
        )
    if model in index.bare_models:
        return None
    matches = [index.chat_models[short] for short in _close(model, index.chat_models)]
    example = f"name it as provider/model, e.g. {DEFAULT_MODELS['anthropic']} or {DEFAULT_MODELS['openai']}"
    if matches:
        return f"unknown model {model}: did you mean {_listed(matches)}? Or {example}"
    return f"unknown model {model}: litellm does not know it; {example}"


def _close(name: str, choices: Collection[str]) -> list[str]:
    """The choices nearest ``name`` as typed (edit distance), best first."""
    from rapidfuzz import fuzz, process, utils

    found = process.extract(
        name, list(choices), scorer=fuzz.ratio, processor=utils.default_process, limit=MAX_SUGGESTIONS, score_cutoff=75
    )
    return [choice for choice, _, _ in found]


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
