"""Tool descriptions are Markdown files beside the agents' prompts, one per built-in tool."""

from importlib.resources import files

import pytest

from app.tools.descriptions import tool_description
from app.tools.glob import MAX_RESULTS
from app.tools.registry import BUILTIN_TOOLS, load_tool
from app.tools.task import TaskTool

TOOL_TEXTS = files("app").joinpath("llm", "prompts", "tools")
TOOLS = {*BUILTIN_TOOLS, TaskTool.name}  # task is the agent loop's own


def description_of(name: str) -> str:
    """What the model reads; task's text lists the sub-agents its loop knows."""
    if name == TaskTool.name:
        return tool_description(name, agents="- explorer: reads and searches")
    return load_tool(name).description


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_built_in_tool_reads_its_description_from_its_markdown_file(name):
    description = description_of(name)
    assert description.split("\n")[0]  # a first line that says what the tool does
    assert "${" not in description  # every field got its value
    assert not description.endswith("\n")
    written = TOOL_TEXTS.joinpath(f"{name}.md").read_text(encoding="utf-8")
    assert description.split("\n")[0] == written.split("\n")[0]


def test_every_description_file_belongs_to_a_built_in_tool():
    names = {entry.name.removesuffix(".md") for entry in TOOL_TEXTS.iterdir() if entry.name.endswith(".md")}
    assert names == TOOLS


def test_a_limit_in_the_text_is_the_tool_s_own_value():
    assert f"At most {MAX_RESULTS} paths" in tool_description("glob", max_results=MAX_RESULTS)
    assert "${max_results}" in TOOL_TEXTS.joinpath("glob.md").read_text(encoding="utf-8")


def test_a_field_without_a_value_is_an_error_not_a_silent_placeholder():
    with pytest.raises(KeyError, match="max_results"):
        tool_description("glob", unrelated=1)
