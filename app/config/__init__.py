"""Configuration: `.opencode.json` (global and project) and OPENCODE_* variables, layered
and validated into one ``Config``. Imports only pydantic and the standard library, because
every CLI command loads it before doing anything else."""

from app.config.loader import load_config
from app.config.models import (
    ActionName,
    AgentConfig,
    AgentName,
    Config,
    McpServerConfig,
    PermissionRules,
    ToolRule,
)
from app.config.save import save_project_setting
from app.config.schema import config_json_schema, schema_text

__all__ = [
    "ActionName",
    "AgentConfig",
    "AgentName",
    "Config",
    "McpServerConfig",
    "PermissionRules",
    "ToolRule",
    "config_json_schema",
    "load_config",
    "save_project_setting",
    "schema_text",
]
