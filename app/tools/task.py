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

SUBAGENT = "explorer"

DESCRIPTION = """Start a read-only explorer agent that searches and reads the project to answer one question, and returns its answer.

WHEN TO USE
- Open-ended searches across a large codebase ("where is X handled?", "which modules use Y?") that would take many glob/grep/view calls.
- Several independent questions: call task several times in one message; they run at the same time.

HOW TO USE
- description: 3 to 5 words naming the job (shown to the user).
- prompt: the full question, with everything the explorer needs: it does not see this conversation. Say what to return (paths, line numbers, a short explanation).

LIMITATIONS
- The explorer can only use view, ls, glob and grep: it cannot change files or run commands.
- It answers once; it cannot ask you questions back.

TIPS
- For a known file or a single symbol, use view or grep directly: it is faster.
- Trust the answer for locating things, but view the files yourself before editing them."""


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
    description = DESCRIPTION
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
