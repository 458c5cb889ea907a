"""The messages waiting above the prompt while a reply runs (docs/tui.md, "Steering"):
each sent with enter, queued for after the turn, or with alt+enter, for the turn's next
step. alt+up takes the last one back into the prompt to edit (or to drop, by clearing it)."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

Kind = Literal["queued", "steering"]
_LABELS: dict[Kind, str] = {"queued": "queued", "steering": "next step"}


class QueuedMessages(Static):
    DEFAULT_CSS = """
    QueuedMessages {
        height: auto;
        max-height: 6;
        padding: 0 1;
        color: $text-muted;
        display: none;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.items: list[tuple[Kind, str]] = []

    def add(self, kind: Kind, text: str) -> None:
        self.items.append((kind, text))
        self._show()

    def pop_last(self) -> tuple[Kind, str] | None:
        item = self.items.pop() if self.items else None
        self._show()
        return item

    def delivered(self, text: str) -> None:
        """A steering message the turn has stored: the chat shows it from now on."""
        if ("steering", text) in self.items:
            self.items.remove(("steering", text))
            self._show()

    def take(self, kind: Kind) -> list[str]:
        """The messages of ``kind``, oldest first, leaving the queue."""
        taken = [text for each, text in self.items if each == kind]
        self.items = [item for item in self.items if item[0] != kind]
        self._show()
        return taken

    def _show(self) -> None:
        self.display = bool(self.items)
        lines = [
            Content.assemble((f"{_LABELS[kind]} ", "$accent"), text.splitlines()[0] if text else "")
            for kind, text in self.items
        ]
        lines.append(Content.styled("alt+up edits the last", "$text-muted"))
        self.update(Content("\n").join(lines))
