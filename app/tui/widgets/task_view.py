"""A ``task`` call in the chat: one block for the sub-agent it started. Its header names
the sub-agent and the task and counts the child's tool calls; while the child runs, a
second line shows its current call ("↳ grep load_config"); once done, the answer
(markdown, its first lines when long: space shows it all), or why it failed or that it
was cancelled. Enter on the focused block opens the child's whole transcript.

The child's events carry the child's session id, not the parent's: the chat ties them to
this block through ``SubagentStarted`` (``started``) and hands them over here."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Markdown, Static

from app.agents.catalog import DEFAULT_SUBAGENT
from app.llm.messages import CANCELLED_OUTPUT
from app.tools.readable import readable_output
from app.tui import css_beside
from app.tui.widgets import tool_render_text as describe
from app.tui.widgets.chat_log import CANCELLED_CALL
from app.tui.widgets.message_text import reply_parser
from app.tui.widgets.tool_render import ToolCallView

ANSWER_PREVIEW_LINES = 6
CANCELLED = (CANCELLED_CALL, CANCELLED_OUTPUT)
"""A call's result when its turn was cancelled: the chat's own, and the loop's."""


class TaskView(ToolCallView, can_focus=True):
    """``started`` links the child session; ``child_call`` reports each tool call it makes."""

    DEFAULT_CSS = css_beside(__file__)
    BINDINGS = [
        Binding("enter", "open_transcript", "Open the sub-agent's transcript", id="chat.open_task"),
        Binding("space", "toggle_answer", "Show the sub-agent's whole answer", id="chat.expand_task"),
    ]

    expanded: reactive[bool] = reactive(False)

    class OpenRequested(Message):
        """Show the child session ``session_id`` (the app opens its transcript)."""

        def __init__(self, session_id: str, title: str) -> None:
            super().__init__()
            self.session_id = session_id
            self.title = title

    def __init__(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        self.agent = str(arguments.get("subagent_type") or DEFAULT_SUBAGENT)
        self.description = " ".join(str(arguments.get("description", "")).split()) or "task"
        self.child_session_id: str | None = None
        self.calls = 0
        self.state = "running"
        """running, done, failed or cancelled."""
        super().__init__(call_id, tool, arguments)
        self._status = Static(Content.styled("starting…", "italic $text-muted"), classes="task-status")
        self._answer: Markdown | None = None
        self._more: Static | None = None

    @property
    def title(self) -> str:
        """ "explorer · find the config loader": who works on what."""
        return f"{self.agent} · {self.description}"

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield self._status

    def _header_content(self, mark: str, mark_style: str, note: str) -> Content:
        counted = describe.plural(self.calls, "call") if self.calls else ""
        return Content.assemble(
            (mark, mark_style),
            " ",
            (self.agent, "bold $primary"),
            (" · ", "$text-muted"),
            (self.description, "$text"),
            "  ",
            (" · ".join(part for part in (note, counted) if part), "italic $text-muted"),
        )

    def _redraw_header(self) -> None:
        marks = {"running": ("●", "$warning"), "done": ("✓", "$success")}
        mark, style = marks.get(self.state, ("✗", "$error"))
        note = {"running": "", "done": "done"}.get(self.state, self.state)
        self._header.update(self._header_content(mark, style, note))

    def started(self, child_session_id: str, agent: str, description: str) -> None:
        """The loop started the child session for this call."""
        self.child_session_id = child_session_id
        self.agent = agent or self.agent
        self.description = " ".join(description.split()) or self.description
        self._redraw_header()

    def child_call(self, tool: str, arguments: dict[str, Any]) -> None:
        """The child started a tool call: it is the current one, and one more counted."""
        if self.finished:
            return
        self.calls += 1
        line = " ".join(part for part in (tool, describe.subject(tool, arguments)) if part)
        self._status.update(Content.assemble(("↳ ", "$text-muted"), (describe.first_line(line), "$text")))
        self._redraw_header()

    async def finish(self, output: str, metadata: dict[str, Any], error: bool) -> None:
        if self.finished:
            return
        self.finished = True
        self.child_session_id = self.child_session_id or metadata.get("session_id")
        self.agent = str(metadata.get("agent") or metadata.get("subagent_type") or self.agent)
        output = model_note_removed(readable_output(output), metadata.get("task_id")).strip()
        cancelled = metadata.get("reason") == "cancelled" or (error and output in CANCELLED)
        self.state = "cancelled" if cancelled else "failed" if error else "done"
        self.set_class(False, "running")
        self.set_class(self.state != "done", "failed")
        self._redraw_header()
        await self._status.remove()
        if self.state == "failed":
            await self.mount(Static(Content(output), classes="tool-error"))
        elif self.state == "done" and output:
            await self._show_answer(output)

    async def _show_answer(self, answer: str) -> None:
        _, hidden = describe.truncate_lines(answer, ANSWER_PREVIEW_LINES)
        self._answer = Markdown(answer, classes="task-answer", parser_factory=reply_parser)
        self._answer.set_class(bool(hidden), "-collapsed")
        widgets: list[Static | Markdown] = [self._answer]
        if hidden:
            self._more = Static(classes="task-more")
            widgets.append(self._more)
        await self.mount_all(widgets)
        self._show_more()

    def _show_more(self) -> None:
        if self._answer is None or self._more is None:
            return
        self._answer.set_class(not self.expanded, "-collapsed")
        hint = "space shows less" if self.expanded else "the whole answer: space · the transcript: enter"
        self._more.update(Content.styled(f"… {hint}", "italic $text-muted"))

    def _watch_expanded(self) -> None:
        self._show_more()

    def action_toggle_answer(self) -> None:
        self.expanded = not self.expanded

    def action_open_transcript(self) -> None:
        if self.child_session_id is None:
            if self.finished:
                self.notify("This task started no sub-agent (it was refused first): there is no transcript")
            else:
                self.notify("The sub-agent has not started yet: its transcript opens once it has", severity="warning")
            return
        self.post_message(self.OpenRequested(self.child_session_id, self.title))


def model_note_removed(output: str, task_id: object) -> str:
    """The sub-agent's answer without the closing paragraph the task tool adds for the
    model ("task_id: ... pass this task_id to continue the task"): a person continues a
    task by asking, not by id."""
    if not task_id:
        return output
    answer, found, _ = output.rpartition(f"\n\ntask_id: {task_id}")
    return answer if found else output
