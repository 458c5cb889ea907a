"""The sources pydantic-settings builds a loaded ``Config`` from, in priority order: the
OPENCODE_* environment, the project's `.opencode.json`, the global one, then the
defaults.

The environment is the library's ``EnvSettingsSource`` (``app.config.environment``).
Each file is read by ``app.config.sources`` (a regular file, size and JSON limits,
file:line:column errors) and validated alone, then handed to the library as an
``InitSettingsSource``, the class its ``JsonConfigSettingsSource`` is built on: that one
reads through ``json.loads`` alone, which would give a bare JSON error with no file
name, block on a FIFO, keep the last of a repeated key and refuse a BOM.
pydantic-settings merges the sources (maps key by key) and validates the whole. A
``Load`` holds one load's inputs; ``load_sources`` gives the sources that read it, which
``load_config`` hands to the library for that one ``Config``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource
from pydantic_settings.sources import DefaultSettingsSource

from app.config.environment import EnvironmentSource
from app.config.merge import deep_merge
from app.config.models import Config
from app.config.sources import Layer, file_layer, refuse_user_only
from app.core.config_paths import CONFIG_FILE, global_config_path


class Load:
    """One load's inputs, and the layers its sources read (each file once)."""

    def __init__(
        self, workspace: Path, global_path: Path | None, env: Mapping[str, str], warn: Callable[[str], None]
    ) -> None:
        self.workspace = workspace
        self.global_path = global_path
        self.env = env
        self.warn = warn

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
    def environment_source(self) -> EnvironmentSource:
        """The OPENCODE_* variables' source; map keys take the spelling the files use."""
        below: dict[str, Any] = {}
        for layer in self.files:
            if layer is not None:
                below = deep_merge(below, layer.data)
        return EnvironmentSource(Config, self.env, below, self.warn)

    @property
    def environment(self) -> Layer | None:
        """The variables' layer."""
        return self.environment_source.layer

    @property
    def layers(self) -> list[Layer]:
        """What each source set, lowest priority first, for messages that name them."""
        return [layer for layer in (*self.files, self.environment) if layer is not None]

    def merged(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for layer in self.layers:
            merged = deep_merge(merged, layer.data)
        return merged


def load_sources(settings_cls: type[BaseSettings], load: Load) -> tuple[PydanticBaseSettingsSource, ...]:
    """The environment, the project file, the global file, the defaults: highest priority first."""
    global_file, project_file = load.files
    return (
        load.environment_source,
        *(InitSettingsSource(settings_cls, layer.data) for layer in (project_file, global_file) if layer is not None),
        DefaultSettingsSource(settings_cls),
    )
