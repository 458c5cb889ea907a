"""What front-ends show of a tool result: the patch tool's JSON read as its error or summary."""

from __future__ import annotations

from app.tools.readable import readable_output


def test_the_patch_tools_json_reads_as_its_error_or_its_summary():
    assert readable_output('{"ok": false, "error": "no such file: a.py"}') == "no such file: a.py"
    answer = '{"ok": true, "summary": "A 1, M 0, D 0, R 0", "lsp_errors": {"a.py": ["line 1:1: bad"]}}'
    assert readable_output(answer) == "A 1, M 0, D 0, R 0\na.py: line 1:1: bad"


def test_anything_else_is_shown_as_it_is():
    for output in ('{"ok": "maybe"}', '{"ok": false', "plain text", '{"files": []}', ""):
        assert readable_output(output) == output
