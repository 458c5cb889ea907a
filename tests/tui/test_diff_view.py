"""The diff view: parsing unified diffs into rows, syntax colours by language, the widget
drawn unified and split, and the diff screen's toggle."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from app.core.diff import unified_diff
from app.tui.screens.diff_screen import DiffScreen
from app.tui.widgets.diff_view import DiffView
from app.tui.widgets.diff_view_highlight import highlight_lines
from app.tui.widgets.diff_view_model import parse_unified_diff, split_rows, unified_rows
from tests.tui.panels_harness import PanelsApp

OLD = 'def greet(name):\n    """Say hello."""\n    print("hi", name)\n    return 1\n\nCOUNT = 2\n'
NEW = 'def greet(name: str) -> int:\n    """Say hello."""\n    print("hello", name)\n    return 1\n\nCOUNT = 2\nLIMIT = 3\n'

TWO_FILES = (
    "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n keep\n--- not a header\n+++ not a header either\n"
    "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n\\ No newline at end of file\n"
)


def style_at(text: Text, index: int) -> Style | None:
    return next((span.style for span in text.spans if span.start <= index < span.end and span.style), None)


def row_text(view: DiffView, y: int) -> str:
    return view.render_line(y).text


def test_hunk_counts_decide_what_is_a_header_and_line_numbers_follow():
    first, second = parse_unified_diff(TWO_FILES)
    assert first.path == "a.txt"
    assert [(line.kind, line.text, line.old_no, line.new_no) for line in first.lines[1:]] == [
        ("context", "keep", 1, 1),
        ("removed", "-- not a header", 2, None),
        ("added", "++ not a header either", None, 2),
    ]
    assert second.path == "b.txt"  # a deletion is named by its old path
    assert [line.kind for line in second.lines] == ["hunk", "removed"]
    assert (second.additions, second.deletions) == (0, 1)


def test_crlf_and_control_characters_are_made_safe_to_draw():
    [diff] = parse_unified_diff("@@ -1 +1 @@\n-a\r\n+b\x1b[31m\r\n", path="x.txt")
    assert diff.path == "x.txt"
    assert [line.text for line in diff.lines[1:]] == ["a", "b\ufffd[31m"]


def test_split_rows_face_each_removal_with_the_following_addition():
    files = parse_unified_diff(unified_diff("a\nb\nc\n", "a\nB\nC\nD\nc\n", "f.txt"))
    rows = split_rows(files)
    sides = [(left.text if left else None, right.text if right else None) for left, right in rows[1:]]
    assert sides == [("a", "a"), ("b", "B"), (None, "C"), (None, "D"), ("c", "c")]
    assert len(unified_rows(files)) == 7


def test_file_headers_appear_only_for_several_files():
    assert [line.kind for line in unified_rows(parse_unified_diff(TWO_FILES))][0::4] == ["file", "added"]
    single = unified_rows(parse_unified_diff(unified_diff("a\n", "b\n", "f")))
    assert all(line.kind != "file" for line in single)


def test_highlighting_colours_tokens_by_language_role():
    colours = {"keyword": Style(color="red"), "string": Style(color="green")}
    source = 'def f(): return "x"'
    [code] = highlight_lines([source], "m.py", lambda role: colours.get(role, Style()))
    assert style_at(code, source.index("def")) == colours["keyword"]
    assert style_at(code, source.index("x")) == colours["string"]
    [plain] = highlight_lines([source], "notes.unknownext", lambda role: colours.get(role, Style()))
    assert style_at(plain, source.index("def")) is None


def test_a_multiline_string_is_coloured_across_lines_of_one_side():
    string = Style(color="green")
    lines = highlight_lines(['s = """start', "middle", 'end"""'], "m.py", lambda role: string if role == "string" else Style())
    assert all(any(span.style == string for span in line.spans) for line in lines)
    assert [line.plain for line in lines] == ['s = """start', "middle", 'end"""']


async def test_view_draws_unified_then_side_by_side():
    app = PanelsApp(lambda: [DiffView.from_texts(OLD, NEW, "greet.py")])
    async with app.run_test(size=(100, 20)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        assert view.row_count == 10
        assert row_text(view, 1).startswith("1   - def greet(name):")
        assert row_text(view, 2).startswith("  1 + def greet(name: str) -> int:")
        view.split = True
        await pilot.pause()
        assert view.row_count == 8
        left, right = row_text(view, 1).split("│")
        assert left.startswith("1 - def greet(name):")
        assert right.startswith("1 + def greet(name: str) -> int:")


async def test_a_long_file_header_is_cut_in_the_middle_keeping_name_and_stats():
    deep = "opencode-demo/a/rather/deeply/nested/folder/cache-1.txt"
    diff = unified_diff("", "x\n", deep) + unified_diff("y\n", "", "b.txt")
    app = PanelsApp(lambda: [DiffView(diff)])
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        for split in (False, True):
            view.split = split
            await pilot.pause()
            header = row_text(view, 0).rstrip()
            assert header.startswith("opencode-demo/") and header.endswith("/…/cache-1.txt  +1 -0")
            assert len(header) <= view.scrollable_content_region.width


async def test_split_sides_number_lines_as_before_and_after():
    old = "one\ntwo\nthree\n"
    new = "zero\none\ntwo\nthree!\n"
    app = PanelsApp(lambda: [DiffView.from_texts(old, new, "n.txt", split=True)])
    async with app.run_test(size=(60, 8)) as pilot:
        await pilot.pause()
        view = app.query_one(DiffView)
        rows = [row_text(view, y).split("│") for y in range(1, view.row_count)]
        assert [(left.split()[:1], right.split()[:2]) for left, right in rows] == [
            ([], ["1", "+"]),
            (["1"], ["2", "one"]),
            (["2"], ["3", "two"]),
            (["3"], ["4", "+"]),
        ]


async def test_added_and_removed_rows_take_the_theme_backgrounds():
    app = PanelsApp(lambda: [DiffView.from_texts("a\n", "b\n", "f.txt")], theme="one-light")
    async with app.run_test(size=(60, 6)) as pilot:
        await pilot.pause()
        view = app.query_one(DiffView)
        backgrounds = [list(view.render_line(y))[-1].style.bgcolor.name for y in (1, 2)]
        assert backgrounds == ["#fbe4e2", "#e0f2df"]  # one-light diffRemovedBg, diffAddedBg


async def test_an_empty_diff_says_so():
    app = PanelsApp(lambda: [DiffView("")])
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        assert row_text(app.query_one(DiffView), 0).strip() == "No changes"


async def test_set_diff_replaces_the_rows():
    app = PanelsApp(lambda: [DiffView("")])
    async with app.run_test(size=(40, 8)) as pilot:
        view = app.query_one(DiffView)
        view.set_diff(unified_diff("a\n", "a\nb\n", "f.txt"))
        await pilot.pause()
        assert view.row_count == 3
        assert "+ b" in row_text(view, 2)


async def test_diff_screen_toggles_layout_with_t_and_closes_with_escape():
    app = PanelsApp()
    async with app.run_test(size=(100, 20)) as pilot:
        await app.push_screen(DiffScreen("greet.py", OLD, NEW))
        view = app.screen.query_one(DiffView)
        assert view.split is False and view.has_focus
        await pilot.press("t")
        assert view.split is True
        await pilot.press("t")
        assert view.split is False
        await pilot.press("escape")
        assert not isinstance(app.screen, DiffScreen)


async def test_diff_screen_scrolls_a_long_diff():
    old = "".join(f"line {n}\n" for n in range(200))
    new = old.replace("0\n", "0 changed\n")
    app = PanelsApp()
    async with app.run_test(size=(80, 12)) as pilot:
        await app.push_screen(DiffScreen("long.txt", old, new))
        view = app.screen.query_one(DiffView)
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_y > 0
        assert "line 190 changed" in "".join(row_text(view, y) for y in range(view.size.height))


def test_diff_screen_snapshot_unified(snap_compare):
    app = PanelsApp()

    async def open_diff(pilot) -> None:
        await app.push_screen(DiffScreen("greet.py", OLD, NEW))

    assert snap_compare(app, terminal_size=(100, 16), run_before=open_diff)


def test_diff_screen_snapshot_split(snap_compare):
    app = PanelsApp()

    async def open_diff(pilot) -> None:
        await app.push_screen(DiffScreen("greet.py", OLD, NEW, split=True))

    assert snap_compare(app, terminal_size=(100, 16), run_before=open_diff)


async def test_switching_theme_recolours_a_drawn_diff():
    app = PanelsApp(lambda: [DiffView.from_texts("a\n", "b\n", "f.txt")], theme="opencode")
    async with app.run_test(size=(60, 6)) as pilot:
        await pilot.pause()
        view = app.query_one(DiffView)

        def added_background() -> str:
            return list(view.render_line(2))[-1].style.bgcolor.name

        assert added_background() == "#20303b"  # opencode diffAddedBg
        app.theme = "one-light"
        await pilot.pause()
        assert added_background() == "#e0f2df"
