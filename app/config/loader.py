"""``load_config``: defaults < global file < project file < OPENCODE_* environment.

pydantic-settings layers them: the sources of one load (``app.config.settings``) are
given to ``Config`` as it is built, and the library merges what they read by their
priority. Each layer is validated alone
first, so the error names its file or variable; the merged result is validated again,
including the checks that need keys from several layers at once (a server's
``command`` may come from the global file and its ``disabled`` from the project).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.config.merge import deep_merge
from app.config.messages import KeyPath, first_problem, format_path
from app.config.models import Config, UserPermission
from app.config.settings import Load, load_sources
from app.core.errors import ConfigError


def warn_on_stderr(message: str) -> None:
    print(f"opencode: warning: {message}", file=sys.stderr)


def load_config(
    workspace: Path,
    *,
    global_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    warn: Callable[[str], None] = warn_on_stderr,
) -> Config:
    """The configuration for ``workspace``. ``global_path=None`` looks the global file up
    from ``env`` (XDG_CONFIG_HOME, HOME); ``env=None`` means ``os.environ``. A missing
    file is simply no layer; an OPENCODE_* variable that names no setting (other tools
    share the prefix) is passed to ``warn`` and ignored. Raises ConfigError with a
    one-line message."""
    load = Load(Path(workspace), global_path, os.environ if env is None else env, warn)
    try:
        config = Config(_build_sources=(load_sources(Config, load), {}))
    except ValidationError as err:
        merged = load.merged()
        raise ConfigError(first_problem(err, merged, Config).line(_names(load) or "defaults")) from None
    for path, problem in _incomplete_entries(config):
        sources = " + ".join(layer.source for layer in load.layers if _sets(layer.data, path))
        raise ConfigError(f'{sources}: "{format_path(path)}" {problem}')
    config.keep_user_permission(_user_permission(load))
    return config


def _user_permission(load: Load) -> UserPermission:
    """The permission rules of the user's own layers: the global file, the environment,
    and the workspace's file when the workspace is the home folder (it is the user's own)."""
    global_file, project_file = load.files
    own = [global_file, project_file if load.project_is_global else None, load.environment]
    merged: dict[str, Any] = {}
    for layer in own:
        if layer is not None:
            merged = deep_merge(merged, layer.data)
    agents = merged.get("agents", {})
    return UserPermission(
        merged.get("permission", {}).get("rules", {}),
        {name: settings["permission"] for name, settings in agents.items() if settings.get("permission")},
    )


def config_files(workspace: Path, global_path: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The files ``load_config`` reads, lowest layer first (they need not exist): the
    global one, then the project's ``.opencode.json``; for a front-end to watch."""
    load = Load(Path(workspace), global_path, os.environ if env is None else env, warn_on_stderr)
    return [path for path in load.paths if path is not None]


Fingerprint = tuple[tuple[int, int, int] | None, ...]


def config_fingerprint(
    workspace: Path, global_path: Path | None = None, env: Mapping[str, str] | None = None
) -> Fingerprint:
    """(mtime_ns, size, inode) of each file ``config_files`` lists, None where absent: it
    changes when one of them is saved, so a long-lived front-end knows to read them again."""
    stamps: list[tuple[int, int, int] | None] = []
    for path in config_files(workspace, global_path, env):
        try:
            stat = os.stat(path)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((stat.st_mtime_ns, stat.st_size, stat.st_ino))
    return tuple(stamps)


def _names(load: Load) -> str:
    return " + ".join(layer.source for layer in load.layers)


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
