"""``load_config``: defaults < global file < project file < OPENCODE_* environment.

Each layer is validated alone first (so the error names its file or variable), then the
layers are deep-merged and the result validated, including the checks that need keys
from several layers at once (a server's ``command`` may come from the global file and
its ``disabled`` from the project).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from app.config.merge import deep_merge
from app.config.messages import KeyPath, format_path
from app.config.models import Config
from app.config.sources import CONFIG_FILE, env_layer, file_layer, global_config_path, validated
from app.errors import ConfigError


def load_config(
    workspace: Path, *, global_path: Path | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """The configuration for ``workspace``. ``global_path=None`` looks the global file up
    from ``env`` (XDG_CONFIG_HOME, HOME); ``env=None`` means ``os.environ``. A missing
    file is simply no layer. Raises ConfigError with a one-line message."""
    env = os.environ if env is None else env
    layers = [layer for path in _config_files(Path(workspace), global_path, env) if (layer := file_layer(path))]
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
    if (from_env := env_layer(env, merged)) is not None:
        layers.append(from_env)
        merged = deep_merge(merged, from_env.data)
    config = validated(merged, " + ".join(layer.source for layer in layers) or "defaults", strict=False)
    for path, problem in _incomplete_entries(config):
        sources = " + ".join(layer.source for layer in layers if _sets(layer.data, path))
        raise ConfigError(f'{sources}: "{format_path(path)}" {problem}')
    return config


def _config_files(workspace: Path, global_path: Path | None, env: Mapping[str, str]) -> list[Path]:
    project = workspace / CONFIG_FILE
    found = global_path if global_path is not None else global_config_path(env)
    if found is None or os.path.realpath(found) == os.path.realpath(project):
        return [project]  # a workspace at $HOME reads ~/.opencode.json once
    return [found, project]


def _incomplete_entries(config: Config) -> Iterator[tuple[KeyPath, str]]:
    """Entries that only make sense once every layer is merged in."""
    for name, server in config.mcp_servers.items():
        if server.disabled:
            continue
        if server.type == "stdio" and not server.command:
            yield ("mcpServers", name), 'needs a "command" (stdio server): add one or set "disabled": true'
        if server.type == "http" and not server.url:
            yield ("mcpServers", name), 'needs a "url" (http server): add one or set "disabled": true'
    for language, lsp in config.lsp.items():
        if not lsp.disabled and not lsp.command:
            yield ("lsp", language), 'needs a "command": add one or set "disabled": true'
    bash = config.tools.bash
    if bash.default_timeout_ms > bash.max_timeout_ms:
        yield ("tools", "bash"), (
            f"has defaultTimeoutMs {bash.default_timeout_ms} above maxTimeoutMs {bash.max_timeout_ms}: "
            "lower the first or raise the second"
        )


def _sets(data: Mapping[str, Any], path: KeyPath) -> bool:
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True
