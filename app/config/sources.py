"""The configuration layers: a JSON file (global or project) and the OPENCODE_* environment.

Each layer is validated on its own, so an error names the file or the variable that holds
the mistake, then normalised to camelCase keys holding only what the layer sets; the
loader merges those.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.config.keys import find_field, holds_text, map_values, section_model
from app.config.merge import deep_merge, nest
from app.config.messages import KeyPath, first_problem, format_path, unknown_key_hint
from app.config.models import ENV_PREFIX, ENV_SEPARATOR, ConfigShape
from app.errors import ConfigError

CONFIG_FILE = ".opencode.json"


@dataclass(frozen=True)
class Layer:
    """What one source sets: ``source`` names it in messages, ``data`` is camelCase-keyed."""

    source: str
    data: dict[str, Any]


def validated(data: Mapping[str, Any], source: str, *, strict: bool) -> ConfigShape:
    """Validate ``data`` as a whole or partial configuration; errors name ``source``."""
    try:
        return ConfigShape.model_validate(data, strict=strict)
    except ValidationError as err:
        raise ConfigError(first_problem(err, data, ConfigShape).line(source)) from None


def _normalised(config: ConfigShape) -> dict[str, Any]:
    return config.model_dump(by_alias=True, exclude_unset=True)


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when there is no such file. A leading UTF-8
    BOM (as some Windows editors save) is skipped, as RFC 8259 lets a parser do."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the file ({err.strerror}): check that it is a readable file") from None
    body = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        offset = err.start + len(raw) - len(body)
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {offset}): save it as UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object {{...}} (got {type(data).__name__})")
    return data


def file_layer(path: Path) -> Layer | None:
    """The layer from a config file, or None when the file does not exist. JSON types are
    taken strictly: "20" is not an integer in a file."""
    data = read_json_object(path)
    if data is None:
        return None
    return Layer(str(path), _normalised(validated(data, str(path), strict=True)))


def global_config_path(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/opencode/.opencode.json`` when that file exists, else ``~/.opencode.json``."""
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        candidate = Path(xdg) / "opencode" / CONFIG_FILE
        if candidate.is_file():
            return candidate
    home = env.get("HOME")
    return Path(home) / CONFIG_FILE if home else None


def env_layer(env: Mapping[str, str], below: Mapping[str, Any], warn: Callable[[str], None]) -> Layer | None:
    """The layer from OPENCODE_* variables, or None when there are none.

    ``OPENCODE_TOOLS__DELETE__MAXFILES=20``: segments split on ``__`` match field names
    (camelCase or snake_case) case-insensitively. A segment that is a map key (provider,
    server, tool name...) takes the spelling already used in ``below`` (the merged files),
    else lower case. Values are JSON where the key holds anything but text. A variable
    whose first segment names no setting belongs to another tool sharing the prefix
    (OPENCODE_CONFIG, OPENCODE_DISABLE_AUTOUPDATE...): ``warn`` is told, and it is ignored.
    """
    ours = {name: value for name, value in env.items() if name.upper().startswith(ENV_PREFIX)}
    for name in [name for name in ours if not _names_a_setting(name)]:
        del ours[name]
        top = name[len(ENV_PREFIX):].split(ENV_SEPARATOR)[0].lower()
        hint = unknown_key_hint(ConfigShape, (top,))
        guess = f" ({hint[2:]})" if "did you mean" in hint else ""
        warn(f"environment variable {name} is not an opencode setting{guess}: ignored")
    settings = sorted(
        (_env_setting(name, value, below) for name, value in ours.items()),
        key=lambda setting: (len(setting[1]), setting[0]),  # deeper variables win over a JSON value above them
    )
    if not settings:
        return None
    data: dict[str, Any] = {}
    for _, path, value in settings:
        data = deep_merge(data, nest(path, value))
    try:
        config = ConfigShape.model_validate(data)
    except ValidationError as err:
        problem = first_problem(err, data, ConfigShape)
        raise ConfigError(problem.line(f"environment variable {_variable_for(problem.path, settings)}")) from None
    return Layer("environment", _normalised(config))


def _names_a_setting(name: str) -> bool:
    """The variable's first segment is a top-level key (an empty one is its own error)."""
    first = name[len(ENV_PREFIX):].split(ENV_SEPARATOR)[0]
    return not first or find_field(ConfigShape, first, ignore_case=True) is not None


def _env_setting(name: str, raw: str, below: Mapping[str, Any]) -> tuple[str, KeyPath, Any]:
    source = f"environment variable {name}"
    segments = name[len(ENV_PREFIX):].split(ENV_SEPARATOR)
    if not all(segments):
        raise ConfigError(f"{source}: empty key in the name: separate keys with a single '{ENV_SEPARATOR}'")
    annotation: Any = ConfigShape
    node: Any = below
    path: list[str] = []
    for segment in segments:
        section = section_model(annotation)
        values = map_values(annotation)
        if section is not None:
            found = find_field(section, segment, ignore_case=True)
            if found is None:
                wrong = (*path, segment.lower())
                raise ConfigError(f'{source}: unknown key "{format_path(wrong)}"{unknown_key_hint(ConfigShape, wrong)}')
            key, annotation = found[0], found[2]
        elif values is not None:
            known = node if isinstance(node, Mapping) else {}
            key = next((k for k in known if k.lower() == segment.lower()), segment.lower())
            annotation = values
        else:
            raise ConfigError(
                f'{source}: "{format_path(path)}" has no key "{segment.lower()}" to set by name: '
                f"set {ENV_PREFIX}{ENV_SEPARATOR.join(segments[:len(path)])} to a JSON value instead"
            )
        path.append(key)
        node = node.get(key) if isinstance(node, Mapping) else None
    return name, tuple(path), _env_value(source, raw, annotation)


def _env_value(source: str, raw: str, annotation: Any) -> Any:
    """Text keys take the value as is; other keys read it as JSON (true, 20, ["a"], {...}),
    falling back to the raw text so pydantic can still accept e.g. "yes" for a boolean."""
    if holds_text(annotation):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        if raw.lstrip().startswith(("[", "{")):
            raise ConfigError(f"{source}: invalid JSON at column {err.colno}: {err.msg}") from None
        return raw


def _variable_for(path: KeyPath, settings: list[tuple[str, KeyPath, Any]]) -> str:
    """The variable that set ``path``: the deepest one at or above it, else one below it."""
    above = [(len(p), name) for name, p, _ in settings if path[: len(p)] == p]
    if above:
        return max(above)[1]
    return next(name for name, p, _ in settings if p[: len(path)] == path)
