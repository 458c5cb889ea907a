"""What the permission modal shows under the question: a diff, a command, the files of a
directory delete (with line counts and a total), or plain text. It scrolls when long."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from app.permission import PermissionPreview
from app.tui import css_beside
from app.tui.widgets.diff_view import DiffView


def files_summary(files: list[tuple[str, int]]) -> str:
    """"12 files, 340 lines" (singulars kept right)."""
    lines = sum(count for _, count in files)
    return f"{_count(len(files), 'file')}, {_count(lines, 'line')}"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


class PermissionPreviewView(VerticalScroll, can_focus=False):
    """``PermissionPreviewView(preview, path)``; ``path`` picks the diff's syntax colours."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, preview: PermissionPreview, path: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id, classes=f"-{preview.kind}")
        self.preview = preview
        self.path = path

    def compose(self) -> ComposeResult:
        preview = self.preview
        if preview.kind == "diff":
            yield DiffView(preview.text, path=self.path, classes="permission-preview--diff")
        elif preview.kind == "command":
            yield Static(
                Content.assemble(("$ ", "$text-muted"), (preview.text, "bold")),
                classes="permission-preview--command",
            )
        elif preview.kind == "files":
            yield Static(files_summary(preview.files), classes="permission-preview--summary")
            width = max((len(f"{count:,}") for _, count in preview.files), default=1)
            yield Static(
                Content("\n").join(
                    Content.assemble((f"{count:>{width},} ", "$text-muted"), path) for path, count in preview.files
                ),
                classes="permission-preview--files",
            )
        else:
            yield Static(preview.text, markup=False, classes="permission-preview--text")
