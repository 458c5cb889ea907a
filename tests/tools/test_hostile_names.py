"""The attack suite, hostile names: a new file named with a control character or a
bidirectional control would show as another name in a terminal, the sidebar or a
question (`x\\rnotes.txt` prints as `notes.txt`), and a name over 255 bytes makes the
system refuse the reading tools' call. Each is refused in one line, nothing changed."""

from __future__ import annotations

import pytest

from tests.permission.attack import call, snapshot


def patch(*lines: str) -> dict[str, str]:
    return {"patch": "\n".join(["*** Begin Patch", *lines, "*** End Patch"])}


MISLEADING = {
    "a carriage return": ("write", {"filePath": "x\rnotes.txt", "content": "x\n"}, "U+000D"),
    "a line break": ("write", {"filePath": "a\nb.txt", "content": "x\n"}, "U+000A"),
    "an escape sequence": ("write", {"filePath": "evil\x1b[2Knotes.txt", "content": "x\n"}, "U+001B"),
    "DEL": ("write", {"filePath": "a\x7fb.txt", "content": "x\n"}, "U+007F"),
    "a right-to-left override": ("write", {"filePath": "invoice\u202etxt.exe", "content": "x\n"}, "U+202E"),
    "a folder's name": ("write", {"filePath": "d\td/a.txt", "content": "x\n"}, "U+0009"),
    "patch Add File": ("patch", patch("*** Add File: a\rb.txt", "+x"), "U+000D"),
    "patch Move to": ("patch", patch("*** Update File: old.txt", "*** Move to: n\x1bew.txt", "@@", "-old", "+new"), "U+001B"),
}


@pytest.mark.parametrize(("tool", "arguments", "code"), MISLEADING.values(), ids=MISLEADING.keys())
async def test_a_new_file_is_not_given_a_name_that_shows_as_another(runtime, workspace, tool, arguments, code):
    (workspace / "old.txt").write_text("old\n")
    before = snapshot(workspace)
    output = await call(runtime, tool, arguments, read=("old.txt",))
    assert f"holds the control character {code}" in output and "nothing was changed" in output, output
    assert snapshot(workspace) == before


async def test_a_file_that_already_has_such_a_name_can_still_be_changed(runtime, workspace):
    (workspace / "a\tb.txt").write_text("old\n")
    output = await call(runtime, "write", {"filePath": "a\tb.txt", "content": "new\n"}, read=("a\tb.txt",))
    assert "ERROR" not in output and (workspace / "a\tb.txt").read_text() == "new\n", output


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("ls", {"path": "a" * 300}), ("grep", {"pattern": "x", "path": "a" * 300}),
     ("glob", {"pattern": "*", "path": "a" * 300}), ("view", {"filePath": "a" * 300})],
)  # fmt: skip
async def test_a_name_too_long_to_read_is_one_line(runtime, tool, arguments):
    output = await call(runtime, tool, arguments)
    assert output.startswith("ERROR: aaa") and "cannot be read: File name too long; check the path" in output, output
