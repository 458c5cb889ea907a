"""A tool result as a person reads it. The patch tool answers the model in spec 002's
JSON (``{"ok": false, "error": ...}``, ``{"ok": true, "summary": ..., "lsp_errors":
{path: [...]}}``); front-ends (the chat, headless progress lines) show the error, or the
summary and each file's errors after it, never the JSON itself."""

from __future__ import annotations

import json


def readable_output(output: str) -> str:
    """``output`` unchanged, unless it is the patch tool's JSON answer."""
    if not output.startswith('{"ok"'):
        return output
    try:
        answer = json.loads(output)
    except json.JSONDecodeError:
        return output
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        return output
    if not answer["ok"]:
        return str(answer.get("error", output))
    lines = [str(answer.get("summary", ""))]
    errors = answer.get("lsp_errors")
    if isinstance(errors, dict):
        lines += [f"{path}: {line}" for path, found in errors.items() for line in found]
    return "\n".join(line for line in lines if line) or output
