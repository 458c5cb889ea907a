"""The OPENCODE_* environment layer, read by pydantic-settings' ``EnvSettingsSource``.

The library finds the variables by ``env_prefix`` and nests them on
``env_nested_delimiter``; ``EnvironmentSource`` adds what it leaves to its user:

- it reads the load's environment mapping (``load_config`` takes one; tests pass theirs);
- a variable whose first segment names no setting belongs to another tool sharing the
  prefix (OPENCODE_CONFIG, OPENCODE_DISABLE_AUTOUPDATE...): ``warn`` is told and it is left
  out; any other name that reaches no key (a misspelt key, an empty segment, a key below
  a plain value) is a one-line error naming the variable;
- segments match field names (camelCase or snake_case) in any case, at every depth;
- the library lowercases names, so each key is spelt back: a field as its JSON alias, a
  map key (provider, server, tool, pattern...) as the files already spell it, else lower
  case;
- the layer is validated alone, so a bad value is one line naming its variable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource

from app.config.keys import find_field, holds_text, map_values, section_model
from app.config.merge import deep_merge
from app.config.messages import KeyPath, first_problem, format_path, unknown_key_hint
from app.config.models import ConfigShape
from app.config.sources import MAX_CONFIG_BYTES, Layer, limit_fix, normalised
from app.core import boundedjson
from app.core.config_paths import ENV_PREFIX, ENV_SEPARATOR, top_key_of
from app.core.errors import ConfigError

Setting = tuple[str, tuple[str, ...]]
"""A variable's name and the key path it sets, spelt as in the files."""


class EnvironmentSource(EnvSettingsSource):
    """pydantic-settings' environment source over ``env``, whose whole value is the
    validated environment layer (``layer``: None when no variable sets anything).
    ``below`` is the files' merged data, whose spelling of map keys the variables take."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        env: Mapping[str, str],
        below: Mapping[str, Any],
        warn: Callable[[str], None],
    ) -> None:
        super().__init__(settings_cls)
        ours = {name: value for name, value in env.items() if name.upper().startswith(ENV_PREFIX)}
        for name in [name for name in ours if not _names_a_setting(name)]:
            del ours[name]
            warn(_not_a_setting(name))
        self.settings = [(name, _key_path(name, below)) for name in ours]
        # Shallow names first: a JSON value for a section is read before the deeper
        # variables that set keys inside it, which the library then lays on top.
        by_depth = sorted(self.settings, key=lambda setting: len(setting[1]))
        # The library reads os.environ as it is built; the load's own mapping takes its
        # place in ``env_vars``, the public attribute every lookup of the source reads.
        self.env_vars = {name.lower(): ours[name] for name, _ in by_depth}
        self._values = ours
        self._spelling = _spelling(self.settings)
        self._layer: Layer | None = None

    @property
    def layer(self) -> Layer | None:
        """What the variables set, camelCase-keyed and validated; read once."""
        if self._layer is None and self.settings:
            self._layer = Layer("environment", self._read())
        return self._layer

    def __call__(self) -> dict[str, Any]:
        return self.layer.data if self.layer is not None else {}

    def _read(self) -> dict[str, Any]:
        try:
            data = _respelt(self._decoded(), ConfigShape, self._spelling)
        except UndecodableValue:
            raise self._bad_value() from None
        for _, path in self.settings:
            # The library takes a top-level null for "not set"; a variable holding one
            # still sets its key, so validation names it ("debug" must be true or false).
            data.setdefault(path[0], None)
        try:
            return normalised(ConfigShape.model_validate(data))
        except ValidationError as err:
            problem = first_problem(err, data, ConfigShape)
            raise ConfigError(problem.line(f"environment variable {_variable_for(problem.path, self.settings)}")) from None

    def _bad_value(self) -> ConfigError:
        """The variable whose value the library could not decode, and why: each is read
        alone until one fails (only after a failure, so a good load reads them once)."""
        for name, _ in self.settings:
            alone = EnvironmentSource(self.settings_cls, {name: self._values[name]}, {}, _ignore)
            try:
                alone._decoded()
            except UndecodableValue as err:
                return ConfigError(f"environment variable {name}: {err}")
        raise AssertionError("a variable failed to decode together but not alone")

    def _decoded(self) -> dict[str, Any]:
        """The variables as the library reads them: nested, JSON decoded, keys lowercased."""
        return super().__call__()

    def next_field(self, field: FieldInfo | Any | None, key: str, case_sensitive: bool | None = None) -> Any:
        """The field of a section that ``key`` names, by alias or Python name in any case
        (the library would compare nested names with the prefix added); maps and unions
        are left to the library."""
        annotation = field.annotation if isinstance(field, FieldInfo) else field
        section = section_model(annotation)
        if section is not None:
            found = find_field(section, key, ignore_case=True)
            return section.model_fields[found[1]] if found is not None else None
        return super().next_field(field, key, case_sensitive)

    def field_is_complex(self, field: FieldInfo) -> bool:
        """Every key but text reads its variable as JSON (true, 20, ["a"], {...}), as a
        file would hold it; text keys take the value as it is."""
        return not holds_text(field.annotation)

    def decode_complex_value(self, field_name: str, field: FieldInfo | None, value: Any) -> Any:
        """JSON held to the files' limits (no key twice, bounded size, depth and digits).
        Text that is not JSON and does not start like a list or an object is kept as it
        is: pydantic may still take it ("yes" for true), else validation names what the
        key needs ("contextPaths" must be a list)."""
        try:
            return boundedjson.loads(value, max_bytes=MAX_CONFIG_BYTES, unique_keys=True)
        except json.JSONDecodeError as err:
            if value.lstrip().startswith(("[", "{")):
                raise UndecodableValue(f"invalid JSON at column {err.colno}: {err.msg}") from None
            return value
        except boundedjson.JsonLimitError as err:
            raise UndecodableValue(f"{err}: {limit_fix(err)}") from None


class UndecodableValue(Exception):
    """A value that starts as JSON but is not, or breaks a limit. Not a ValueError, which
    the library would swallow for a key that may also hold text (a rule is an action or
    a pattern map) and wrap, for any other, in an error that names no variable."""


def _ignore(message: str) -> None:
    """A warning already given."""


def _names_a_setting(name: str) -> bool:
    """The variable's first segment is a top-level key (an empty one is its own error)."""
    first = top_key_of(name)
    return not first or find_field(ConfigShape, first, ignore_case=True) is not None


def _not_a_setting(name: str) -> str:
    top = top_key_of(name)
    hint = unknown_key_hint(ConfigShape, (top,))
    guess = f" ({hint[2:]})" if "did you mean" in hint else ""
    return f"environment variable {name} is not an opencode setting{guess}: ignored"


def _key_path(name: str, below: Mapping[str, Any]) -> tuple[str, ...]:
    """The key path variable ``name`` sets, spelt as in the files; a name that reaches no
    key is a one-line error."""
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
    return tuple(path)


def _spelling(settings: list[Setting]) -> dict[tuple[str, ...], str]:
    """(the keys above, a key lowercased) -> the key as the name spelt it out (map keys
    as the files spell them), for every key a name sets."""
    spelling: dict[tuple[str, ...], str] = {}
    for _, path in settings:
        for depth, key in enumerate(path):
            spelling[(*path[:depth], key.lower())] = key
    return spelling


def _respelt(
    data: Mapping[str, Any], annotation: Any, spelling: Mapping[tuple[str, ...], str], at: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``data`` (what the library read, at key path ``at`` of type ``annotation``) with
    its keys spelt as in the files: a field as its alias (in any case, as the library
    matches them), a map key from a name as ``_spelling`` has it. A map key a JSON value
    brings keeps its spelling (one in upper case cannot come from a name, which the
    library lowercases); two spellings of one key merge, the later (what a deeper
    variable set) on top."""
    section = section_model(annotation)
    values = map_values(annotation)
    spelt: dict[str, Any] = {}
    for key, value in data.items():
        name, inner = key, None
        if section is not None:
            found = find_field(section, key, ignore_case=True)
            if found is not None:
                name, inner = found[0], found[2]
        elif values is not None:
            name, inner = spelling.get((*at, key), key), values
        if isinstance(value, Mapping) and inner is not None:
            value = _respelt(value, inner, spelling, (*at, name))
        below = spelt.get(name)
        spelt[name] = deep_merge(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return spelt


def _variable_for(path: KeyPath, settings: list[Setting]) -> str:
    """The variable that set ``path``: the deepest one at or above it, else one below it."""
    above = [(len(p), name) for name, p in settings if path[: len(p)] == p]
    if above:
        return max(above)[1]
    return next(name for name, p in settings if p[: len(path)] == path)
