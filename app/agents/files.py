"""Agents defined in Markdown files: ``.opencode/agents/NAME.md`` (the project's) and
``~/.config/opencode/agents/NAME.md`` (the user's, for every project;
``$XDG_CONFIG_HOME`` when set). The user's file wins over the project's of the same
name (a repository cannot replace what the user wrote for themselves), with one notice.
A project's agent is marked ``repository``: its own permission rules narrow what the
user's config allows but never lift one of its denies (app/permission/service.py).

A file is YAML front matter, then the agent's system prompt::

    ---
    description: Reviews a change for bugs and style   # what the coder reads to pick it
    mode: subagent                                      # subagent (default) or primary
    model: anthropic/claude-sonnet-4-5                  # default: the parent turn's model
    tools: [view, grep]                                 # exactly these; default: workhorse's (coder's for primary)
    permission: {edit: deny}                            # the shape of agents.<name>.permission
    ---
    You review code...

A file that cannot be used (bad YAML, an unknown key, a wrong type, a built-in agent's
name, an empty prompt) is left out with one notice naming the file and the key; start-up
goes on with the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.agents.catalog import BUILTIN_AGENTS, CODING_TOOLS, SKILL_TOOL, TASK_TOOL, Agent, AgentCatalog
from app.permission.rules import ACTIONS, Rules, RuleValue
from app.tools.registry import BUILTIN_TOOLS, canonical_name

AGENTS_FOLDER = "agents"
PROJECT_FOLDER = Path(".opencode") / AGENTS_FOLDER
KEYS = ("description", "mode", "model", "tools", "permission")
MODES = ("subagent", "primary")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_FILES = 200
"""More agent files than this in one folder are left out, with a notice."""


class AgentFileError(ValueError):
    """One agent file that cannot be used; the message names the file and the key."""


def user_agents_folder(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/opencode/agents`` (or ``~/.config/...``); None without a home."""
    from app.core.config_paths import user_config_file

    config_file = user_config_file(env)
    return config_file.parent / AGENTS_FOLDER if config_file is not None else None


def load_catalog(root: Path, env: Mapping[str, str]) -> AgentCatalog:
    """The built-in agents, then the user's agent files, then the project's (except those
    of a name the user's already have), with one notice per file left out."""
    notices: list[str] = []
    defined: dict[str, Agent] = {}
    user_folder = user_agents_folder(env)
    if user_folder is not None:
        defined.update((agent.name, agent) for agent in _read_folder(user_folder, notices))
    for agent in _read_folder(root / PROJECT_FOLDER, notices):
        own = defined.get(agent.name)
        if own is None:
            defined[agent.name] = agent._replace(repository=True)
        else:
            notices.append(f"agent {agent.origin} not loaded: your own agent {agent.name} ({own.origin}) is used")
    return AgentCatalog.with_files(defined.values(), notices)


def agent_files_fingerprint(root: Path, env: Mapping[str, str]) -> tuple[tuple[int, int, int] | None, ...]:
    """(mtime_ns, size, inode) of both agent folders and each of their files, None where
    absent: it changes when a file is added, removed or saved, so a long-lived front-end
    (``opencode serve``) knows to read them again."""
    stamps: list[tuple[int, int, int] | None] = []
    for folder in (user_agents_folder(env), root / PROJECT_FOLDER):
        if folder is None:
            continue
        try:
            paths = [folder, *sorted(path for path in folder.iterdir() if path.suffix == ".md")]
        except OSError:
            paths = [folder]
        for path in paths:
            try:
                stat = path.stat()
            except OSError:
                stamps.append(None)
            else:
                stamps.append((stat.st_mtime_ns, stat.st_size, stat.st_ino))
    return tuple(stamps)


def _read_folder(folder: Path, notices: list[str]) -> Iterable[Agent]:
    from app.core import frontmatter

    for path in frontmatter.markdown_files(folder, "agent files", MAX_FILES, notices):
        try:
            yield read_agent(path)
        except AgentFileError as err:
            notices.append(f"agent not loaded: {err}")


def read_agent(path: Path) -> Agent:
    """The agent one file defines; AgentFileError naming the file (and key) otherwise."""
    from app.core import frontmatter  # YAML is imported only when there are agent files

    name = path.stem
    if not NAME_PATTERN.fullmatch(name):
        raise AgentFileError(f"{path}: {name!r} is not an agent name: use letters, digits, '_', '.' and '-'")
    if name in BUILTIN_AGENTS:
        raise AgentFileError(f"{path}: {name} is a built-in agent: rename the file")
    try:
        document = frontmatter.read(path)
    except frontmatter.FrontMatterError as err:
        raise AgentFileError(str(err)) from None
    meta = document.meta
    unknown = sorted(set(meta) - set(KEYS))
    if unknown:
        raise AgentFileError(f"{path}: unknown key {unknown[0]!r}: use {', '.join(KEYS)}")
    mode = _text(meta, "mode", path) or "subagent"
    if mode not in MODES:
        raise AgentFileError(f"{path}: mode {mode!r}: use subagent or primary")
    description = _text(meta, "description", path)
    if mode == "subagent" and not description:
        raise AgentFileError(
            f"{path}: description is missing: say when the coder should hand this agent work"
        )
    if not document.body:
        raise AgentFileError(f"{path}: the system prompt is empty: write it below the front matter")
    tools = _tools(meta.get("tools"), mode, path)
    return Agent(
        name=name,
        tools=tools if tools is not None else _default_tools(mode),
        mode=mode,  # type: ignore[arg-type]  # checked against MODES above
        description=description or _first_line(document.body),
        mcp_tools=tools is None,
        prompt=document.body,
        model=_text(meta, "model", path) or None,
        permission=_permission(meta.get("permission"), path),
        origin=str(path),
    )


def _default_tools(mode: str) -> tuple[str, ...]:
    return BUILTIN_AGENTS["coder" if mode == "primary" else "workhorse"].tools


def _text(meta: Mapping[str, Any], key: str, path: Path) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AgentFileError(f"{path}: {key} must be text, not {_kind(value)}")
    return " ".join(value.split())


def _tools(value: Any, mode: str, path: Path) -> tuple[str, ...] | None:
    """The listed tool names, checked: built-in tools, task (primary agents only), and
    MCP tools (``server_tool``, found when the servers connect)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AgentFileError(f"{path}: tools must be a list of tool names, e.g. [view, grep]")
    value = [canonical_name(name) for name in value]
    known = (*CODING_TOOLS, *(name for name in BUILTIN_TOOLS if name not in CODING_TOOLS), TASK_TOOL, SKILL_TOOL)
    for name in value:
        if name == TASK_TOOL and mode == "subagent":
            raise AgentFileError(
                f"{path}: tools: a sub-agent cannot have task (sub-agents do not start sub-agents)"
            )
        if name not in known and "_" not in name:
            raise AgentFileError(
                f"{path}: tools: unknown tool {name!r}: use {', '.join(known)} or an MCP tool"
            )
    return tuple(dict.fromkeys(value))


def _permission(value: Any, path: Path) -> Rules:
    """The ``permission`` mapping, in the shape of agents.<name>.permission."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentFileError(f"{path}: permission must map tool names to rules, e.g. {{edit: deny}}")
    rules: dict[str, RuleValue] = {}
    for tool, rule in value.items():
        where = f"{path}: permission.{tool}"
        if isinstance(rule, str):
            if rule not in ACTIONS:
                raise AgentFileError(f"{where}: {rule!r} is not an action: use allow, ask or deny")
        elif isinstance(rule, dict):
            for pattern, action in rule.items():
                if not isinstance(pattern, str) or action not in ACTIONS:
                    raise AgentFileError(f"{where}: pattern {pattern!r} needs an action: allow, ask or deny")
        else:
            raise AgentFileError(f"{where}: use an action (allow, ask, deny) or a map of pattern to action")
        rules[str(tool)] = rule
    return rules


def _kind(value: Any) -> str:
    return (
        "a list"
        if isinstance(value, list)
        else "a mapping"
        if isinstance(value, dict)
        else type(value).__name__
    )


def _first_line(body: str) -> str:
    line = body.strip().splitlines()[0]
    return line if len(line) <= 80 else line[:79] + "…"
