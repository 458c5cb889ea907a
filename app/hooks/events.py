"""The hook events and the JSON each hook command reads on its stdin, in the shapes
Claude Code documents, so hook scripts written for it work unchanged.

A tool event names the tool as Claude Code does when ours has a Claude counterpart
(``edit`` is ``Edit``), and ``tool_input`` carries both spellings of every parameter:
ours (``filePath``) and Claude Code's (``file_path``, an absolute path there).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from app.config.models import HookEvent

EVENTS: tuple[str, ...] = get_args(HookEvent)
"""Every event a hook can be declared for."""

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})
"""Events whose hooks' plain stdout is added to what the model reads."""

CLAUDE_TOOL_NAMES = {
    "bash": "Bash",
    "edit": "Edit",
    "write": "Write",
    "view": "Read",
    "glob": "Glob",
    "grep": "Grep",
    "multiedit": "MultiEdit",
    "task": "Task",
    "webfetch": "WebFetch",
    "todowrite": "TodoWrite",
    "ls": "LS",
}
"""Our tool -> the name Claude Code gives its counterpart."""

_CLAUDE_PARAMETERS = {
    "filePath": "file_path",
    "oldString": "old_string",
    "newString": "new_string",
    "replaceAll": "replace_all",
}
"""Our parameter -> Claude Code's spelling, where they differ."""

_PATH_PARAMETERS = frozenset({"filePath"})
"""Parameters Claude Code gives as absolute paths."""


def tool_names(tool: str) -> tuple[str, ...]:
    """The names a matcher may use for ``tool``: ours and Claude Code's, if any."""
    claude = CLAUDE_TOOL_NAMES.get(tool)
    return (tool, claude) if claude else (tool,)


def matches(matcher: str, names: tuple[str, ...]) -> bool:
    """Whether a hook's matcher selects a target known by ``names``: an empty matcher or
    ``*`` selects everything, otherwise it is a regular expression that must match one
    name whole (``Edit|Write``, ``edit|write``, ``mcp__.*``). A matcher that is not a
    valid expression matches the names spelled exactly."""
    if matcher in ("", "*"):
        return True
    try:
        pattern = re.compile(matcher)
    except re.error:
        return matcher in names
    return any(pattern.fullmatch(name) for name in names)


def tool_input(arguments: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """A call's arguments with Claude Code's parameter names added beside ours; a path
    parameter gets its absolute form under Claude Code's name, as Claude Code sends it."""
    shown: dict[str, Any] = dict(arguments)
    for ours, theirs in _CLAUDE_PARAMETERS.items():
        if ours not in arguments or theirs in shown:
            continue
        value = arguments[ours]
        if ours in _PATH_PARAMETERS and isinstance(value, str):
            value = str(root / value) if not Path(value).is_absolute() else value
        shown[theirs] = value
    edits = arguments.get("edits")
    if isinstance(edits, list):
        shown["edits"] = [tool_input(item, root) if isinstance(item, Mapping) else item for item in edits]
    return shown


def payload(
    event: str, *, session_id: str, cwd: Path, transcript_path: str = "", **fields: Any
) -> dict[str, Any]:
    """The JSON object a hook of ``event`` reads: the common fields, then the event's own
    (``tool_name``, ``tool_input``, ``tool_response``, ``prompt``, ``stop_hook_active``,
    ``source``, ``reason``, ``trigger``, ``message``...)."""
    return {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }
