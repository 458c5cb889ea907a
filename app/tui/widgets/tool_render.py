"""A tool call in the chat: a header (status, tool name, subject, then the action while
it runs and the outcome after), and a body drawn by the kind of tool: a diff for the
tools that change files, the file list of a directory delete, truncated output for bash,
and a calm error line when the call failed."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from app.core.control_chars import escape_controls
from app.tools.readable import readable_output
from app.tui import css_beside
from app.tui.widgets import tool_render_text as describe
from app.tui.widgets.diff_view import DiffView

OUTPUT_PREVIEW_LINES = 10
FILE_LIST_PREVIEW_LINES = 12


class ToolOutput(Static, can_focus=True):
    """Long text shown by its first lines; enter, space or a click shows it all."""

    BINDINGS = [Binding("enter,space", "toggle_expanded", "Expand output", id="chat.toggle_output")]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, text: str, *, keep: int = OUTPUT_PREVIEW_LINES, classes: str = "") -> None:
        super().__init__(classes=classes)
        self.full_text = text.rstrip("\n")
        self.keep = keep

    def on_mount(self) -> None:
        self._show()

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_expanded()

    def _watch_expanded(self) -> None:
        self._show()

    def _show(self) -> None:
        shown, hidden = describe.truncate_lines(self.full_text, self.keep)
        if self.expanded or not hidden:
            self.update(Content(self.full_text))
            return
        self.update(
            Content.assemble(
                shown, "\n", (f"… {hidden} more lines (enter or click to expand)", "italic $text-muted")
            )
        )


class ToolCallView(Vertical):
    """One call. ``finish`` is called once with the result; until then the action shows."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        super().__init__(classes="running")
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.finished = False
        self._header = Static(self._header_content("●", "$warning", describe.action(tool)), classes="tool-header")

    def compose(self) -> ComposeResult:
        yield self._header

    def _header_content(self, mark: str, mark_style: str, note: str) -> Content:
        return Content.assemble(
            (mark, mark_style),
            " ",
            (escape_controls(self.tool), "bold $primary"),
            "  ",
            (describe.subject(self.tool, self.arguments), "$text"),
            "  ",
            (note, "italic $text-muted"),
        )

    async def finish(self, output: str, metadata: dict[str, Any], error: bool) -> None:
        if self.finished:
            return
        self.finished = True
        output = readable_output(output)
        self.set_class(False, "running")
        self.set_class(error, "failed")
        mark, style = ("✗", "$error") if error else ("✓", "$success")
        self._header.update(self._header_content(mark, style, describe.outcome(self.tool, output, metadata, error)))
        body = list(self._body(output, metadata, error))
        if metadata.get("hooks"):  # what the call's hooks said, under it (app/llm/hook_steps.py)
            body.append(Static(Content("\n".join(map(str, metadata["hooks"]))), classes="tool-hooks"))
        if body:
            await self.mount_all(body)

    def _body(self, output: str, metadata: dict[str, Any], error: bool) -> list[Widget]:
        if error:
            return [Static(Content(escape_controls(output.strip(), lines=True)), classes="tool-error")]
        if self.tool == "delete" and _is_directory_delete(metadata):
            return _directory_delete(output, metadata)
        if self.tool in describe.DIFF_TOOLS:
            widgets: list[Widget] = []
            if self.tool == "patch" and len(metadata.get("files", [])) > 1:
                widgets.append(Static("\n".join(describe.patch_file_lines(metadata["files"])), classes="tool-files"))
            if metadata.get("diff"):
                widgets.append(DiffView(metadata["diff"], path=str(metadata.get("path", ""))))
            elif not widgets:  # nothing to diff: an empty folder, a symlink, a dry run
                widgets.append(Static(Content(describe.first_line(output)), classes="tool-summary"))
            return widgets
        if self.tool in describe.READ_TOOLS:
            return []
        text = str(metadata.get("output", output)) if self.tool == "bash" else output
        return [ToolOutput(text)] if text.strip() else []


def _is_directory_delete(metadata: dict[str, Any]) -> bool:
    return metadata.get("kind") == "directory" or len(metadata.get("files", [])) > 1


def _directory_delete(output: str, metadata: dict[str, Any]) -> list[Widget]:
    """A directory delete: the tool's summary ("N files deleted, M lines removed") and the list."""
    files = metadata.get("files", [])
    listing = "\n".join(f"- {item['path']}  ({describe.plural(item.get('lines', 0), 'line')})" for item in files)
    summary = output.splitlines()[0].rstrip(":") if output.strip() else ""
    widgets: list[Widget] = [Static(Content(summary), classes="tool-summary")]
    if listing:
        widgets.append(ToolOutput(listing, keep=FILE_LIST_PREVIEW_LINES, classes="tool-files"))
    return widgets
