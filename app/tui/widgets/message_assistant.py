"""One assistant message as it streams: its text parts (message_text.StreamedText, over
Textual's Markdown stream), reasoning folded away in a Collapsible, and the tool calls
in the order the model made them (a ``task`` call as its sub-agent's block)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from app.llm.call_arguments import arguments_for_display
from app.tui import css_beside
from app.tui.widgets.message_text import StreamedText
from app.tui.widgets.tool_render import ToolCallView


class ReasoningBlock(Collapsible):
    """The model's thinking: collapsed, a click or enter away."""

    def __init__(self, text: str = "") -> None:
        self.text = text
        self._body = Static(Content(text), classes="reasoning-text")
        super().__init__(self._body, title="Thinking", collapsed=True)

    def append(self, text: str) -> None:
        self.text += text
        self._body.update(Content(self.text))

    def replace(self, text: str) -> None:
        self.text = text
        self._body.update(Content(text))


class AssistantMessage(Vertical):
    """Blocks in arrival order. Text after a tool call starts a new text part."""

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, message_id: str, parts: list[dict[str, Any]] | None = None) -> None:
        """``parts``: a stored message's parts, composed with the message, so a page of
        stored replies mounts (and is laid out) at once; their tool calls come folded."""
        super().__init__()
        self.message_id = message_id
        self.tool_views: dict[str, ToolCallView] = {}
        self._texts: list[StreamedText] = []
        self._reasonings: list[ReasoningBlock] = []
        self._open_text: StreamedText | None = None
        self._reasoning_open = False
        self._composed = self._blocks(parts or [], folded=True)

    def compose(self) -> ComposeResult:
        blocks, self._composed = self._composed, []
        yield from blocks

    @property
    def text(self) -> str:
        return "".join(part.text for part in self._texts)

    async def append_text(self, text: str) -> None:
        if self._open_text is None:
            self._reasoning_open = False
            self._open_text = StreamedText()
            self._texts.append(self._open_text)
            await self.mount(self._open_text)
        await self._open_text.write(text)

    async def append_reasoning(self, text: str) -> None:
        self.end_text()
        if not self._reasoning_open:
            block = ReasoningBlock()
            self._reasonings.append(block)
            self._reasoning_open = True
            await self.mount(block)
        self._reasonings[-1].append(text)

    async def add_tool_call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> ToolCallView:
        self.end_text()
        self._reasoning_open = False
        view = self.tool_views.get(call_id)
        if view is None:
            view = self._tool_view(call_id, tool, arguments)
            await self.mount(view)
        return view

    def _tool_view(self, call_id: str, tool: str, arguments: dict[str, Any], *, folded: bool = False) -> ToolCallView:
        """A call's view; ``folded``: shown by its header line until opened (a sub-agent's
        block has a summary of its own and is never folded)."""
        if tool == "task":
            # Imported with the first sub-agent block: a session opens without it.
            from app.tui.widgets.task_view import TaskView

            view: ToolCallView = TaskView(call_id, tool, arguments)
        else:
            view = ToolCallView(call_id, tool, arguments, folded=folded)
        self.tool_views[call_id] = view
        return view

    def calls_holding(self, text: str) -> list[ToolCallView]:
        """The calls whose output holds ``text``, case ignored (where find matched it)."""
        return [view for view in self.tool_views.values() if view.holds(text)]

    def end_text(self) -> None:
        """Complete the text part being streamed, if any."""
        if self._open_text is not None:
            part, self._open_text = self._open_text, None
            part.finish()

    async def show_parts(self, parts: list[dict[str, Any]]) -> None:
        """Draw a stored message at once (replaying a session, or repairing a stream
        that lost deltas): no streaming, the final text of each part."""
        self.end_text()
        self._reasoning_open = False
        blocks = self._blocks(parts)
        if blocks:
            await self.mount_all(blocks)

    def _blocks(self, parts: list[dict[str, Any]], *, folded: bool = False) -> list[Widget]:
        """The widgets of stored parts, not mounted yet (a call already shown is skipped)."""
        blocks: list[Widget] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                text = StreamedText(part["text"])
                self._texts.append(text)
                blocks.append(text)
            elif kind == "reasoning" and part.get("text"):
                reasoning = ReasoningBlock(part["text"])
                self._reasonings.append(reasoning)
                blocks.append(reasoning)
            elif kind == "tool_call" and part["id"] not in self.tool_views:
                arguments = arguments_for_display(part.get("arguments"))
                blocks.append(self._tool_view(part["id"], part["name"], arguments, folded=folded))
        return blocks

    async def reconcile(self, parts: list[dict[str, Any]]) -> bool:
        """Make the streamed text equal the stored parts (deltas are droppable on the bus;
        the stored message is the truth). Returns True when the message had to be redrawn
        from scratch, so the caller re-applies the tool results it knows."""
        self.end_text()
        texts = [p["text"] for p in parts if p.get("type") == "text" and p.get("text")]
        thoughts = [p["text"] for p in parts if p.get("type") == "reasoning" and p.get("text")]
        if len(texts) == len(self._texts) and len(thoughts) == len(self._reasonings):
            for shown, text in zip(self._texts, texts, strict=True):
                if shown.text != text:
                    await shown.replace(text)
            for reasoning, text in zip(self._reasonings, thoughts, strict=True):
                if reasoning.text != text:
                    reasoning.replace(text)
            return False
        await self.remove_children()
        self._texts.clear()
        self._reasonings.clear()
        self.tool_views.clear()
        await self.show_parts(parts)
        return True
