"""What a tool call says about itself in the chat, as plain strings: the action shown
while it runs, the subject (path, pattern, command) and a short outcome. Pure functions
over the call's arguments and result metadata, so they are tested without a screen."""

from __future__ import annotations

import re
from typing import Any

from app.agents.catalog import READ_TOOLS as AGENT_READ_TOOLS
from app.core.control_chars import escape_controls
from app.tui.short_path import shorten_path

ACTIONS: dict[str, str] = {
    "view": "Reading...",
    "ls": "Listing...",
    "glob": "Searching...",
    "grep": "Searching...",
    "write": "Writing...",
    "edit": "Editing...",
    "multiedit": "Editing...",
    "patch": "Patching...",
    "delete": "Deleting...",
    "bash": "Running...",
    "task": "Delegating...",
    "revert": "Reverting...",
    "webfetch": "Fetching...",
    "todowrite": "Planning...",
    "todoread": "Reading the plan...",
}
DIFF_TOOLS = frozenset({"write", "edit", "multiedit", "patch", "delete", "revert"})
READ_TOOLS = frozenset(AGENT_READ_TOOLS)  # the tools that only read, as the agents define them
PATCH_FILE_LINE = re.compile(r"^\*\*\*\s*(?:Add|Update|Delete) File:\s*(.+?)\s*$", re.MULTILINE)


SUBJECT_LIMIT = 120
"""Characters of a call's subject in its header; a longer path is cut in the middle."""


def action(tool: str) -> str:
    return ACTIONS.get(tool, "Working...")


def first_line(text: str, limit: int = 120) -> str:
    """The first line of ``text``, marked with "…" when anything was left out, its
    control characters escaped."""
    line, _, rest = text.strip().partition("\n")
    if len(line) > limit:
        return escape_controls(line[: limit - 1]) + "…"
    return escape_controls(line) + (" …" if rest.strip() else "")


def subject(tool: str, arguments: dict[str, Any]) -> str:
    """The one thing the call is about, as the user would name it (control characters
    escaped: the model wrote it)."""
    return escape_controls(_subject(tool, arguments))


def _subject(tool: str, arguments: dict[str, Any]) -> str:
    if tool in ("glob", "grep"):
        text = str(arguments.get("pattern", ""))
        if arguments.get("include"):
            text += f"  ({arguments['include']})"
        if arguments.get("path"):
            text += f"  in {arguments['path']}"
        return text
    if tool == "patch":
        return ", ".join(PATCH_FILE_LINE.findall(str(arguments.get("patch", ""))))
    if tool == "bash":
        return first_line(str(arguments.get("command", "")))
    for key in ("filePath", "path"):
        if arguments.get(key):
            return shorten_path(" ".join(str(arguments[key]).split()), SUBJECT_LIMIT)
    if tool == "webfetch":
        return first_line(str(arguments.get("url", "")), SUBJECT_LIMIT)
    for key in ("pattern", "description", "prompt"):
        if arguments.get(key):
            return first_line(str(arguments[key]), SUBJECT_LIMIT)
    return ""


def line_count(text: str) -> int:
    return len(text.splitlines())


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def exit_code(metadata: dict[str, Any]) -> int | None:
    code = metadata.get("exit_code", metadata.get("exitCode"))
    return code if isinstance(code, int) else None


def outcome(tool: str, output: str, metadata: dict[str, Any], error: bool) -> str:
    """A few words for the header once the call finished ("+3 -1", "exit 0", "42 lines")."""
    if error:
        return "failed"
    if tool == "delete" and "deleted_count" in metadata:
        return f"{plural(metadata['deleted_count'], 'file')} deleted, -{metadata.get('removed_lines', 0)}"
    if "additions" in metadata or "deletions" in metadata:
        return f"+{metadata.get('additions', 0)} -{metadata.get('deletions', 0)}"
    if tool == "bash":
        code = exit_code(metadata)
        return "" if code is None else f"exit {code}"
    if tool in READ_TOOLS:
        return plural(line_count(output), "line")
    if tool in ("todowrite", "todoread") and isinstance(metadata.get("todos"), list):
        todos = metadata["todos"]
        done = sum(isinstance(todo, dict) and todo.get("status") == "completed" for todo in todos)
        return f"{done}/{len(todos)} done"
    if tool == "webfetch" and isinstance(metadata.get("bytes"), int):
        cut = ", cut" if metadata.get("truncated") else ""
        return f"{metadata.get('status', '')} {metadata.get('contentType', '')}, {metadata['bytes']:,} bytes{cut}"
    return ""


def patch_file_lines(files: list[dict[str, Any]]) -> list[str]:
    """One line per file a patch touched: "A new.py +3", "M a.py +1 -2", "R old.py -> new.py"."""
    lines = []
    for item in files:
        if item.get("deleted"):
            letter = "D"
        elif item.get("created"):
            letter = "A"
        elif item.get("moved_from"):
            letter = "R"
        else:
            letter = "M"
        name = f"{item['moved_from']} -> {item['path']}" if item.get("moved_from") else item["path"]
        lines.append(f"{letter} {name}  +{item.get('additions', 0)} -{item.get('deletions', 0)}")
    return lines


def truncate_lines(text: str, keep: int) -> tuple[str, int]:
    """The first ``keep`` lines of ``text`` and how many lines were left out."""
    lines = text.splitlines()
    if len(lines) <= keep:
        return text.rstrip("\n"), 0
    return "\n".join(lines[:keep]), len(lines) - keep
