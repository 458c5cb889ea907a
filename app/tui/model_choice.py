"""Which model the TUI talks to: the one chosen at start (falling back to the offline demo
when no provider is configured, so a newcomer sees the whole flow at once) and the
choices the models screen offers. Pure functions over the config and the environment,
and the demo's own workspace, outside the folder opencode was started in."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from app.config import Config
from app.llm.models import ONBOARDING_NOTE, choose_model
from app.llm.scripted import DEMO_MODEL, SCRIPTED_PREFIX

if TYPE_CHECKING:  # the catalog (rapidfuzz) loads when the models screen opens, not at start
    from app.llm.catalog import CatalogEntry

DEMO_NOTE = (
    "Meanwhile the offline demo model is selected: type a prompt to watch it read, edit, "
    "patch and delete files with your approval (ctrl+o chooses another model)."
)


DEMO_FOLDER = "opencode-demo"
"""What the demo script creates in its workspace (app/llm/demo.json)."""


def startup_model(
    cli_model: str | None, config: Config, env: Mapping[str, str], remembered: str | None = None
) -> tuple[str, str | None]:
    """(model, note to show): --model, the coder's model in config, the model last used
    in this project, the first provider with a key; else the offline demo and the
    onboarding text."""
    chosen = choose_model(cli_model, config.agents.coder.model or remembered, env, config.providers)
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


async def available_models(config: Config, env: Mapping[str, str], current: str) -> list[CatalogEntry]:
    """The current model, the agents' models in config, the catalog (configured models,
    litellm's chat models for each provider with a key, Ollama's when it answers), and
    the offline demo; each once. Waits for litellm's import only when a provider has a key."""
    from app.llm.catalog import build_catalog, each_model_once, providers_with_keys
    from app.llm.provider import litellm_imported

    model_cost: Mapping = {}
    if providers_with_keys(config.providers, env):
        model_cost = (await litellm_imported()).model_cost
    catalog = await asyncio.to_thread(build_catalog, config.providers, env, model_cost)
    known = {entry.model: entry for entry in catalog}
    named = [current, *(agent.model for agent in (config.agents.coder, config.agents.workhorse) if agent.model)]
    entries = [*(known.get(model) or _bare_entry(model) for model in named), *catalog, _bare_entry(DEMO_MODEL)]
    return each_model_once(entries)


def _bare_entry(model: str) -> CatalogEntry:
    from app.llm.catalog import CatalogEntry

    provider = "offline" if model.startswith(SCRIPTED_PREFIX) else model.split("/", 1)[0]
    return CatalogEntry(model, model_label(model), provider)
