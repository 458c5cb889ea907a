"""Calling the user back to the terminal (docs/tui.md, "Notifications").

When a turn ends or a permission question waits while the terminal does not have focus
(Textual's AppBlur and AppFocus events, from the terminal's focus reporting), the app
writes a bell and, for ``tui.notify: desktop``, a desktop-notification escape: OSC 777
for the terminals known to take it (rxvt, foot, VTE-based ones, Ghostty), else OSC 9
(iTerm2, WezTerm, Windows Terminal, kitty...). Inside tmux the escape is wrapped for
tmux to pass it through to the outer terminal (tmux needs ``allow-passthrough on``); the
bell tmux passes by itself. Terminals ignore an OSC they do not know.

The sequences are written through the app's terminal driver, so they go out between
frames, never inside one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from textual.driver import Driver

NotifyMode = Literal["off", "bell", "desktop"]
BELL = "\a"
TITLE = "opencode"


def attention_sequence(mode: NotifyMode, message: str, env: Mapping[str, str]) -> str:
    """What to write to the terminal for ``message`` under ``mode`` ("" for off)."""
    if mode == "off":
        return ""
    if mode == "bell":
        return BELL
    return _passed_through(_desktop_escape(message, env), env) + BELL


def _desktop_escape(message: str, env: Mapping[str, str]) -> str:
    text = _printable(message)
    if _takes_osc_777(env):
        return f"\x1b]777;notify;{TITLE};{text}\x1b\\"
    return f"\x1b]9;{TITLE}: {text}\x1b\\"


def _takes_osc_777(env: Mapping[str, str]) -> bool:
    term = env.get("TERM", "")
    return (
        term.startswith(("rxvt", "foot"))
        or "VTE_VERSION" in env
        or env.get("TERM_PROGRAM", "").lower() == "ghostty"
    )


def _passed_through(sequence: str, env: Mapping[str, str]) -> str:
    """tmux's passthrough: DCS tmux; the sequence with every ESC doubled; ST."""
    if not env.get("TMUX"):
        return sequence
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def _printable(message: str) -> str:
    """One line without control characters or ";" (a separator of OSC 777): nothing in
    it can end the escape early or start another."""
    cleaned = "".join(" " if ord(char) < 32 or 127 <= ord(char) < 160 or char == ";" else char for char in message)
    return " ".join(cleaned.split())[:200]


def remembering_driver(base: type[Driver], remember: Callable[[Driver], None]) -> type[Driver]:
    """``base`` (the driver class the app runs with) made to hand each driver it builds
    to ``remember``: the app writes its attention sequences through that driver."""

    def __init__(self: Driver, *args: Any, **options: Any) -> None:
        base.__init__(self, *args, **options)
        remember(self)

    return type(base.__name__, (base,), {"__init__": __init__})
