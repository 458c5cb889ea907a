"""Which model the TUI talks to: the one chosen at start (falling back to the offline demo
when no provider is configured, so a newcomer sees the whole flow at once) and the
choices the models screen offers. Pure functions over the config and the environment,
and the demo's own workspace, outside the folder opencode was started in."""

from __future__ import annotations

import shutil
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


DEMO_FOLDER = "opencode-demo"
"""What the demo script creates in its workspace (app/llm/demo.json)."""


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


def demo_fallback(cli_model: str | None, config: Config, env: Mapping[str, str]) -> bool:
    """Nothing is configured (no --model, no model in config, no provider key): the app
    starts on the offline demo."""
    return startup_model(cli_model, config, env)[1] is not None


def demo_workspace(env: Mapping[str, str]) -> Path | None:
    """Where the demo works when it starts by itself, made ready for a new demo:
    ``$XDG_DATA_HOME/opencode/demo`` (``~/.local/share`` when unset), so the folder
    opencode was started in (a fresh clone of this project, someone's repository) is
    never written to. The project a previous demo set up there is removed (the script's
    first patch adds its files anew); its sessions are kept. None without HOME or
    XDG_DATA_HOME, or when the folder cannot be made: the demo then works where it was
    started, in its own subfolder."""
    if data := env.get("XDG_DATA_HOME"):
        root = Path(data) / "opencode" / "demo"
    elif home := env.get("HOME"):
        root = Path(home) / ".local" / "share" / "opencode" / "demo"
    else:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    shutil.rmtree(root / DEMO_FOLDER, ignore_errors=True)
    return root


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
