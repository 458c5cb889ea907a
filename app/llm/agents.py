"""The agents: who gets which system prompt (app/llm/prompts/<name>.md) and which tools.

Tools are chosen by name from what the runtime offers; a name that is not there (a tool
still being written, or disabled) is skipped, so an agent works with whatever exists.
Permissions are not decided here: the PermissionService applies the config's
``agents.<name>.permission`` rules given the agent name in the ToolContext.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

from app.errors import OpencodeError

T = TypeVar("T")

PROMPTS_DIR = Path(__file__).parent / "prompts"

READ_TOOLS = ("view", "ls", "glob", "grep")
CHANGE_TOOLS = ("write", "edit", "multiedit", "patch", "delete", "bash")
# The language servers' view of the files the agent changes; the explorer, which only
# reads, keeps to the four read tools.
CODING_TOOLS = (*READ_TOOLS, "diagnostics", *CHANGE_TOOLS)
# The plan the agent keeps for multi-step work, shown to the user beside the chat.
TODO_TOOLS = ("todowrite", "todoread")


@dataclass(frozen=True)
class Agent:
    name: str
    tools: tuple[str, ...]
    """Tool names in the order the model sees them."""
    conversational: bool = True
    """False for helpers (title, summarizer) that answer once, with no tools."""
    mcp_tools: bool = False
    """Also gets every tool of the connected MCP servers, after its own."""


AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent("coder", (*CODING_TOOLS, *TODO_TOOLS, "webfetch", "task"), mcp_tools=True),
        Agent("workhorse", (*CODING_TOOLS, *TODO_TOOLS, "webfetch"), mcp_tools=True),
        Agent("explorer", READ_TOOLS),
        Agent("title", (), conversational=False),
        Agent("summarizer", (), conversational=False),
    )
}


def get_agent(name: str) -> Agent:
    agent = AGENTS.get(name)
    if agent is None:
        raise OpencodeError(f"unknown agent {name!r}: use one of {', '.join(AGENTS)}")
    return agent


@cache
def system_prompt(name: str) -> str:
    """The agent's own prompt text (packaged beside this module)."""
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


def tools_for(agent: Agent, available: Mapping[str, T], mcp: Mapping[str, T] | None = None) -> dict[str, T]:
    """The agent's tools that ``available`` has, in the agent's order, then the MCP tools
    (``mcp``) if the agent takes them; a built-in tool keeps its name over an MCP one."""
    tools = {name: available[name] for name in agent.tools if name in available}
    if agent.mcp_tools and mcp:
        tools.update((name, tool) for name, tool in mcp.items() if name not in tools)
    return tools
