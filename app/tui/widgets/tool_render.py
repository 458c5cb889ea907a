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


class ToolHeader(Static):
    """A call's header line; on a call read back from history, enter, space or a click
    opens its body, and again folds it."""

    BINDINGS = [Binding("enter,space", "toggle_body", "Show or fold the call's result", id="chat.toggle_result")]

    async def action_toggle_body(self) -> None:
        if isinstance(self.parent, ToolCallView):
            await self.parent.toggle_body()

    async def on_click(self) -> None:
        await self.action_toggle_body()


class ToolCallView(Vertical):
    """One call. ``finish`` is called once with the result; until then the action shows.

    A ``folded`` call (one read back from the session's history) shows only its header
    line, the outcome summed up; its body is built only when opened, so a long session's
    diffs and outputs cost nothing until someone reads them. A failed call opens at once:
    its error is the thing to see."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, call_id: str, tool: str, arguments: dict[str, Any], *, folded: bool = False) -> None:
        super().__init__(classes="running")
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.finished = False
        self.folded = folded
        """Shown by its header line only, the body not built."""
        self.foldable = folded
        """Read back from history with a body to show: its header opens and folds it."""
        self._result: tuple[str, dict[str, Any], bool] | None = None
        self._body_widgets: list[Widget] = []
        self._header = ToolHeader(self._header_content("●", "$warning", describe.action(tool)), classes="tool-header")

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
        self._result = (output, metadata, error)
        self.set_class(False, "running")
        self.set_class(error, "failed")
        if error or not self._has_body(output, metadata):
            self.folded = self.foldable = False
        self._show_header()
        if not self.folded:
            await self._open()

    def holds(self, text: str) -> bool:
        """Whether the call's output holds ``text``, case ignored (what find looks in)."""
        return self._result is not None and text.casefold() in self._result[0].casefold()

    async def reveal(self, text: str) -> None:
        """Show where the output holds ``text``: a folded call opened, and an output shown
        by its first lines expanded."""
        if self.folded:
            await self.toggle_body()
        for output in self.query(ToolOutput):
            if text.casefold() in output.full_text.casefold():
                output.expanded = True

    def _show_header(self) -> None:
        if self._result is None:
            return
        output, metadata, error = self._result
        mark, style = ("✗", "$error") if error else ("✓", "$success")
        header = self._header_content(mark, style, describe.outcome(self.tool, output, metadata, error))
        if self.folded:
            header = Content.assemble(header, ("  ▸ show", "$text-muted"))
        self._header.update(header)
        self._header.can_focus = self.foldable

    async def toggle_body(self) -> None:
        """Open a folded call's body, or fold an opened one back to its header line."""
        if self._result is None or not self.foldable:
            return
        if self.folded:
            await self._open()
        else:
            widgets, self._body_widgets = self._body_widgets, []
            self.folded = True
            await self.remove_children(widgets)
        self._show_header()

    async def _open(self) -> None:
        if self._result is None:
            return
        self.folded = False
        self._body_widgets = self._all_body(*self._result)
        if self._body_widgets:
            await self.mount_all(self._body_widgets)

    def _all_body(self, output: str, metadata: dict[str, Any], error: bool) -> list[Widget]:
        body = list(self._body(output, metadata, error))
        if metadata.get("hooks"):  # what the call's hooks said, under it (app/llm/hook_steps.py)
            body.append(Static(Content("\n".join(map(str, metadata["hooks"]))), classes="tool-hooks"))
        return body

    def _has_body(self, output: str, metadata: dict[str, Any]) -> bool:
        """Whether ``_all_body`` shows anything for a call that did not fail, told without
        building it."""
        if metadata.get("hooks") or self.tool in describe.DIFF_TOOLS:
            return True
        return self.tool not in describe.READ_TOOLS and bool(self._output_text(output, metadata).strip())

    def _output_text(self, output: str, metadata: dict[str, Any]) -> str:
        return str(metadata.get("output", output)) if self.tool == "bash" else output

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
                from app.tui.widgets.diff_view import DiffView  # with the first diff drawn, not with the chat

                widgets.append(DiffView(metadata["diff"], path=str(metadata.get("path", ""))))
            elif not widgets:  # nothing to diff: an empty folder, a symlink, a dry run
                widgets.append(Static(Content(describe.first_line(output)), classes="tool-summary"))
            return widgets
        if self.tool in describe.READ_TOOLS:
            return []
        text = self._output_text(output, metadata)
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
