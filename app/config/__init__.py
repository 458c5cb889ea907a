"""Configuration: `.opencode.json` (global and project) and OPENCODE_* variables, layered
by pydantic-settings and validated into one ``Config``. Imports only pydantic,
pydantic-settings and the standard library, because every CLI command loads it before
doing anything else."""

from importlib import import_module
from typing import Any

from app.config.loader import Fingerprint, config_files, config_fingerprint, load_config
from app.config.models import (
    ActionName,
    AgentConfig,
    AgentName,
    Config,
    McpServerConfig,
    PermissionRules,
    ToolRule,
)

__all__ = [
    "ActionName",
    "AgentConfig",
    "AgentName",
    "Config",
    "McpServerConfig",
    "PermissionRules",
    "ToolRule",
    "Fingerprint",
    "config_files",
    "config_fingerprint",
    "config_json_schema",
    "load_config",
    "save_project_setting",
    "save_user_setting",
    "schema_text",
]

# Saving (tempfile) and the schema export serve one command each: loaded on first use,
# so the commands that only load the configuration do not pay for them. (Not through
# app.core.lazy: this package imports nothing of app outside app.config and app.core.errors.)
_LAZY = {
    "config_json_schema": "app.config.schema",
    "save_project_setting": "app.config.save",
    "save_user_setting": "app.config.save",
    "schema_text": "app.config.schema",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'app.config' has no attribute {name!r}")
