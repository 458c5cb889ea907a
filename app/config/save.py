"""Changing one setting in a `.opencode.json`: the user's global file (the TUI saves the
chosen theme there, for every project) or the project's.

The new document is validated before anything is written, and written atomically, so a
bad value or a crash never leaves a half-written or invalid file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.config.keys import find_field, map_values, section_model
from app.config.models import Config
from app.config.sources import read_json_object, validated
from app.core.config_paths import CONFIG_FILE, global_config_path, user_config_file
from app.core.errors import ConfigError

NEW_FILE_MODE = 0o644


def save_project_setting(workspace: Path, key_path: str | Sequence[str], value: Any) -> Path:
    """Set ``key_path`` (``"tui.theme"``, or a sequence of keys when a key contains a dot,
    e.g. ``("permission", "rules", "delete", "*.go")``) to ``value`` in
    ``<workspace>/.opencode.json`` (see ``save_setting``); returns the file."""
    return save_setting(Path(workspace) / CONFIG_FILE, key_path, value)


def save_user_setting(key_path: str | Sequence[str], value: Any, env: Mapping[str, str] | None = None) -> Path:
    """Set ``key_path`` to ``value`` in the user's global file: the one the loader reads
    when there is one, else ``$XDG_CONFIG_HOME/opencode/.opencode.json`` (``~/.config``
    when unset), made with its folder; returns the file. Raises ConfigError."""
    env = os.environ if env is None else env
    existing = global_config_path(env)
    path = existing if existing is not None and existing.is_file() else user_config_file(env)
    if path is None:
        raise ConfigError("cannot save a setting for every project: set HOME or XDG_CONFIG_HOME")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"{path.parent}: cannot make the folder ({err.strerror}): check its parent") from None
    return save_setting(path, key_path, value)


def save_setting(path: Path, key_path: str | Sequence[str], value: Any) -> Path:
    """Set ``key_path`` to ``value`` in the config file ``path``, creating the file if
    needed and keeping the other keys. The file is rewritten as
    2-space-indented JSON. Returns ``path``; raises ConfigError."""
    keys = key_path.split(".") if isinstance(key_path, str) else list(key_path)
    if not keys or not all(keys):
        raise ConfigError(f"cannot save setting {key_path!r}: the key path has an empty key")
    document = read_json_object(path) or {}
    _set(document, _spelled_as_in(document, keys), value)
    validated(document, f"{path} (after setting {'.'.join(keys)})", strict=True)
    _write_atomically(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return path


def _spelled_as_in(document: dict[str, Any], keys: list[str]) -> list[str]:
    """Use each field's camelCase alias, unless the file already spells it in snake_case,
    so a setting never appears twice under two spellings."""
    spelled: list[str] = []
    annotation: Any = Config
    node: Any = document
    for key in keys:
        section = section_model(annotation)
        found = find_field(section, key) if section is not None else None
        if found is not None:
            alias, name, annotation = found
            key = name if isinstance(node, dict) and name in node and alias not in node else alias
        else:
            annotation = map_values(annotation)
        spelled.append(key)
        node = node.get(key) if isinstance(node, dict) else None
    return spelled


def _set(document: dict[str, Any], keys: list[str], value: Any) -> None:
    node = document
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value


def _write_atomically(path: Path, text: str) -> None:
    """Write a temp file beside ``path`` and rename it over, keeping the file's mode. A
    symlinked file (dotfiles kept in a repository) is written where the link points, so
    the link stays a link."""
    path = path.resolve()
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else NEW_FILE_MODE
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise ConfigError(f"{path}: cannot write the file ({err.strerror}): check the directory") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException as err:
        Path(temp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise ConfigError(f"{path}: cannot write the file ({err.strerror}): check the disk and the folder") from None
        raise
