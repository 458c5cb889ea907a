"""The todo tools: ``todowrite`` replaces the session's todo list (the agent's plan) with
the list it is given, ``todoread`` returns it. The list lives in the store (one per
session), front-ends show it from the TodosUpdated event; neither tool touches a file, so
neither asks anyone."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.core.errors import ToolError
from app.permission import PermissionPreview
from app.store.models import Message, TodoItem, TodoPriority, TodoStatus
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description

MAX_TODOS = 100
MAX_CONTENT_CHARS = 500

MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
"""How the model sees each status in the tools' output."""


class TodoEntry(BaseModel):
    """One item as the model writes it."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=MAX_CONTENT_CHARS, description="What to do, in one line.")
    status: TodoStatus = Field(description="pending, in_progress, completed or cancelled.")
    priority: TodoPriority = Field("medium", description="high, medium or low.")
    id: str | None = Field(
        None, min_length=1, max_length=64, description="A short stable name for the item; default: its position."
    )

    @field_validator("content")
    @classmethod
    def _one_line(cls, content: str) -> str:
        flat = " ".join(content.split())
        if not flat:
            raise ValueError("is empty: say what the step is")
        return flat


class TodoWriteParams(ToolParams):
    todos: list[TodoEntry] = Field(
        max_length=MAX_TODOS, description="The whole todo list, in order; it replaces the previous one."
    )


class TodoReadParams(ToolParams):
    pass


def render_todos(todos: list[TodoItem]) -> str:
    """The list as the model reads it: a count line, then one line per item."""
    if not todos:
        return "The todo list is empty."
    done = sum(todo.status == "completed" for todo in todos)
    lines = [f"Todo list ({done} of {len(todos)} completed):"]
    for todo in todos:
        lines.append(f"{MARKS[todo.status]} {todo.content} (id {todo.id}, {todo.priority})")
    return "\n".join(lines)


SUBJECT = "the todo list"
"""The permission subject of both tools: allowed by default, but a rule may deny or ask."""


async def _authorize(tool: Tool, ctx: ToolContext, preview: str) -> None:
    await ctx.permissions.check(
        ctx.session_id, tool.name, SUBJECT, ctx.agent, f"{tool.name} {SUBJECT}", PermissionPreview("text", preview)
    )


def latest_written(messages: list[Message]) -> list[TodoItem]:
    """The list the last successful todowrite among ``messages`` wrote (empty when none
    did): the session's list once the turns an undo took back are left out."""
    for message in reversed(messages):
        for part in reversed(message.parts) if message.role == "tool" else ():
            if part.get("type") != "tool_result" or part.get("name") != TodoWriteTool.name or part.get("error"):
                continue
            todos = (part.get("metadata") or {}).get("todos")
            if isinstance(todos, list):
                return [TodoItem(**todo) for todo in todos]
    return []


def _metadata(todos: list[TodoItem]) -> dict[str, object]:
    return {"todos": [todo._asdict() for todo in todos]}


def _title(todos: list[TodoItem]) -> str:
    open_items = sum(todo.status in ("pending", "in_progress") for todo in todos)
    return f"{open_items} of {len(todos)} todos open"


class TodoWriteTool(Tool):
    name = "todowrite"
    params = TodoWriteParams
    description = tool_description(
        "todowrite", max_todos=MAX_TODOS, max_content_chars=MAX_CONTENT_CHARS
    )
    # It writes the session's state: it runs alone, in the model's order, never beside a todoread.
    read_only = False

    async def run(self, params: TodoWriteParams, ctx: ToolContext) -> ToolResult:
        todos = [
            TodoItem(entry.id or str(position), entry.content, entry.status, entry.priority)
            for position, entry in enumerate(params.todos, start=1)
        ]
        seen: set[str] = set()
        for todo in todos:
            if todo.id in seen:
                raise ToolError(f'todowrite: the id "{todo.id}" is used twice: give every item its own id')
            seen.add(todo.id)
        output = render_todos(todos)
        await _authorize(self, ctx, output)
        ctx.todos.replace(ctx.session_id, todos)
        return ToolResult(output, _metadata(todos), title=_title(todos))


class TodoReadTool(Tool):
    name = "todoread"
    params = TodoReadParams
    description = tool_description("todoread")
    read_only = True

    async def run(self, params: TodoReadParams, ctx: ToolContext) -> ToolResult:
        await _authorize(self, ctx, "(reads the list)")
        todos = ctx.todos.get(ctx.session_id)
        return ToolResult(render_todos(todos), _metadata(todos), title=_title(todos))
