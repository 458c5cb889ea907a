"""The models a user can pick: for each provider with a key, the chat models litellm's
price map knows (with context window and prices); each custom provider's configured
models; Ollama's local models when it answers; filtered fuzzily as the user types.
The last model picked is remembered per project (a file in the data directory).

Core: no textual; litellm's map is passed in (``litellm.model_cost``), so building the
list never imports litellm itself.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.llm.models import PROVIDER_ENV_VARS, expand_secret, route_for

OLLAMA_DEFAULT_URL = "http://localhost:11434"
OLLAMA_TIMEOUT = 0.5
"""Seconds to wait for a local Ollama: it answers at once or is not running."""
FUZZY_CUTOFF = 70
LAST_MODEL_FILE = "last-model"


@dataclass(frozen=True)
class CatalogEntry:
    model: str
    """The id to pass as --model: provider/model."""
    label: str
    provider: str
    context_window: int | None = None
    input_price: float | None = None
    """USD per million prompt tokens."""
    output_price: float | None = None

    def facts(self) -> str:
        """ "200k ctx · $3.00/$15.00 per M tokens", as far as known."""
        shown = []
        if self.context_window:
            shown.append(f"{_thousands(self.context_window)} ctx")
        if self.input_price is not None and self.output_price is not None:
            shown.append(f"${self.input_price:.2f}/${self.output_price:.2f} per M")
        return " · ".join(shown)


def _thousands(tokens: int) -> str:
    return f"{tokens / 1_000_000:g}M" if tokens >= 1_000_000 else f"{tokens // 1000}k"


def providers_with_keys(providers: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """Built-in providers with a key (environment or config) that are not disabled."""
    names = []
    for name, var in PROVIDER_ENV_VARS.items():
        entry = providers.get(name)
        if entry is not None and entry.disabled:
            continue
        configured = entry.api_key if entry is not None else None
        if env.get(var) or (configured and expand_secret(configured, env)):
            names.append(name)
    return names


def litellm_entries(provider: str, model_cost: Mapping[str, Mapping[str, Any]]) -> list[CatalogEntry]:
    """The chat models litellm's price map lists for ``provider``, as provider/model ids."""
    entries = []
    for key, info in model_cost.items():
        if info.get("litellm_provider") != provider or info.get("mode") != "chat":
            continue
        model = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        entries.append(
            CatalogEntry(
                model=model,
                label=model,
                provider=provider,
                context_window=info.get("max_input_tokens") or info.get("max_tokens"),
                input_price=_per_million(info.get("input_cost_per_token")),
                output_price=_per_million(info.get("output_cost_per_token")),
            )
        )
    return sorted(entries, key=lambda entry: entry.model)


def _per_million(per_token: Any) -> float | None:
    return per_token * 1_000_000 if isinstance(per_token, int | float) else None


def configured_entries(providers: Mapping[str, Any], env: Mapping[str, str]) -> list[CatalogEntry]:
    """The models written in providers.<name>.models (custom providers and overrides)."""
    entries = []
    for name, entry in providers.items():
        if entry.disabled:
            continue
        for model_id in entry.models:
            model = f"{name}/{model_id}"
            facts = route_for(model, providers, env).facts
            entries.append(
                CatalogEntry(
                    model=model,
                    label=facts.name or model,
                    provider=name,
                    context_window=facts.context_window,
                    input_price=facts.prices.input if facts.prices else None,
                    output_price=facts.prices.output if facts.prices else None,
                )
            )
    return entries


def ollama_url(providers: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Where Ollama answers: providers.ollama.baseURL, else OLLAMA_HOST, else its default port."""
    entry = providers.get("ollama")
    url = (entry.base_url if entry is not None else None) or env.get("OLLAMA_HOST") or OLLAMA_DEFAULT_URL
    return url if "://" in url else f"http://{url}"


def ollama_entries(base_url: str, timeout: float = OLLAMA_TIMEOUT) -> list[CatalogEntry]:
    """The models a running Ollama has pulled (GET /api/tags); none when it does not answer."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/api/tags", timeout=timeout) as response:
            listing = json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return []
    names = [model.get("name") for model in listing.get("models", []) if isinstance(model, dict)]
    return [CatalogEntry(f"ollama_chat/{name}", f"ollama_chat/{name}", "ollama") for name in names if name]


def build_catalog(
    providers: Mapping[str, Any],
    env: Mapping[str, str],
    model_cost: Mapping[str, Mapping[str, Any]],
    *,
    local: bool = True,
) -> list[CatalogEntry]:
    """Configured models first, then litellm's for each provider with a key, then Ollama's
    (asked only when ``local``); each model once. Blocks up to OLLAMA_TIMEOUT: call it
    from a thread in UI code."""
    entries = configured_entries(providers, env)
    for provider in providers_with_keys(providers, env):
        entries += litellm_entries(provider, model_cost)
    ollama = providers.get("ollama")
    if local and not (ollama is not None and ollama.disabled):
        entries += ollama_entries(ollama_url(providers, env))
    return each_model_once(entries)


def each_model_once(entries: Iterable[CatalogEntry]) -> list[CatalogEntry]:
    """The entries in order, a model listed again left out."""
    unique: dict[str, CatalogEntry] = {}
    for entry in entries:
        unique.setdefault(entry.model, entry)
    return list(unique.values())


def fuzzy_filter(entries: list[CatalogEntry], query: str) -> list[CatalogEntry]:
    """Entries matching ``query``, best first: those containing it (in order); then those
    whose words each query word nearly matches (typos, other separators, words out of
    order: "sonet 4.5" finds claude-sonnet-4-5); then those holding its letters in order
    ("snt45"), the tightest first. A query with a "/" is an id being typed whole: only
    the entries containing it, so an id the list lacks can be entered."""
    needle = query.strip().lower()
    if not needle:
        return list(entries)
    exact = [entry for entry in entries if needle in entry.model.lower() or needle in entry.label.lower()]
    if "/" in needle:
        return exact
    taken = {entry.model for entry in exact}
    wanted = _words(needle)
    letters = needle.replace(" ", "")
    close, loose = [], []
    for index, entry in enumerate(entries):
        if entry.model in taken:
            continue
        if score := _word_score(wanted, _words(f"{entry.model} {entry.label}")):
            close.append((-score, index, entry))
        elif span := _letters_span(letters, entry.model.lower()):
            loose.append((span, index, entry))
    return exact + [entry for *_, entry in sorted(close)] + [entry for *_, entry in sorted(loose)]


def _letters_span(letters: str, text: str) -> int:
    """The length of the shortest stretch of ``text`` holding ``letters`` in order, or 0."""
    best = 0
    for start, char in enumerate(text):
        if char != letters[0]:
            continue
        position = start
        for letter in letters[1:]:
            position = text.find(letter, position + 1)
            if position < 0:
                return best
        span = position - start + 1
        best = span if not best else min(best, span)
    return best


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _word_score(wanted: list[str], words: list[str]) -> float:
    """The mean of each wanted word's best match among ``words`` (a word starting with it
    scores 100), or 0 when some wanted word matches nothing closely enough."""
    from rapidfuzz import fuzz  # loaded when the models screen first filters

    if not wanted or not words:
        return 0.0
    scores = []
    for want in wanted:
        best = max(100.0 if word.startswith(want) else fuzz.ratio(want, word) for word in words)
        if best < FUZZY_CUTOFF:
            return 0.0
        scores.append(best)
    return sum(scores) / len(scores)


def remember_model(data_dir: Path, model: str) -> None:
    """Keep ``model`` as this project's last used one (best effort: a read-only data
    directory only means it is not remembered)."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        temporary = data_dir / f".{LAST_MODEL_FILE}.{os.getpid()}"
        temporary.write_text(model + "\n", encoding="utf-8")
        temporary.replace(data_dir / LAST_MODEL_FILE)
    except OSError:
        pass


def remembered_model(data_dir: Path) -> str | None:
    """The project's last used model, if one was remembered."""
    try:
        model = (data_dir / LAST_MODEL_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return model or None
