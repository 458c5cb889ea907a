"""What the LSP manager tells front-ends (the status bar) about its servers."""

from __future__ import annotations

from dataclasses import dataclass

from app.bus import Event

STARTING = "starting"
READY = "ready"
FAILED = "failed"
STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class LspStatusChanged(Event):
    """A language server changed state: starting, ready, failed (``message`` says why
    and what to do) or stopped."""

    language: str
    state: str
    message: str = ""
