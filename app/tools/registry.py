"""Every built-in tool: one table of names and where each lives, imported on first use.

`opencode tool patch` is judged on its whole-process time, so looking a tool up imports
that tool's module only (view does not pay for rapidfuzz, patch not for the bash parser).
The same table gives all_tools() and the runtime's ToolTable: there is one list of tools.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module

from app.tools.base import Tool

BUILTIN_TOOLS: dict[str, str] = {
    "view": "app.tools.view:ViewTool",
    "ls": "app.tools.ls:LsTool",
    "glob": "app.tools.glob:GlobTool",
    "grep": "app.tools.grep:GrepTool",
    "write": "app.tools.write:WriteTool",
    "edit": "app.tools.edit:EditTool",
    "multiedit": "app.tools.multiedit:MultiEditTool",
    "patch": "app.tools.patch:PatchTool",
    "delete": "app.tools.delete:DeleteTool",
    "bash": "app.tools.bash:BashTool",
    "bash_output": "app.tools.bash_background:BashOutputTool",
    "bash_kill": "app.tools.bash_background:BashKillTool",
    "diagnostics": "app.tools.diagnostics:DiagnosticsTool",
    "todowrite": "app.tools.todo:TodoWriteTool",
    "todoread": "app.tools.todo:TodoReadTool",
    "webfetch": "app.tools.webfetch:WebfetchTool",
}
"""Tool name -> "module:class", in the order models see them."""

TOOL_ALIASES: dict[str, str] = {"edit.patch": "patch"}
"""Other names a person may give a tool (the patch spec's `edit.patch`): accepted wherever
a tool name is read (`opencode tool`, an agent file's tools, `permission check`, a model's
call), while providers are only ever sent the name itself."""


def canonical_name(name: str) -> str:
    """The tool's own name for ``name``, which may be an alias."""
    return TOOL_ALIASES.get(name, name)


def load_tool(name: str) -> Tool:
    """A new instance of the built-in tool ``name`` (KeyError if there is none)."""
    module, _, cls = BUILTIN_TOOLS[canonical_name(name)].partition(":")
    tool: Tool = getattr(import_module(module), cls)()
    return tool


def import_tool_modules() -> None:
    """Import every built-in tool's module, without making the tools: a front-end that
    will run turns imports them ahead of the first one, from a thread."""
    for where in BUILTIN_TOOLS.values():
        import_module(where.partition(":")[0])


def all_tools() -> list[Tool]:
    """One instance of every built-in tool, in the order models see them."""
    return [load_tool(name) for name in BUILTIN_TOOLS]


class ToolTable(MutableMapping[str, Tool]):
    """The runtime's name -> tool mapping: every built-in tool is listed from the start
    and instantiated on first access. Tools can be added or replaced (tests, plugins)."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool | None] = dict.fromkeys(BUILTIN_TOOLS)

    def __getitem__(self, name: str) -> Tool:
        name = canonical_name(name)
        tool = self._tools[name]
        if tool is None:
            tool = self._tools[name] = load_tool(name)
        return tool

    def __setitem__(self, name: str, tool: Tool) -> None:
        self._tools[name] = tool

    def __delitem__(self, name: str) -> None:
        del self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)
