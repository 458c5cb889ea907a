"""What `opencode -p` prints when its turn ends, and its exit codes.

Standard library only: the in-process run (app/headless/run.py) and the client that
attaches to `opencode serve` (app/serve/client.py, which must import neither litellm nor
the agent loop) print through the same functions, so their output cannot drift apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TextIO

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NEEDS_APPROVAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EMPTY_PROMPT_LINE = "opencode: error: the prompt is empty: pass the request after -p"
INTERRUPTED_LINE = "opencode: interrupted; what was done is saved: resume with --continue"
SUBJECT_KEYS = ("filePath", "path", "pattern", "command", "url", "description")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


class Outcome(Protocol):
    """A finished turn as the report needs it (the agent loop's TurnResult is one)."""

    @property
    def response(self) -> str: ...
    @property
    def usage(self) -> dict[str, int]: ...
    @property
    def cost(self) -> float: ...
    @property
    def files_changed(self) -> list[str]: ...
    @property
    def files_deleted(self) -> list[str]: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...


class Unapproved(Protocol):
    """A call refused for want of approval (the permission service's ApprovalMissing is one)."""

    @property
    def tool(self) -> str: ...
    @property
    def subject(self) -> str: ...


def call_subject(arguments: Mapping[str, Any]) -> str:
    """What a call is about, in a few words: its path, pattern, command or patched files."""
    patch = arguments.get("patch")
    if isinstance(patch, str):
        return ", ".join(_PATCH_FILE.findall(patch))
    for key in SUBJECT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            flat = " ".join(value.split())
            return flat if len(flat) <= 80 else flat[:79] + "…"
    return ""


def report(
    result: Outcome,
    session_id: str,
    output_format: str,
    out: TextIO,
    err: TextIO,
    max_steps: int,
    unapproved: Sequence[Unapproved],
) -> int:
    """Print the answer (text, or one JSON object) and the error line; return the exit code."""
    problem, code = result.error, EXIT_FAILED
    if result.reason == "max_steps":
        problem = f"stopped at the step limit ({max_steps} model calls) before the model finished: resume with --continue"
    elif not problem and unapproved:
        problem, code = unapproved_line(unapproved), EXIT_NEEDS_APPROVAL
    if output_format == "json":
        payload: dict[str, Any] = {
            "session_id": session_id,
            "response": result.response,
            "usage": result.usage,
            "cost": result.cost,
            "files_changed": result.files_changed,
            "files_deleted": result.files_deleted,
        }
        if problem:  # the documented six keys on success; a failed run also says why
            payload["error"] = problem
        print(json.dumps(payload, ensure_ascii=False), file=out)
    elif result.response:
        print(result.response, file=out)
    if problem:
        print(f"opencode: error: {problem}", file=err)
        return code
    return EXIT_OK


def unapproved_line(unapproved: Sequence[Unapproved]) -> str:
    """One line naming what went unapproved (the first few calls) and how to allow it."""
    calls = [f"{event.tool} {call_subject({'command': event.subject})}" for event in unapproved]
    named = ", ".join(calls[:3]) + (f" and {len(calls) - 3} more" if len(calls) > 3 else "")
    count = "1 call" if len(calls) == 1 else f"{len(calls)} calls"
    return f"{count} needed approval and {'was' if len(calls) == 1 else 'were'} refused ({named}): run with --yes to allow them, or allow them in the permission rules"
