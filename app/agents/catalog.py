"""The agents: who gets which system prompt and which tools, and in which role.

A core room (no litellm, no textual): the runtime builds the catalog and the permission
service takes each agent's rules from it, in every command. Built-in agents have their
prompt in app/llm/prompts/<name>.md; agents defined in files (app/agents/files.py) carry theirs. An ``AgentCatalog`` holds both for one workspace
(``Runtime.agents``): the loop, the task tool and the front-ends ask it.

Modes: a ``primary`` agent answers the user (coder, plan, a custom primary agent: what
Tab, ``-p --agent`` and ACP's modes choose from); a ``subagent`` runs in a child session
when the ``task`` tool hands it work (explorer, workhorse, a custom sub-agent); a
``helper`` answers once with no tools (title, summarizer).

Tools are chosen by name from what the runtime offers; a name that is not there (a tool
still being written, or disabled) is skipped, so an agent works with whatever exists.
Permissions are decided by the PermissionService, which gets each agent's own rules from
``AgentCatalog.rules()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeVar

from app.core.errors import OpencodeError
from app.permission.rules import READ_ONLY_TOOLS, AgentRules, Rules

if TYPE_CHECKING:
    from app.config import Config

T = TypeVar("T")
Mode = Literal["primary", "subagent", "helper"]

PROMPTS_DIR = Path(__file__).parents[1] / "llm" / "prompts"

READ_TOOLS = ("view", "ls", "glob", "grep")
CHANGE_TOOLS = ("write", "edit", "multiedit", "patch", "delete", "bash", "bash_output", "bash_kill")
# The language servers' view of the files the agent changes; the explorer, which only
# reads, keeps to the four read tools.
CODING_TOOLS = (*READ_TOOLS, "diagnostics", *CHANGE_TOOLS)
# The plan the agent keeps for multi-step work, shown to the user beside the chat.
TODO_TOOLS = ("todowrite", "todoread")
TASK_TOOL = "task"
SKILL_TOOL = "skill"
DEFAULT_SUBAGENT = "explorer"
"""The sub-agent a task call without subagent_type starts."""

PLAN_MODE = (
    "plan mode: the plan agent only reads, searches and plans; switch to the coder agent "
    "(Tab in the TUI, --agent coder, the editor's mode) to change files or run commands"
)
# Plan mode's locked rules: every key but those that only read is denied, whatever any
# rule allows (so a write reached through any tool or spelling is refused), and task may
# start only the explorer.
_PLAN_LOCK: Rules = {
    "*": "deny",
    **{key: "allow" for key in sorted(READ_ONLY_TOOLS - {TASK_TOOL})},
    "external_directory": "allow",
    "webfetch": "allow",
    "fetch": "allow",
    TASK_TOOL: {"*": "deny", DEFAULT_SUBAGENT: "allow"},
}


_NO_RULES: Rules = MappingProxyType({})
"""An agent without rules of its own: shared, so it cannot be changed."""


class Agent(NamedTuple):
    """A built-in agent or one from an agent file: its tools, mode, prompt and rules."""

    name: str
    tools: tuple[str, ...]
    """Tool names in the order the model sees them."""
    mode: Mode = "primary"
    description: str = ""
    """What it does: shown in the task tool's description (sub-agents) and in lists of agents."""
    mcp_tools: bool = False
    """Also gets every tool of the connected MCP servers, after its own."""
    prompt: str | None = None
    """The system prompt of an agent from a file; built-in agents read prompts/<name>.md."""
    model: str | None = None
    """The model an agent file names; config's agents.<name>.model names a built-in's."""
    permission: Rules = _NO_RULES
    """An agent file's own rules (config's agents.<name>.permission holds a built-in's)."""
    locked: Rules = _NO_RULES
    """Denies no rule can lift (plan mode's), reported with ``locked_reason``."""
    locked_reason: str = ""
    origin: str | None = None
    """The file that defines it; None for a built-in agent."""
    repository: bool = False
    """Its file is the project's (the repository's), not the user's: its rules cannot
    lift a deny of the user's config."""

    @property
    def conversational(self) -> bool:
        """False for helpers (title, summarizer) that answer once, with no tools."""
        return self.mode != "helper"

    def system_prompt(self) -> str:
        return self.prompt if self.prompt is not None else system_prompt(self.name)


BUILTIN_AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent(
            "coder",
            (*CODING_TOOLS, *TODO_TOOLS, "webfetch", TASK_TOOL, SKILL_TOOL),
            description="The assistant: reads, changes and runs things, delegating to sub-agents",
            mcp_tools=True,
        ),
        Agent(
            "plan",
            (*READ_TOOLS, "diagnostics", *CHANGE_TOOLS, *TODO_TOOLS, "webfetch", TASK_TOOL, SKILL_TOOL),
            description="Reads, searches and plans; changes nothing",
            locked=_PLAN_LOCK,
            locked_reason=PLAN_MODE,
        ),
        Agent(
            "explorer",
            READ_TOOLS,
            mode="subagent",
            description="Read-only research: searches and reads the project to answer one question",
        ),
        Agent(
            "workhorse",
            (*CODING_TOOLS, *TODO_TOOLS, "webfetch", SKILL_TOOL),
            mode="subagent",
            description=(
                "Implementation work: reads, edits, creates and deletes files and runs commands "
                "(tests, builds) to carry one self-contained piece of work through"
            ),
            mcp_tools=True,
        ),
        Agent("title", (), mode="helper"),
        Agent("summarizer", (), mode="helper"),
    )
}


class UnknownAgentError(OpencodeError):
    """A name no agent has; the message lists the agents that fit."""


class AgentCatalog:
    """The agents of one workspace: the built-in ones, then those of agent files (which
    may not take a built-in's name). ``notices``: one line per agent file left out."""

    def __init__(self, agents: Mapping[str, Agent] | None = None, notices: tuple[str, ...] = ()) -> None:
        self.agents: Mapping[str, Agent] = dict(BUILTIN_AGENTS) if agents is None else agents
        self.notices = notices

    @classmethod
    def with_files(cls, defined: Iterable[Agent], notices: Iterable[str] = ()) -> AgentCatalog:
        return cls({**BUILTIN_AGENTS, **{agent.name: agent for agent in defined}}, tuple(notices))

    def get(self, name: str) -> Agent:
        """The agent called ``name``; UnknownAgentError listing every agent otherwise."""
        agent = self.agents.get(name)
        if agent is None:
            raise UnknownAgentError(f"unknown agent {name!r}: use one of {', '.join(self.agents)}")
        return agent

    def primary(self) -> list[Agent]:
        """The agents a user talks to (coder, plan, then custom primary agents by name):
        what Tab cycles through, ``-p --agent`` takes and ACP offers as modes."""
        return self._of_mode("primary")

    def subagents(self) -> list[Agent]:
        """The agents the task tool can start (explorer, workhorse, then custom ones by name)."""
        return self._of_mode("subagent")

    def primary_agent(self, name: str) -> Agent:
        """The primary agent ``name``; UnknownAgentError listing the primary agents otherwise."""
        agent = self.agents.get(name)
        if agent is None or agent.mode != "primary":
            names = ", ".join(agent.name for agent in self.primary())
            raise UnknownAgentError(f"unknown agent {name!r}: use one of {names}")
        return agent

    def command_agent(self, current: str, named: str | None) -> str:
        """The agent a command's prompt runs on: the one its file names, else ``current``.
        Plan mode (an agent with locked rules) stays: only the user leaves it (Tab,
        --agent, the editor's mode), never a command file."""
        if named is None or self.get(current).locked:
            return current
        return named

    def rules(self) -> dict[str, AgentRules]:
        """What each agent's definition adds to the config's rules, for the PermissionService."""
        return {
            agent.name: AgentRules(agent.permission, agent.locked, agent.locked_reason, agent.repository)
            for agent in self.agents.values()
            if agent.permission or agent.locked
        }

    def _of_mode(self, mode: Mode) -> list[Agent]:
        builtin = [agent for agent in self.agents.values() if agent.mode == mode and agent.origin is None]
        custom = sorted(
            (agent for agent in self.agents.values() if agent.mode == mode and agent.origin is not None),
            key=lambda agent: agent.name,
        )
        return [*builtin, *custom]


def configured_model(config: Config, agent: Agent) -> str | None:
    """The model chosen for ``agent``: config's agents.<name>.model, else its agent file's."""
    settings = config.agents.get(agent.name)
    return (settings.model if settings is not None else None) or agent.model


@cache
def system_prompt(name: str) -> str:
    """A built-in agent's own prompt text (packaged beside this module)."""
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


def tools_for(agent: Agent, available: Mapping[str, T], mcp: Mapping[str, T] | None = None) -> dict[str, T]:
    """The agent's tools that ``available`` has, in the agent's order, then the MCP tools
    (``mcp``) if the agent takes them; a built-in tool keeps its name over an MCP one.
    A sub-agent never gets ``task``: sub-agents do not start sub-agents."""
    names = [name for name in agent.tools if not (name == TASK_TOOL and agent.mode == "subagent")]
    tools = {name: available[name] for name in names if name in available}
    if agent.mcp_tools and mcp:
        tools.update((name, tool) for name, tool in mcp.items() if name not in tools)
    return tools
