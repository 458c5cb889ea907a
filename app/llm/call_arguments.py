"""A tool call's arguments as front-ends show them, live or replayed from the store.

Standard library and app.core.boundedjson only: the TUI's chat imports it before its first
frame."""

from __future__ import annotations

from typing import Any

from app.core import boundedjson


def arguments_for_display(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    """The call's arguments as a dict: the model's JSON text parsed (a stored part may hold
    them parsed already); malformed JSON, or JSON beyond the limits the tool itself refuses,
    is shown raw."""
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str):
        return {}
    try:
        parsed = boundedjson.loads(arguments)
    except ValueError:  # JSONDecodeError or JsonLimitError
        return {"raw": arguments}
    return parsed if isinstance(parsed, dict) else {"raw": arguments}
