"""What the MCP manager tells front-ends: one event each time a server's state changes,
so a status bar can show "github: failed (command not found)" without asking."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.bus import Event

McpState = Literal["connecting", "connected", "failed", "closed"]


@dataclass(frozen=True, slots=True)
class McpStatusChanged(Event):
    """``message`` says why a server failed (empty otherwise); ``tools`` is how many tools
    it offers while connected."""

    server: str
    state: McpState
    message: str = ""
    tools: int = 0
