"""The `task` tool: an agent hands a piece of work to a sub-agent (the read-only explorer,
the workhorse that changes files, or a sub-agent defined in a file), which runs in a
child session of the caller's (its reads and changes stay attributed to it) and answers
in text. ``task_id`` continues an earlier child of the same session, with its history.

Starting a sub-agent is judged by the permission service (key ``task``, subject the
sub-agent's name), so rules can keep an agent to some sub-agents: plan mode allows only
the explorer.

The tool needs the agent loop, which lives above the tools room; it receives it at
construction as anything with ``run_subagent`` (the loop builds one TaskTool for itself),
so this module imports nothing from app/llm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import Field

from app.agents.catalog import DEFAULT_SUBAGENT
from app.core.errors import ToolError
from app.permission import PermissionPreview
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description


class SubagentResult(Protocol):
    """Read-only, as the loop's frozen TurnResult is."""

    @property
    def response(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...


@dataclass(frozen=True)
class SubagentTask:
    """A piece of work handed to ``agent`` by the task call ``call_id`` of the parent
    session: in a new child session titled ``title``, or in the earlier child ``task_id``."""

    parent_session_id: str
    agent: str
    title: str
    prompt: str
    call_id: str | None = None
    task_id: str | None = None


class Subagents(Protocol):
    def task_agent(self, parent_session_id: str, task_id: str) -> str:
        """The sub-agent an earlier task of this parent ran; ToolError for a task_id that
        is not one of its tasks."""
        ...

    async def run_subagent(self, task: SubagentTask) -> tuple[str, SubagentResult]:
        """Run the task; the child session's id and how its turn ended."""
        ...


class Described(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...


class SubagentDirectory(Protocol):
    """What the tool needs of the agent catalog (app.agents.catalog.AgentCatalog)."""

    def subagents(self) -> Sequence[Described]: ...


class TaskParams(ToolParams):
    description: str = Field(description="A short (3-5 words) description of the task, shown to the user.")
    prompt: str = Field(description="The complete task for the sub-agent, with all the context it needs.")
    subagent_type: str | None = Field(
        None,
        description="Which sub-agent does the work: explorer (the default), workhorse, or another listed one.",
    )
    task_id: str | None = Field(
        None, description="The task_id of an earlier task of this session, to continue it with its history."
    )


class TaskTool(Tool):
    name = "task"
    params = TaskParams
    # Each child's reads and changes go through the same locks, freshness checks and
    # questions as anyone's, so the tasks of one message run at the same time.
    runs_alongside = True

    def __init__(self, subagents: Subagents, directory: SubagentDirectory) -> None:
        self._subagents = subagents
        self._directory = directory
        listed = "\n".join(f"- {agent.name}: {agent.description}" for agent in directory.subagents())
        self.description = tool_description(self.name, agents=listed)

    async def run(self, params: TaskParams, ctx: ToolContext) -> ToolResult:
        if not params.prompt.strip():
            raise ToolError("task: prompt is empty: write the full task for the sub-agent")
        task_id = params.task_id.strip() if params.task_id else None
        agent = self._agent(params.subagent_type, task_id, ctx)
        description = " ".join(params.description.split()) or agent
        await ctx.permissions.check(
            ctx.session_id,
            self.name,
            agent,
            ctx.agent,
            f"task {agent}: {description}",
            PermissionPreview("text", params.prompt),
            scope=params.prompt,  # the question shows the prompt: an answer holds for it alone
        )
        child_id, result = await self._subagents.run_subagent(
            SubagentTask(ctx.session_id, agent, description, params.prompt, ctx.call_id, task_id)
        )
        if result.reason == "failed":
            raise ToolError(
                f"task: the {agent} failed ({result.error}); continue with task_id {child_id} or do the work yourself"
            )
        answer = result.response.strip() or f"(the {agent} returned no answer)"
        ending = "" if result.reason in ("stop", "end_turn") else f" It ended early ({result.reason})."
        return ToolResult(
            output=f"{answer}\n\ntask_id: {child_id} (subagent_type {agent}: pass this task_id to continue the task).{ending}",
            metadata={
                "task_id": child_id,
                "session_id": child_id,
                "subagent_type": agent,
                "reason": result.reason,
            },
            title=description,
        )

    def _agent(self, asked: str | None, task_id: str | None, ctx: ToolContext) -> str:
        """The sub-agent to run: a continued task's own, else the one asked for (explorer
        by default), which must be a sub-agent."""
        if task_id:
            recorded = self._subagents.task_agent(ctx.session_id, task_id)
            if asked not in (None, recorded):
                raise ToolError(
                    f"task: task {task_id} is a {recorded} task: omit subagent_type to continue it, "
                    "or omit task_id to start a new task"
                )
            return recorded
        agent = asked or DEFAULT_SUBAGENT
        names = [agent.name for agent in self._directory.subagents()]
        if agent not in names:
            raise ToolError(f"task: unknown subagent_type {agent!r}: use one of {', '.join(names)}")
        return agent
