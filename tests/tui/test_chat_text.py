"""The pure pieces behind the chat: what a tool call says about itself and how a backlog
of deltas is merged."""

from __future__ import annotations

from app.llm.events import ReasoningDelta, TextDelta, TurnFinished
from app.tui.listener import coalesce_deltas
from app.tui.widgets import tool_render_text as describe
from app.tui.widgets.status_bar import format_tokens, format_usage


def test_each_tool_names_its_subject_the_way_a_user_would():
    assert describe.subject("edit", {"filePath": "src/a.py", "oldString": "x"}) == "src/a.py"
    assert describe.subject("delete", {"path": "build"}) == "build"
    deep = "src/" + "nested/" * 20 + "module.py"
    assert describe.subject("view", {"filePath": deep}) == "src/nested/nested/" + "nested/" * 13 + "…/module.py"
    assert describe.subject("grep", {"pattern": "TODO", "path": "src", "include": "*.py"}) == "TODO  (*.py)  in src"
    assert describe.subject("bash", {"command": "make test\nmake lint"}) == "make test …"
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Delete File: b.py\n*** End Patch"
    assert describe.subject("patch", {"patch": patch}) == "a.py, b.py"
    assert describe.subject("task", {"description": "find the config loader"}) == "find the config loader"


def test_the_action_shown_while_running_depends_on_the_tool():
    assert describe.action("delete") == "Deleting..."
    assert describe.action("edit") == "Editing..."
    assert describe.action("patch") == "Patching..."
    assert describe.action("bash") == "Running..."
    assert describe.action("some_mcp_tool") == "Working..."


def test_outcomes_summarise_the_result_in_a_few_words():
    assert describe.outcome("edit", "", {"additions": 3, "deletions": 1}, False) == "+3 -1"
    assert describe.outcome("delete", "", {"deleted_count": 1, "removed_lines": 9}, False) == "1 file deleted, -9"
    assert describe.outcome("bash", "", {"exit_code": 2}, False) == "exit 2"
    assert describe.outcome("view", "a\nb\nc", {}, False) == "3 lines"
    assert describe.outcome("edit", "no match", {}, True) == "failed"
    todos = [{"status": "completed"}, {"status": "pending"}, {"status": "cancelled"}]
    assert describe.outcome("todowrite", "", {"todos": todos}, False) == "1/3 done"
    page = {"status": 200, "contentType": "text/html", "bytes": 5_242_880, "truncated": True}
    assert describe.outcome("webfetch", "", page, False) == "200 text/html, 5,242,880 bytes, cut"
    assert describe.subject("webfetch", {"url": "https://example.com/docs"}) == "https://example.com/docs"


def test_patch_files_are_listed_by_what_happened_to_them():
    files = [
        {"path": "new.py", "additions": 2, "deletions": 0, "created": True},
        {"path": "gone.py", "additions": 0, "deletions": 5, "deleted": True},
        {"path": "b.py", "additions": 1, "deletions": 1, "moved_from": "a.py"},
        {"path": "c.py", "additions": 1, "deletions": 0},
    ]
    assert describe.patch_file_lines(files) == [
        "A new.py  +2 -0", "D gone.py  +0 -5", "R a.py -> b.py  +1 -1", "M c.py  +1 -0",
    ]


def test_truncation_keeps_the_first_lines_and_counts_the_rest():
    assert describe.truncate_lines("a\nb\nc\nd\n", 2) == ("a\nb", 2)
    assert describe.truncate_lines("a\nb\n", 5) == ("a\nb", 0)


def test_a_backlog_of_deltas_is_merged_per_message_and_kind():
    events = [
        TextDelta("s", "m1", "Hel"), TextDelta("s", "m1", "lo"), ReasoningDelta("s", "m1", "hm"),
        ReasoningDelta("s", "m1", "m"), TextDelta("s", "m2", "x"), TurnFinished("s", "Hello", "stop"),
        TextDelta("s", "m2", "y"),
    ]
    assert coalesce_deltas(events) == [
        TextDelta("s", "m1", "Hello"), ReasoningDelta("s", "m1", "hmm"), TextDelta("s", "m2", "x"),
        TurnFinished("s", "Hello", "stop"), TextDelta("s", "m2", "y"),
    ]


def test_the_status_bar_shortens_numbers():
    assert format_tokens(999) == "999"
    assert format_tokens(12_345) == "12.3k"
    assert format_tokens(2_500_000) == "2.5M"
    assert format_usage(50_000, 200_000, 0.1234) == "50.0k tokens (25%) · $0.12"
    assert format_usage(10, 0, 0.0) == "10 tokens · $0.00"
    assert format_usage(50_000, 200_000, 0.02, 40_000, 2_100) == (
        "50.0k tokens (25%) · cache 40.0k read, 2.1k written · $0.02"
    )
