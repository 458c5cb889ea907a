"""The `task` tool: the coder hands a research question to the read-only explorer agent,
which runs in a child session (its reads stay attributed to it) and answers in text.

The tool needs the agent loop, which lives above the tools room; it receives it at
construction as anything with ``run_subagent`` (the loop builds one TaskTool for itself),
so this module imports nothing from app/llm.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from app.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description

SUBAGENT = "explorer"


class SubagentResult(Protocol):
    """Read-only, as the loop's frozen TurnResult is."""

    @property
    def response(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...


class Subagents(Protocol):
    async def run_subagent(
        self, parent_session_id: str, agent: str, title: str, prompt: str, call_id: str | None = None
    ) -> tuple[str, SubagentResult]: ...


class TaskParams(ToolParams):
    description: str = Field(description="A short (3-5 words) description of the task, shown to the user.")
    prompt: str = Field(
        description="The complete question for the explorer agent, with all the context it needs."
    )


class TaskTool(Tool):
    name = "task"
    params = TaskParams
    description = tool_description("task")
    read_only = True  # the explorer only reads, so several tasks may run at once

    def __init__(self, subagents: Subagents) -> None:
        self._subagents = subagents

    async def run(self, params: TaskParams, ctx: ToolContext) -> ToolResult:
        if not params.prompt.strip():
            raise ToolError("task: prompt is empty: write the full question for the explorer")
        child_id, result = await self._subagents.run_subagent(
            ctx.session_id, SUBAGENT, params.description.strip() or "explore", params.prompt, ctx.call_id
        )
        if result.reason == "failed":
            raise ToolError(
                f"task: the explorer failed ({result.error}); search with glob, grep and view instead"
            )
        answer = result.response.strip() or "(the explorer returned no answer)"
        return ToolResult(
            output=answer,
            metadata={"session_id": child_id, "agent": SUBAGENT, "reason": result.reason},
            title=params.description,
        )
