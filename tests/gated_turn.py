"""A scripted turn whose first tool step a test holds open: the model's bash call reads a
FIFO (``cat gate``) and ends once ``release`` writes to it, so messages sent meanwhile are
sent at a known point of the turn (TUI and ACP steering tests)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.llm.fake_openai import ToolCall


def bash(command: str, call_id: str) -> ToolCall:
    return ToolCall("bash", json.dumps({"command": command, "description": "wait"}), id=call_id)


def users(request: dict) -> list[str]:
    """The user messages' contents of a request the fake server received."""
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def release(gate: Path) -> threading.Thread:
    """Open the FIFO for writing (which waits for bash to read it) and close it: bash's
    `cat` then ends. In a thread, so the test's event loop keeps running."""

    def open_and_close() -> None:
        with open(gate, "w") as fifo:
            fifo.write("go\n")

    thread = threading.Thread(target=open_and_close, daemon=True)
    thread.start()
    return thread
