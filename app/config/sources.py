"""The configuration layers: a JSON file (global or project) and the OPENCODE_* environment.

Each layer is validated on its own, so an error names the file or the variable that holds
the mistake, then normalised to camelCase keys holding only what the layer sets; the
loader merges those.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from app.config.keys import find_field, holds_text, map_values, section_model
from app.config.merge import deep_merge, nest
from app.config.messages import KeyPath, first_problem, format_path, unknown_key_hint
from app.config.models import ENV_PREFIX, ENV_SEPARATOR, ConfigShape
from app.core import boundedjson
from app.core.errors import ConfigError
from app.core.file_kinds import kind_of

CONFIG_FILE = ".opencode.json"
MAX_CONFIG_BYTES = 1024 * 1024
"""A config file larger than this is not one: a log or a device pointed at by mistake."""


class Layer(NamedTuple):
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
    """The JSON object in ``path``, or None when there is no such file. Only a regular
    file of at most MAX_CONFIG_BYTES is read; its JSON is held to boundedjson's limits and
    may not repeat a key in one object (json would keep the last one silently). A leading
    UTF-8 BOM (as some Windows editors save) is skipped, as RFC 8259 lets a parser do."""
    raw = _read_regular_file(path)
    if raw is None:
        return None
    body = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        offset = err.start + len(raw) - len(body)
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {offset}): save it as UTF-8") from None
    try:
        data = boundedjson.loads(text, max_bytes=MAX_CONFIG_BYTES, unique_keys=True)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
    except boundedjson.JsonLimitError as err:
        where = f"{path}:{err.lineno}" if err.lineno else str(path)
        raise ConfigError(f"{where}: {err}: {_limit_fix(err)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object {{...}} (got {type(data).__name__})")
    return data


def _read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when nothing is there. What is not a regular file
    (a FIFO would block, /dev/zero never ends) is refused by its type before it is opened,
    and checked again on the open descriptor in case it was swapped meanwhile."""
    try:
        _check_regular(path, os.stat(path))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the file ({err.strerror}): check that it is a readable file") from None
    with os.fdopen(fd, "rb") as file:
        _check_regular(path, os.fstat(fd))
        return file.read(MAX_CONFIG_BYTES + 1)


def _check_regular(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: is {kind_of(info.st_mode)}, not a regular file: make it a regular JSON file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: {info.st_size:,} bytes is over the limit of {MAX_CONFIG_BYTES:,} for a config file: "
            "check that it is the right file"
        )


def _limit_fix(err: boundedjson.JsonLimitError) -> str:
    if "twice" in str(err):
        return "keep one of them (only the last would count)"
    return "no setting needs that much: check that it is the right file"


def file_layer(path: Path) -> Layer | None:
    """The layer from a config file, or None when the file does not exist. JSON types are
    taken strictly: "20" is not an integer in a file."""
    data = read_json_object(path)
    if data is None:
        return None
    return Layer(str(path), _normalised(validated(data, str(path), strict=True)))


USER_ONLY_KEYS: tuple[tuple[str, ...], ...] = (
    ("tools", "webfetch", "allowPrivate"),
    ("sandbox", "mechanism"),
    ("sandbox", "network"),
    ("sandbox", "writable"),
)
"""Keys a project's `.opencode.json` may not set: they widen what the agent may reach, and
a cloned repository (or the agent itself) must not be able to open them for itself."""


def refuse_user_only(layer: Layer | None) -> None:
    """Raise a one-line ConfigError when the project layer ``layer`` sets a user-only key."""
    if layer is None:
        return
    for path in USER_ONLY_KEYS:
        node: Any = layer.data
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            raise ConfigError(
                f'{layer.source}: "{".".join(path)}" can be set only in the user config '
                "(~/.config/opencode/.opencode.json) or the environment, not in a project: move it there"
            )


def user_config_file(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/opencode/.opencode.json`` (``~/.config`` when the variable is
    unset): where the user's settings go when they have no global file yet. None
    without HOME or XDG_CONFIG_HOME."""
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "opencode" / CONFIG_FILE
    home = env.get("HOME")
    return Path(home) / ".config" / "opencode" / CONFIG_FILE if home else None


def global_config_path(env: Mapping[str, str]) -> Path | None:
    """``user_config_file`` when that file exists, else ``~/.opencode.json``."""
    candidate = user_config_file(env)
    if candidate is not None and candidate.is_file():
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


def _env_setting(name: str, raw: str, below: Mapping[str, Any]) -> tuple[str, tuple[str, ...], Any]:
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
        return boundedjson.loads(raw, max_bytes=MAX_CONFIG_BYTES, unique_keys=True)
    except json.JSONDecodeError as err:
        if raw.lstrip().startswith(("[", "{")):
            raise ConfigError(f"{source}: invalid JSON at column {err.colno}: {err.msg}") from None
        return raw
    except boundedjson.JsonLimitError as err:
        raise ConfigError(f"{source}: {err}: {_limit_fix(err)}") from None


def _variable_for(path: KeyPath, settings: list[tuple[str, tuple[str, ...], Any]]) -> str:
    """The variable that set ``path``: the deepest one at or above it, else one below it."""
    above = [(len(p), name) for name, p, _ in settings if path[: len(p)] == p]
    if above:
        return max(above)[1]
    return next(name for name, p, _ in settings if p[: len(path)] == path)
