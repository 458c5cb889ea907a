"""Translating the agent loop's calls into ACP tool-call updates: kind, title, locations
and diff content. Kept free of I/O so the live stream and the session/load replay build
the same frames from the same facts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentPlanUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    ImageContentBlock,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolKind,
)

from app.headless.run_report import call_subject
from app.store.models import FileVersion, TodoItem
from app.tools.readable import readable_output

Content = ContentToolCallContent | FileEditToolCallContent

TOOL_KINDS: dict[str, ToolKind] = {
    "view": "read",
    "ls": "search",
    "glob": "search",
    "grep": "search",
    "write": "edit",
    "edit": "edit",
    "multiedit": "edit",
    "patch": "edit",
    "delete": "delete",
    "bash": "execute",
    "webfetch": "fetch",
    "task": "think",
    "todowrite": "think",
    "todoread": "think",
}
_PATCH_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
PATH_KEYS = ("filePath", "path")
CANCELLED_PREFIX = "Cancelled: "
"""ACP plans know pending, in_progress and completed: a cancelled item is sent as
completed (it is over), its content saying so and ``_meta.opencode.status`` naming it."""


def tool_kind(tool: str, arguments: Mapping[str, Any]) -> ToolKind:
    """The ACP kind: by tool, except a patch made only of moves is a move and one made
    only of deletions a delete, so the editor can pick the right icon."""
    patch = arguments.get("patch")
    if tool == "patch" and isinstance(patch, str):
        operations = [match.group(1) or "Move" for match in _PATCH_HEADER.finditer(patch)]
        moves = operations.count("Move")
        if moves and operations.count("Update") == moves and len(operations) == 2 * moves:
            return "move"
        if operations and all(op == "Delete" for op in operations):
            return "delete"
    return TOOL_KINDS.get(tool, "other")


def tool_title(tool: str, arguments: Mapping[str, Any]) -> str:
    subject = call_subject(arguments)
    return f"{tool} {subject}" if subject else tool


def tool_locations(root: Path, arguments: Mapping[str, Any]) -> list[ToolCallLocation]:
    """Absolute paths the call is about, from its arguments (a patch names several)."""
    paths: list[str] = []
    patch = arguments.get("patch")
    if isinstance(patch, str):
        paths = [match.group(2) or match.group(3) for match in _PATCH_HEADER.finditer(patch)]
    for key in PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            paths.append(value.strip())
    unique = dict.fromkeys(str(root / path) for path in paths)  # root / absolute == absolute
    return [ToolCallLocation(path=path) for path in unique]


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def output_content(output: str) -> ContentToolCallContent:
    """A tool result as the editor shows it: the patch tool's JSON read as its error or
    summary (app.tools.readable); ``rawOutput`` keeps the tool's own answer."""
    return text_content(readable_output(output))


def image_content(image: dict[str, Any]) -> ContentToolCallContent:
    """An image a tool returned (view of a png), as the editor shows one."""
    block = ImageContentBlock(type="image", data=image["data"], mime_type=image["mime"], uri=None)
    return ContentToolCallContent(type="content", content=block)


def without_image_data(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata for rawOutput: an image's base64 goes once, as image content, not twice."""
    image = metadata.get("image")
    if not isinstance(image, dict):
        return metadata
    return {**metadata, "image": {key: value for key, value in image.items() if key != "data"}}


def file_diff(
    root: Path, previous: FileVersion | None, version: FileVersion, *, created: bool = False
) -> FileEditToolCallContent:
    """One file's change as ACP diff content. A new file (``created``, or back after a
    deletion) has no oldText, as ACP says, so it differs from an emptied one. A deletion
    keeps the last content as oldText with newText "" and is flagged in ``_meta``
    (``mark_deleted`` lifts the flag to the top-level ``deleted`` field of docs/specs/004-acp-deleted.md once
    serialized)."""
    old_text = None if created or previous is None or previous.deleted else previous.content
    meta = {"opencode": {"deleted": True}} if version.deleted else None
    return FileEditToolCallContent(
        type="diff", path=str(root / version.path), old_text=old_text, new_text=version.content, field_meta=meta
    )


def created_paths(metadata: Mapping[str, Any]) -> set[str]:
    """The workspace paths a tool result says it created. History alone cannot tell: the
    version before a new file is an empty "initial", like an empty file's. A patch lists
    ``files`` with ``created``; write sets ``created``; edit and multiedit report the
    ``create`` strategy (an empty oldString, which only creates)."""
    files = metadata.get("files")
    if isinstance(files, list):
        entries = [entry for entry in files if isinstance(entry, dict) and entry.get("created")]
        return {entry["path"] for entry in entries if isinstance(entry.get("path"), str)}
    path = metadata.get("path")
    strategies = metadata.get("strategies") or [metadata.get("strategy")]
    if isinstance(path, str) and (metadata.get("created") is True or strategies[0] == "create"):
        return {path}
    return set()


def mark_deleted(payload: Any) -> Any:
    """Copy ``_meta.opencode.deleted`` of every serialized diff to ``deleted: true``: the
    SDK's schema predates spec 004 and would drop the field if set on the model."""
    if isinstance(payload, dict):
        if payload.get("type") == "diff" and payload.get("_meta", {}).get("opencode", {}).get("deleted"):
            payload["deleted"] = True
        for value in payload.values():
            mark_deleted(value)
    elif isinstance(payload, list):
        for item in payload:
            mark_deleted(item)
    return payload



def plan_update(todos: Iterable[TodoItem]) -> AgentPlanUpdate:
    """The session's todo list as an ACP ``plan`` update: the whole list, which the editor
    shows in place of the one before (an empty list clears it)."""
    return AgentPlanUpdate(session_update="plan", entries=[_plan_entry(todo) for todo in todos])


def _plan_entry(todo: TodoItem) -> PlanEntry:
    if todo.status == "cancelled":
        return PlanEntry(
            content=CANCELLED_PREFIX + todo.content,
            priority=todo.priority,
            status="completed",
            field_meta={"opencode": {"status": "cancelled", "id": todo.id}},
        )
    return PlanEntry(
        content=todo.content, priority=todo.priority, status=todo.status, field_meta={"opencode": {"id": todo.id}}
    )
