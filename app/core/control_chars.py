"""Text from a model or a tool, made safe to print on a terminal: a control character
(C0, DEL, C1: ESC starts the sequences that move the cursor, clear the screen or set the
window title) is shown as its escape, ``\\x1b``, instead of being obeyed."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LAYOUT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str, *, lines: bool = False) -> str:
    """``text`` with each control character written as ``\\xNN``; with ``lines``, tabs
    and newlines are kept (a body of several lines), the rest escaped."""
    pattern = _CONTROL_BUT_LAYOUT if lines else _CONTROL
    return pattern.sub(lambda found: f"\\x{ord(found.group()):02x}", text)
