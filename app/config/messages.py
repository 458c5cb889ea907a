"""Turning a pydantic ValidationError into one line a person can act on.

The line names the key path as the user spelled it (``"tools.delete.maxFiles"``), says
what the key must hold and what it got, and for unknown keys suggests the closest valid one.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, get_args

from pydantic import BaseModel, ValidationError

from app.config.keys import find_field, key_names, map_values, section_model
from app.config.models import ActionName

KeyPath = tuple[str | int, ...]

_ACTIONS = set(get_args(ActionName))
_EXPECTED_KIND = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


class Problem(NamedTuple):
    """The first thing wrong with some input: where (as the user spelled it) and what."""

    path: KeyPath
    text: str
    more: int = 0

    def line(self, source: str) -> str:
        extra = f" (and {self.more} more problem{'s' if self.more > 1 else ''})" if self.more else ""
        return f"{source}: {self.text}{extra}"


def format_path(path: Sequence[str | int]) -> str:
    """``("contextPaths", 1)`` -> ``contextPaths[1]``; pattern keys keep their dots."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def show(value: Any) -> str:
    """A short JSON rendering of a bad value for the message."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def first_problem(err: ValidationError, data: Mapping[str, Any], model: type[BaseModel]) -> Problem:
    """The first error pydantic found in ``data``, explained; the rest are only counted."""
    errors = err.errors()
    first = errors[0]
    path = _data_path(data, first["loc"])
    return Problem(path, _explain(first, path, model), len(errors) - 1)


def _data_path(data: Any, loc: tuple[str | int, ...]) -> KeyPath:
    """Keep the parts of pydantic's location that index into the data; the others are
    union branch tags (e.g. "patterns"), which the user never wrote."""
    path: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            continue
        path.append(part)
    return tuple(path)


def _explain(error: Mapping[str, Any], path: KeyPath, model: type[BaseModel]) -> str:
    kind, got = error["type"], error.get("input")
    where = f'"{format_path(path)}"'
    if kind == "extra_forbidden":
        return f"unknown key {where}{unknown_key_hint(model, path)}"
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", error["ctx"]["expected"])
        if set(choices) == _ACTIONS:
            return f"{where} has unknown action {show(got)}: use allow, ask or deny"
        return f"{where} must be {_either(choices)} (got {show(got)})"
    if kind in _EXPECTED_KIND:
        return f"{where} must be {_EXPECTED_KIND[kind]} (got {show(got)})"
    message = str(error["msg"])
    if message.startswith("Input should "):
        return f"{where} {message.replace('Input should ', 'must ', 1)} (got {show(got)})"
    return f"{where}: {message} (got {show(got)})"


def _either(choices: list[str]) -> str:
    quoted = [f'"{choice}"' for choice in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" or {quoted[-1]}"


def unknown_key_hint(model: type[BaseModel], path: KeyPath) -> str:
    """Suggest the closest valid key for the last part of ``path``, or list the valid keys."""
    section = _section_at(model, path[:-1])
    if section is None:
        return ""
    valid = key_names(section)
    by_lower = {key.lower(): key for key in valid}
    close = difflib.get_close_matches(str(path[-1]).lower(), list(by_lower), n=1)
    if close:
        return f': did you mean "{by_lower[close[0]]}"?'
    return f": valid keys here are {', '.join(valid)}"


def _section_at(model: type[BaseModel], path: KeyPath) -> type[BaseModel] | None:
    annotation: Any = model
    for key in path:
        section = section_model(annotation)
        if section is not None:
            found = find_field(section, str(key))
            if found is None:
                return None
            annotation = found[2]
        else:
            annotation = map_values(annotation)
    return section_model(annotation)
