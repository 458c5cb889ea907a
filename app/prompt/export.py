"""A session's transcript, for `opencode export` and `/export` (docs/export.md).

``transcript`` reads a session from the store into one JSON-ready document: the user's
prompts, the answers, each tool call with its arguments, its result and the diff of the
change it made (a sub-agent's own transcript under its task call), and each file the
session changed with its diff from before the session. ``markdown`` renders the same
document for people. Undone turns are left out, as the model no longer sees them.
Core: no Textual, no litellm.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.diff import unified_diff
from app.core.errors import OpencodeError
from app.llm.messages import text_of
from app.prompt.slash_commands import CommandCall
from app.store import Message, Store

FORMAT = "opencode.transcript"
VERSION = 1
FORMATS = ("md", "json")


class ExportError(OpencodeError):
    """The session or the output file is not usable: one line saying what to do."""


def transcript(store: Store, session_id: str) -> dict[str, Any]:
    """The session as the documented JSON document (docs/export.md)."""
    session = store.sessions.get(session_id)
    if session is None:
        raise ExportError(
            f"no session {session_id} in this workspace: check the id (the TUI's sessions list, ctrl+s, shows them) "
            "or use --last"
        )
    files = [
        {
            "path": change.path,
            "created": change.created,
            "deleted": change.deleted,
            "additions": change.additions,
            "deletions": change.deletions,
            "diff": "" if change.initial_data is not None else unified_diff(change.initial_content, change.latest_content, change.path),
        }
        for change in store.history.list_latest_session_files(session_id)
        if not change.unchanged
    ]
    messages = _messages(store, session_id)
    models = [m["model"] for m in messages if m["role"] == "assistant" and m["model"]]
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _iso(None),
        "session": {
            "id": session.id,
            "title": session.title,
            "created_at": _iso(session.created_at),
            # The model of the latest answer: the session's own is the one it began with.
            "model": models[-1] if models else session.model,
            "prompt_tokens": session.prompt_tokens,
            "completion_tokens": session.completion_tokens,
            "cost": session.cost,
        },
        "messages": messages,
        "files": files,
    }


def _messages(store: Store, session_id: str) -> list[dict[str, Any]]:
    """User and assistant messages in order; each tool message's results joined to the
    calls of the assistant message before it."""
    exported: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for message in store.messages.list(session_id):
        if message.role == "tool":
            for part in message.parts:
                call = calls.get(part.get("call_id", ""))
                if call is not None and part.get("type") == "tool_result":
                    _add_result(store, call, part)
        elif message.role in ("user", "assistant"):
            exported.append(_message(message, calls))
    return exported


def _message(message: Message, calls: dict[str, dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": message.role, "created_at": _iso(message.created_at)}
    if message.role == "user":
        entry["text"] = text_of(message.parts)
        entry["images"] = [part["path"] for part in message.parts if part.get("type") == "image"]
        entry["attached"] = [part["path"] for part in message.parts if part.get("type") == "file"]
        return entry
    finish = next((part for part in message.parts if part.get("type") == "finish"), {})
    entry.update(
        model=message.model,
        reasoning=text_of(message.parts, "reasoning"),
        text=text_of(message.parts),
        tool_calls=[],
        finish=finish.get("reason"),
        error=finish.get("error"),
    )
    for part in message.parts:
        if part.get("type") == "tool_call":
            call = {"id": part["id"], "name": part["name"], "arguments": _arguments(part["arguments"]), "result": None, "diff": None, "subagent": None}
            calls[part["id"]] = call
            entry["tool_calls"].append(call)
    return entry


def _add_result(store: Store, call: dict[str, Any], part: dict[str, Any]) -> None:
    metadata = part.get("metadata") or {}
    call["result"] = {"output": part.get("output", ""), "error": bool(part.get("error"))}
    diff = metadata.get("diff")
    call["diff"] = diff if isinstance(diff, str) and diff else None
    child = metadata.get("session_id") if call["name"] == "task" else None
    if isinstance(child, str) and (session := store.sessions.get(child)) is not None:
        call["subagent"] = {"session_id": child, "title": session.title, "messages": _messages(store, child)}


def _arguments(raw: str) -> Any:
    """The call's arguments as JSON when they parse, else the text the model wrote."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _iso(ms: int | None) -> str:
    moment = datetime.now(UTC) if ms is None else datetime.fromtimestamp(ms / 1000, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


# -- markdown --------------------------------------------------------------------------------


def markdown(document: dict[str, Any]) -> str:
    session = document["session"]
    lines = [f"# {session['title'] or 'Untitled session'}", ""]
    lines.append(f"Session `{session['id']}`, started {session['created_at']}, model {session['model'] or 'unknown'}, cost ${session['cost']:.4f}.")
    lines.append("")
    _markdown_messages(lines, document["messages"], level=2)
    if document["files"]:
        lines += ["## Files changed", ""]
        for item in document["files"]:
            state = " (created)" if item["created"] else " (deleted)" if item["deleted"] else ""
            lines.append(f"### {item['path']}{state} +{item['additions']} -{item['deletions']}")
            lines.append("")
            lines += _fenced(item["diff"] or "(binary content)", "diff")
    return "\n".join(lines).rstrip("\n") + "\n"


def _markdown_messages(lines: list[str], messages: list[dict[str, Any]], level: int) -> None:
    heading = "#" * level
    for message in messages:
        if message["role"] == "user":
            lines += [f"{heading} User", "", message["text"], ""]
            lines += [f"(image: {path})" for path in message["images"]]
            lines += [f"(attached: {path})" for path in message["attached"]]
            continue
        lines += [f"{heading} Assistant", ""]
        if message["text"]:
            lines += [message["text"], ""]
        for call in message["tool_calls"]:
            lines += [f"**Tool call: {call['name']}**", ""]
            lines += _fenced(json.dumps(call["arguments"], indent=2, ensure_ascii=False), "json")
            if call["result"] is not None:
                label = "Error" if call["result"]["error"] else "Result"
                lines += [f"{label}:", ""]
                lines += _fenced(call["result"]["output"], "")
            if call["diff"]:
                lines += _fenced(call["diff"], "diff")
            if call["subagent"]:
                lines += [f"Sub-agent session `{call['subagent']['session_id']}`:", ""]
                _markdown_messages(lines, call["subagent"]["messages"], min(level + 1, 6))
        if message["error"]:
            lines += [f"*The turn ended: {message['finish']}: {message['error']}*", ""]


def _fenced(text: str, language: str) -> list[str]:
    """A code block whose fence is longer than any backtick run inside it."""
    run = longest = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text.rstrip("\n"), fence, ""]


def render(document: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    return markdown(document)


# -- writing ---------------------------------------------------------------------------------


def write_new(path: Path, text: str, *, force: bool = False) -> None:
    """Write ``text`` to ``path``: an existing file raises FileExistsError unless
    ``force``, and is then replaced whole (``_replace``), never half-written. Other
    failures raise OSError."""
    if not force:
        with open(path, "x", encoding="utf-8") as out:
            out.write(text)
        return
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _replace(folder, path.name, text.encode("utf-8"))
    finally:
        os.close(folder)


def _replace(folder: int, name: str, data: bytes) -> None:
    """Write ``data`` to a new file of a fresh random name in the open ``folder``, then
    rename it over ``name``. The new file is made with O_EXCL | O_NOFOLLOW relative to
    the folder's descriptor, so a symlink (or anything) planted at a temporary name is
    never written through: that name is taken, and another is drawn."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temp = f".{name}.{secrets.token_hex(6)}.opencode-export"
        try:
            fd = os.open(temp, flags, 0o666, dir_fd=folder)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        os.unlink(temp, dir_fd=folder)
        raise


def free_name(folder: Path, stem: str, suffix: str) -> Path:
    """``folder/stem.suffix``, or with -2, -3... when that name is taken."""
    candidate, number = folder / f"{stem}.{suffix}", 1
    while candidate.exists() or candidate.is_symlink():
        number += 1
        candidate = folder / f"{stem}-{number}.{suffix}"
    return candidate


def export_to_workspace(store: Store, session_id: str, root: Path, fmt: str = "md") -> Path:
    """``/export``: the session in ``root``, named after it, never replacing a file (the
    next free name is taken); returns the path written."""
    text = render(transcript(store, session_id), fmt)
    while True:
        path = free_name(root, f"opencode-session-{session_id}", fmt)
        try:
            write_new(path, text)
        except FileExistsError:
            continue  # taken meanwhile: the next free name
        except OSError as err:
            raise ExportError(
                f"cannot write {path.name} in the workspace: {err.strerror or err}; "
                "export elsewhere with opencode export -o FILE"
            ) from None
        return path


async def export_command(call: CommandCall) -> str:
    """``/export [md|json]`` as a slash command (headless, ACP): the file written, for the user."""
    fmt = call.arguments.strip().lower() or "md"
    if fmt not in FORMATS:
        raise ExportError(f"/export takes md or json, not {call.arguments.strip()!r}: for example /export json")
    runtime = call.loop.runtime
    path = await asyncio.to_thread(export_to_workspace, runtime.store, call.session_id, runtime.root, fmt)
    return f"Session exported to {path.relative_to(runtime.root)}"
