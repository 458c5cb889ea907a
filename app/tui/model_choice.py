"""Which model the TUI talks to: the one chosen at start (falling back to the offline demo
when no provider is configured, so a newcomer sees the whole flow at once) and the
choices the models screen offers. Pure functions over the config and the environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.config import Config
from app.llm.models import DEFAULT_MODELS, ONBOARDING_NOTE, PROVIDER_ENV_VARS, choose_model
from app.llm.scripted import DEMO_MODEL, SCRIPTED_PREFIX

DEMO_NOTE = (
    "Meanwhile the offline demo model is selected: type a prompt to watch it read, edit, "
    "patch and delete files with your approval (ctrl+o chooses another model)."
)


@dataclass(frozen=True)
class ModelChoice:
    model: str
    label: str
    provider: str


def startup_model(cli_model: str | None, config: Config, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(model, note to show). The note is the onboarding text when nothing is configured."""
    chosen = choose_model(cli_model, config.agents.coder.model, env, config.providers)
    if chosen is None:
        return DEMO_MODEL, f"{ONBOARDING_NOTE}\n\n{DEMO_NOTE}"
    return chosen, None


def model_label(model: str) -> str:
    """A short name for the status bar: scripted models by file name."""
    if model == DEMO_MODEL:
        return "demo (offline)"
    if model.startswith(SCRIPTED_PREFIX):
        return f"scripted: {Path(model[len(SCRIPTED_PREFIX):]).name}"
    return model


def configured_providers(config: Config, env: Mapping[str, str]) -> list[str]:
    """Providers with a key (environment or config) or a base URL, and not disabled; then
    any other provider the config names (a local server such as ollama)."""
    names = []
    for name, var in PROVIDER_ENV_VARS.items():
        entry = config.providers.get(name)
        if entry is not None and entry.disabled:
            continue
        if env.get(var) or (entry is not None and (entry.api_key or entry.base_url)):
            names.append(name)
    others = (name for name, entry in config.providers.items() if name not in PROVIDER_ENV_VARS and not entry.disabled)
    return names + list(others)


def available_models(config: Config, env: Mapping[str, str], current: str) -> list[ModelChoice]:
    """The current model, the models named in config, each configured provider's default,
    and the offline demo; no duplicates, in that order."""
    candidates = [current]
    candidates += [agent.model for agent in (config.agents.coder, config.agents.workhorse) if agent.model]
    candidates += [DEFAULT_MODELS[name] for name in configured_providers(config, env) if name in DEFAULT_MODELS]
    candidates.append(DEMO_MODEL)
    seen: dict[str, ModelChoice] = {}
    for model in candidates:
        if model not in seen:
            provider = "offline" if model.startswith(SCRIPTED_PREFIX) else model.split("/", 1)[0]
            seen[model] = ModelChoice(model, model_label(model), provider)
    return list(seen.values())
