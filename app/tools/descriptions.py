"""Each built-in tool's long description: model-facing text kept as a Markdown file beside
the agents' prompts, ``app/llm/prompts/tools/<tool>.md``, so it reads and changes as prose.

A description that states a limit of its tool writes it as ``${name}`` and the tool passes
the value, so the text and the code cannot disagree.
"""

from __future__ import annotations

from importlib.resources import files
from string import Template


def tool_description(tool: str, **values: object) -> str:
    """The description of ``tool``, with ``values`` in place of its ``${name}`` fields
    (KeyError for a field without a value)."""
    source = files("app").joinpath("llm", "prompts", "tools", f"{tool}.md")
    text = source.read_text(encoding="utf-8").rstrip("\n")
    return Template(text).substitute(values) if values else text
