"""session/load: a stored session replayed as the updates the editor would have seen.

Diffs come back from history: each tool result names the files it changed (its
metadata), and the session's versions of each path are handed out in order, one per
change, so every replayed diff is the real before and after. The session's todo list,
if it has one, comes last, as a ``plan`` update."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from acp.helpers import update_tool_call
from acp.schema import AgentMessageChunk, AgentThoughtChunk, TextContentBlock, ToolCallStart, UserMessageChunk

from app.acp.updates import (
    created_paths,
    file_diff,
    output_content,
    plan_update,
    tool_kind,
    tool_locations,
    tool_title,
)
from app.llm.call_arguments import arguments_for_display
from app.runtime import Runtime
from app.store.models import FileVersion


def replay(runtime: Runtime, session_id: str) -> Iterator[Any]:
    cursors = _VersionCursors(runtime, session_id)
    for message in runtime.store.messages.list(session_id):
        for part in message.parts:
            update = _update_for(runtime, message.role, part, cursors)
            if update is not None:
                yield update
    todos = runtime.store.todos.get(session_id)
    if todos:
        yield plan_update(todos)


def _update_for(runtime: Runtime, role: str, part: dict[str, Any], cursors: _VersionCursors) -> Any:
    kind = part.get("type")
    if kind == "text":
        block = TextContentBlock(type="text", text=part["text"])
        if role == "user":
            return UserMessageChunk(session_update="user_message_chunk", content=block)
        return AgentMessageChunk(session_update="agent_message_chunk", content=block)
    if kind == "reasoning":
        block = TextContentBlock(type="text", text=part["text"])
        return AgentThoughtChunk(session_update="agent_thought_chunk", content=block)
    if kind == "tool_call":
        arguments = arguments_for_display(part.get("arguments"))
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=part["id"],
            title=tool_title(part["name"], arguments),
            kind=tool_kind(part["name"], arguments),
            status="pending",
            locations=tool_locations(runtime.root, arguments),
            raw_input=arguments,
        )
    if kind == "tool_result":
        metadata = part.get("metadata") or {}
        diffs = [] if part.get("error") else cursors.diffs(changed_paths(metadata), created_paths(metadata))
        content = [*diffs, output_content(part.get("output", ""))]
        return update_tool_call(
            part["call_id"], status="failed" if part.get("error") else "completed", content=content
        )
    return None


def changed_paths(metadata: dict[str, Any]) -> list[str]:
    """Workspace-relative paths a tool result changed, each once: its ``files`` (with a
    move's source) or its single ``path``. A dry run changed none. Each path listed takes
    that path's next version, so listing one twice would take a later call's."""
    if metadata.get("dry_run"):
        return []
    files = metadata.get("files")
    if isinstance(files, list) and files:
        paths: list[str] = []
        for entry in files:
            if isinstance(entry, dict):
                paths.extend(p for p in (entry.get("moved_from"), entry.get("path")) if isinstance(p, str))
        return list(dict.fromkeys(paths))
    path = metadata.get("path")
    return [path] if isinstance(path, str) and "diff" in metadata else []


class _VersionCursors:
    """Hands out each path's versions in order, one per replayed change: those the
    session's turns in place wrote (app.store.turns), each with the version before it,
    so undone turns, undo and redo, reverts and content written elsewhere take no call's
    place. A session without recorded turns uses every version after the "initial"."""

    def __init__(self, runtime: Runtime, session_id: str) -> None:
        self._runtime = runtime
        self._session_id = session_id
        self._seen: dict[str, int] = {}
        self._results = runtime.store.turns.results_of_turns(session_id)

    def diffs(self, paths: list[str], created: set[str]) -> list[Any]:
        contents = []
        for path in paths:
            versions: list[FileVersion] = self._runtime.store.history.versions(self._session_id, path)
            start = self._seen.get(path, 0) + 1  # index 0 is "initial"
            index = next((i for i in range(start, len(versions)) if self._is_result(versions[i])), None)
            if index is not None:
                self._seen[path] = index
                previous, version = versions[index - 1], versions[index]
                contents.append(file_diff(self._runtime.root, previous, version, created=path in created))
        return contents

    def _is_result(self, version: FileVersion) -> bool:
        return self._results is None or version.id in self._results
