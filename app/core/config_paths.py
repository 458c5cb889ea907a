"""Where the user's and a project's config files live, and how a variable names a setting,
known without the configuration package (and pydantic): the first frame's theme and the
early view of a resumed session read them before the config loads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

CONFIG_FILE = ".opencode.json"
"""The config file's name, in a project's root and in the user's folders."""
DEFAULT_DATA_FOLDER = ".opencode"
"""``data.directory`` when nothing sets it: the database, file history and logs."""
ENV_PREFIX = "OPENCODE_"
"""What the name of every variable that sets a key begins with (in any case)."""
ENV_SEPARATOR = "__"
"""What separates the keys of a path in a variable's name (OPENCODE_DATA__DIRECTORY)."""


def top_key_of(variable: str) -> str:
    """The top-level key, lowercased, that a variable named with ``ENV_PREFIX`` sets, if
    it names one (OPENCODE_PROVIDERS__OPENAI__DISABLED: "providers")."""
    return variable[len(ENV_PREFIX) :].split(ENV_SEPARATOR)[0].lower()


def user_config_dir(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode`` (None without HOME)."""
    if xdg := env.get("XDG_CONFIG_HOME"):
        return Path(xdg) / "opencode"
    home = env.get("HOME")
    return Path(home) / ".config" / "opencode" if home else None


def user_config_file(env: Mapping[str, str]) -> Path | None:
    """``user_config_dir``'s config file: where the user's settings go when they have no
    global file yet. None without HOME or XDG_CONFIG_HOME."""
    folder = user_config_dir(env)
    return folder / CONFIG_FILE if folder is not None else None


def global_config_path(env: Mapping[str, str]) -> Path | None:
    """``user_config_file`` when that file exists, else ``~/.opencode.json``."""
    candidate = user_config_file(env)
    if candidate is not None and candidate.is_file():
        return candidate
    home = env.get("HOME")
    return Path(home) / CONFIG_FILE if home else None
