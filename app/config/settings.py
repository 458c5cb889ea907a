"""The sources pydantic-settings builds a loaded ``Config`` from, in priority order: the
OPENCODE_* environment, the project's `.opencode.json`, the global one, then the
defaults.

Each source is one of ``app.config.sources``' layers, validated on its own first, so a
mistake is reported in one line naming its file (and line:column) or its variable;
pydantic-settings merges them (maps key by key) and validates the whole. A ``Load``
holds one load's inputs; ``load_sources`` gives the sources that read it, which
``load_config`` hands to the library for that one ``Config``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource
from pydantic_settings.sources import DefaultSettingsSource

from app.config.merge import deep_merge
from app.config.sources import CONFIG_FILE, Layer, env_layer, file_layer, global_config_path, refuse_user_only


class Load:
    """One load's inputs, and the layers its sources read (each file once)."""

    def __init__(
        self, workspace: Path, global_path: Path | None, env: Mapping[str, str], warn: Callable[[str], None]
    ) -> None:
        self.workspace = workspace
        self.global_path = global_path
        self.env = env
        self.warn = warn
        self.layers: list[Layer] = []
        """What each source set, lowest priority first, for messages that name them."""

    @cached_property
    def paths(self) -> tuple[Path | None, Path]:
        """The (global, project) files, which need not exist; a workspace at $HOME reads
        ~/.opencode.json once."""
        project = self.workspace / CONFIG_FILE
        found = self.global_path if self.global_path is not None else global_config_path(self.env)
        if found is None or self.project_is_global:
            return None, project
        return found, project

    @cached_property
    def project_is_global(self) -> bool:
        """The workspace is the home folder: its `.opencode.json` is the user's own file."""
        found = self.global_path if self.global_path is not None else global_config_path(self.env)
        return found is not None and os.path.realpath(found) == os.path.realpath(self.workspace / CONFIG_FILE)

    @cached_property
    def files(self) -> tuple[Layer | None, Layer | None]:
        """The (global, project) layers."""
        found, project = self.paths
        project_layer = file_layer(project)
        if not self.project_is_global:
            refuse_user_only(project_layer)
        return (file_layer(found) if found is not None else None), project_layer

    @cached_property
    def environment(self) -> Layer | None:
        """The variables' layer; map keys take the spelling the files use."""
        below: dict[str, Any] = {}
        for layer in self.files:
            if layer is not None:
                below = deep_merge(below, layer.data)
        return env_layer(self.env, below, self.warn)

    def merged(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for layer in self.layers:
            merged = deep_merge(merged, layer.data)
        return merged


class LayerSource(PydanticBaseSettingsSource):
    """A source whose whole value is one layer of ``load`` (nothing when it sets none)."""

    def __init__(self, settings_cls: type[BaseSettings], load: Load, read: Callable[[Load], Layer | None]) -> None:
        super().__init__(settings_cls)
        self._load = load
        self._read = read

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: the layer is read whole in ``__call__``."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        layer = self._read(self._load)
        if layer is None:
            return {}
        self._load.layers.insert(0, layer)  # pydantic-settings calls the highest priority first
        return layer.data


def load_sources(settings_cls: type[BaseSettings], load: Load) -> tuple[PydanticBaseSettingsSource, ...]:
    """The environment, the project file, the global file, the defaults: highest priority first."""
    return (
        LayerSource(settings_cls, load, lambda load: load.environment),
        LayerSource(settings_cls, load, lambda load: load.files[1]),
        LayerSource(settings_cls, load, lambda load: load.files[0]),
        DefaultSettingsSource(settings_cls),
    )
