"""The attack suite, hostile tool arguments: half a UTF-16 pair (JSON's "\\ud800") in a
path or a pattern, and a parameter given twice. Each is refused in one line naming the
parameter, not with "failed unexpectedly (UnicodeEncodeError...)", pydantic's "unable to
parse raw data", or the second of two values taken silently."""

from __future__ import annotations

import json

import pytest

from app.core.errors import ToolError
from tests.permission.attack import opencode_tool, snapshot

SURROGATE = "\\ud800"  # as the model's JSON spells it

LONE_SURROGATES = {
    "write's path": ("write", f'{{"filePath": "{SURROGATE}.txt", "content": "x"}}', "filePath"),
    "edit's path": ("edit", f'{{"filePath": "{SURROGATE}", "oldString": "a", "newString": "b"}}', "filePath"),
    "multiedit's path": (
        "multiedit", f'{{"filePath": "{SURROGATE}", "edits": [{{"oldString": "a", "newString": "b"}}]}}', "filePath"
    ),
    "delete's path": ("delete", f'{{"path": "a{SURROGATE}"}}', "path"),
    "view's path": ("view", f'{{"filePath": "{SURROGATE}"}}', "filePath"),
    "grep's include": ("grep", f'{{"pattern": "x", "include": "{SURROGATE}"}}', "include"),
    "ls's ignore list": ("ls", f'{{"path": ".", "ignore": ["a", "{SURROGATE}"]}}', "ignore.1"),
    "a multiedit's new text": (
        "multiedit", f'{{"filePath": "a.txt", "edits": [{{"oldString": "a", "newString": "{SURROGATE}"}}]}}',
        "edits.0.newString",
    ),
    "a key": ("view", f'{{"filePath": "a.txt", "{SURROGATE}": 1}}', "a parameter's name"),
}


@pytest.mark.parametrize(("tool", "arguments", "where"), LONE_SURROGATES.values(), ids=LONE_SURROGATES.keys())
async def test_a_lone_surrogate_is_one_line_naming_the_parameter(runtime, ctx, workspace, tool, arguments, where):
    (workspace / "a.txt").write_text("a\n")
    before = snapshot(workspace)
    with pytest.raises(ToolError) as caught:
        await runtime.tools[tool].call(arguments, ctx)
    message = str(caught.value)
    assert message.startswith(f"{tool}: {where}") and "contains an unpaired surrogate" in message, message
    assert "send valid Unicode text" in message and "unexpectedly" not in message
    assert snapshot(workspace) == before


async def test_a_parameter_given_twice_is_refused_not_guessed(runtime, ctx, workspace):
    (workspace / "a.txt").write_text("a\n")
    arguments = '{"filePath": "a.txt", "content": "x", "filePath": "b.txt"}'
    with pytest.raises(ToolError, match='write: in the arguments, the key "filePath" appears twice in one object'):
        await runtime.tools["write"].call(arguments, ctx)
    assert not (workspace / "b.txt").exists() and (workspace / "a.txt").read_text() == "a\n"


def test_opencode_tool_gives_one_line_for_a_lone_surrogate(workspace):
    answer = opencode_tool(workspace, "write", json.loads(f'{{"filePath": "{SURROGATE}", "content": "x"}}'))
    assert answer["ok"] is False and "filePath contains an unpaired surrogate" in answer["output"], answer
    assert snapshot(workspace) == {}
