"""What models see of every registered tool: a self-contained JSON schema with the
contract's parameter names, and a description with the four sections."""

import json

import pytest

from app.tools.registry import all_tools

CONTRACT = {
    "view": {"filePath", "offset", "limit"},
    "ls": {"path", "ignore"},
    "glob": {"pattern", "path"},
    "grep": {"pattern", "path", "include"},
    "write": {"filePath", "content"},
    "edit": {"filePath", "oldString", "newString", "replaceAll"},
    "multiedit": {"filePath", "edits"},
    "patch": {"patch", "workspace_root", "dry_run", "allow_delete", "allow_move"},
    "delete": {"path"},
    "bash": {"command", "timeout", "description", "sandbox", "background"},
    "bash_output": {"job_id"},
    "bash_kill": {"job_id"},
    "diagnostics": {"path"},
    "todowrite": {"todos"},
    "todoread": set(),
    "webfetch": {"url", "format", "timeout"},
}


@pytest.mark.parametrize("tool", all_tools(), ids=lambda tool: tool.name)
def test_spec_is_self_contained_and_keeps_the_contract_names(tool):
    spec = tool.spec()["function"]
    text = json.dumps(spec)
    assert "$ref" not in text and "$defs" not in text
    assert set(spec["parameters"]["properties"]) == CONTRACT[tool.name]
    for section in ("WHEN TO USE", "HOW TO USE", "LIMITATIONS", "TIPS"):
        assert section in spec["description"], f"{tool.name} lacks {section}"


def test_tool_names_are_unique():
    names = [tool.name for tool in all_tools()]
    assert len(names) == len(set(names))


def test_edit_patch_names_the_patch_tool_but_providers_only_see_patch(tmp_path) -> None:
    from app.agents.files import read_agent
    from app.tools.registry import ToolTable

    table = ToolTable()
    assert table["edit.patch"] is table["patch"] and "edit.patch" in table
    assert "edit.patch" not in list(table)
    agent = tmp_path / "fixer.md"
    agent.write_text("---\ndescription: fixes\ntools: [view, edit.patch]\n---\nFix.\n")
    assert read_agent(agent).tools == ("view", "patch")
