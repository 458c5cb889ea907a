"""Where hooks are declared, and reading them: the ``hooks`` key of the global and the
project `.opencode.json`, and Claude Code's settings files read as they are
(``~/.claude/settings.json``, the project's ``.claude/settings.json`` and
``.claude/settings.local.json``).

Every file has the same shape: ``{"hooks": {"PreToolUse": [{"matcher": "Bash",
"hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}``. A file that cannot
be used gives one notice naming it and the key, and the others are still read. Hooks
from the user's own files are ``project=False`` and run; the project's run only once
the user trusts them (app/hooks/trust.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from app.config.sources import read_json_object
from app.core.config_paths import CONFIG_FILE, global_config_path
from app.core.errors import ConfigError
from app.hooks.events import EVENTS

DEFAULT_TIMEOUT = 60.0
"""Seconds a hook command runs at most when its entry names no timeout."""


class Hook(NamedTuple):
    """One command declared for an event."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: str
    """The file that declares it, as shown to the user."""
    project: bool
    """Declared by the workspace's own files (runs only once trusted)."""


class HookSources(NamedTuple):
    """Every hook found, and one line per file or entry that could not be used."""

    hooks: list[Hook]
    notices: list[str]


def hook_files(root: Path, env: Mapping[str, str]) -> list[tuple[Path, bool]]:
    """(file, is the project's) for every place hooks are read from, the user's first.
    A workspace that is the home folder has no project files: its files are the user's."""
    user: list[Path] = []
    global_file = global_config_path(env)
    if global_file is not None:
        user.append(global_file)
    home = env.get("HOME")
    if home:
        user.append(Path(home) / ".claude" / "settings.json")
    project = [root / CONFIG_FILE, root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    user_real = {os.path.realpath(path) for path in user}
    own = [path for path in project if os.path.realpath(path) not in user_real]
    return [*((path, False) for path in user), *((path, True) for path in own)]


def load_hooks(root: Path, env: Mapping[str, str]) -> HookSources:
    """The hooks of every file ``hook_files`` lists that exists, in that order."""
    found = HookSources([], [])
    for path, project in hook_files(root, env):
        try:
            data = read_json_object(path)
        except ConfigError as err:
            found.notices.append(f"hooks of {path} not used: {err}")
            continue
        if data is not None and "hooks" in data:
            read_hooks(data["hooks"], str(path), project, found)
    return found


def read_hooks(value: Any, source: str, project: bool, into: HookSources) -> None:
    """Add the hooks of one file's ``hooks`` value to ``into``: an entry that cannot be
    used is left out with a notice naming the file and key; the rest are kept."""
    if not isinstance(value, dict):
        into.notices.append(f'{source}: "hooks" must be an object of event names: hooks of this file not used')
        return
    for event, groups in value.items():
        if event not in EVENTS:
            into.notices.append(
                f'{source}: "hooks.{event}" is not an event opencode runs hooks at ({", ".join(EVENTS)}): skipped'
            )
            continue
        if not isinstance(groups, list):
            into.notices.append(f'{source}: "hooks.{event}" must be a list of matcher groups: skipped')
            continue
        for index, group in enumerate(groups):
            _read_group(group, f"hooks.{event}[{index}]", event, source, project, into)


def _read_group(group: Any, key: str, event: str, source: str, project: bool, into: HookSources) -> None:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        into.notices.append(f'{source}: "{key}" must be an object with a "hooks" list: skipped')
        return
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        into.notices.append(f'{source}: "{key}.matcher" must be a string: skipped')
        return
    for index, entry in enumerate(group["hooks"]):
        where = f"{key}.hooks[{index}]"
        problem = _entry_problem(entry)
        if problem is not None:
            into.notices.append(f'{source}: "{where}" {problem}: skipped')
            continue
        timeout = float(entry.get("timeout") or DEFAULT_TIMEOUT)
        into.hooks.append(Hook(event, matcher, entry["command"], timeout, source, project))


def _entry_problem(entry: Any) -> str | None:
    """Why one hook entry cannot run, or None."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    if entry.get("type", "command") != "command":
        return f'is of type {entry.get("type")!r}; opencode runs hooks of type "command" only'
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return 'needs a "command" string'
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        return '"timeout" must be a number of seconds above 0'
    return None
