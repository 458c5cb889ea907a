"""The configuration files (global and project): found, read and validated as layers.

Each layer is validated on its own, so an error names the file (and line:column) that
holds the mistake, then normalised to camelCase keys holding only what the layer sets;
pydantic-settings merges those (``app.config.settings``). The OPENCODE_* environment is
the top layer (``app.config.environment``).
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from app.config.messages import first_problem
from app.config.models import ConfigShape
from app.core import boundedjson
from app.core.errors import ConfigError
from app.core.file_kinds import kind_of

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


def normalised(config: ConfigShape) -> dict[str, Any]:
    """What ``config`` was given, camelCase-keyed: the form of a layer's data."""
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
        raise ConfigError(f"{where}: {err}: {limit_fix(err)}") from None
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


def limit_fix(err: boundedjson.JsonLimitError) -> str:
    if "twice" in str(err):
        return "keep one of them (only the last would count)"
    return "no setting needs that much: check that it is the right file"


def file_layer(path: Path) -> Layer | None:
    """The layer from a config file, or None when the file does not exist. JSON types are
    taken strictly: "20" is not an integer in a file."""
    data = read_json_object(path)
    if data is None:
        return None
    return Layer(str(path), normalised(validated(data, str(path), strict=True)))


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
