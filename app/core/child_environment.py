"""The environment opencode's children get: its own, less what opencode set for itself.

A few switches reach a library only through the environment (litellm reads
``LITELLM_LOCAL_MODEL_COST_MAP`` when it is imported), and ``--worktree`` points this
process's data folder at the worktree's. Such a variable is set with `set_own`, which
remembers what the user had there; `for_children` is what every child process gets
(the bash tool and its background jobs, hooks, language servers): this process's
environment with each of those variables as the user had it, or left out.
"""

from __future__ import annotations

import os

_USER_VALUES: dict[str, str | None] = {}
"""Each variable opencode set for itself, with the user's value before (None: unset)."""


def set_own(name: str, value: str) -> None:
    """Set ``name`` in this process's environment for opencode itself only."""
    _USER_VALUES.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def for_children() -> dict[str, str]:
    """This process's environment as the user gave it: what a child process starts with."""
    environment = os.environ.copy()
    for name, user_value in _USER_VALUES.items():
        if user_value is None:
            environment.pop(name, None)
        else:
            environment[name] = user_value
    return environment
