"""Themes: the shipped OpenCode-format files, the user's folder, broken files (a warning,
never a crash), and the colours reaching the app's CSS variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.tui.screens.diff_screen import DiffScreen
from app.tui.themes import (
    REQUIRED_KEYS,
    THEMES_DIR,
    apply_theme,
    available_themes,
    load_theme_file,
    load_themes,
    project_theme,
    user_themes_dir,
)
from app.tui.widgets.diff_view import DiffView
from tests.tui.panels_harness import PanelsApp

SHIPPED = {"opencode", "tokyonight", "catppuccin", "dracula", "gruvbox", "one-light"}


def theme_document(**overrides: object) -> dict:
    """A complete theme: every required key a def name or a colour, then the overrides."""
    colors: dict[str, object] = {key: "base" for key in REQUIRED_KEYS}
    colors.update(background="#101010", text="#eeeeee", diffAddedBg="#203020")
    colors.update(overrides)
    return {"defs": {"base": "#808080"}, "theme": colors}


def without(key: str) -> dict:
    document = theme_document()
    del document["theme"][key]
    return document


def write_theme(folder: Path, name: str, document: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def test_every_shipped_theme_loads_without_warnings_and_one_is_light():
    load = load_themes(THEMES_DIR)
    assert load.warnings == []
    assert SHIPPED <= set(load.themes)
    assert load.themes["one-light"].dark is False
    assert load.themes["opencode"].dark is True
    assert load.themes["opencode-light"].dark is False


def test_defs_and_dark_light_pairs_resolve_into_two_themes(tmp_path):
    path = write_theme(tmp_path, "pair", theme_document(primary={"dark": "base", "light": "#ff0000"}))
    dark, light = load_theme_file(path)
    assert (dark.name, light.name) == ("pair", "pair-light")
    assert (dark.primary, light.primary) == ("#808080", "#ff0000")
    assert dark.variables["diff-added-bg"] == "#203020"
    assert dark.variables["syntax-keyword"] == "#808080"
    # An optional key left out takes its fallback's colour.
    assert dark.variables["diff-added-line-number-bg"] == "#203020"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON at line 1"),
        (without("diffAdded"), "theme.diffAdded is missing"),
        (theme_document(syntaxKeyword="nosuchdef"), "theme.syntaxKeyword is 'nosuchdef'"),
        (theme_document(primary={"dark": "base"}), 'theme.primary has no "light" value'),
        ([1, 2], 'a theme file is an object with a "theme" object'),
    ],
)
def test_a_broken_file_is_skipped_with_a_warning_naming_file_and_key(tmp_path, content, expected):
    write_theme(tmp_path, "broken", content)
    write_theme(tmp_path, "fine", theme_document())
    load = load_themes(tmp_path)
    assert set(load.themes) == {"fine"}
    [warning] = load.warnings
    assert str(tmp_path / "broken.json") in warning
    assert expected in warning
    assert "\n" not in warning


def test_user_folder_comes_from_xdg_or_home():
    assert user_themes_dir({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/opencode/themes")
    assert user_themes_dir({"HOME": "/h"}) == Path("/h/.config/opencode/themes")
    assert user_themes_dir({}) is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"tui": {"theme": "dracula"}}', "dracula"),
        ('{"model": "x"}', None),
        ('{"tui": {"theme": 42}}', None),
        ('{"tui": {"theme": "*"}}', None),  # not a theme name (and never a glob pattern)
        ('{"tui": "dracula"}', None),
        ("[1]", None),
        ("{not json", None),
        (b"\xff\xfe", None),
    ],
)
def test_the_project_theme_is_read_from_the_project_file_and_anything_odd_is_none(tmp_path, content, expected):
    path = tmp_path / ".opencode.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert project_theme(tmp_path) == expected


def test_no_project_file_means_no_project_theme(tmp_path):
    assert project_theme(tmp_path) is None


async def test_user_themes_are_registered_beside_the_shipped_ones_and_win_a_clash(tmp_path):
    write_theme(tmp_path, "mine", theme_document(primary="#123456"))
    write_theme(tmp_path, "dracula", theme_document(primary="#654321"))
    write_theme(tmp_path, "broken", "{")
    app = PanelsApp(user_dir=tmp_path)
    async with app.run_test():
        assert "mine" in available_themes(app)
        assert SHIPPED <= set(available_themes(app))
        assert app.get_theme("dracula").primary == "#654321"
        assert len(app.theme_warnings) == 1 and "broken.json" in app.theme_warnings[0]


async def test_apply_theme_switches_the_css_variables_and_refuses_unknown_names():
    app = PanelsApp(theme="opencode")
    async with app.run_test() as pilot:
        assert apply_theme(app, "one-light") is True
        await pilot.pause()
        assert app.theme == "one-light"
        assert app.theme_variables["diff-added-bg"] == "#e0f2df"
        assert apply_theme(app, "no-such-theme") is False
        assert app.theme == "one-light"


async def test_panels_css_works_under_a_builtin_theme_without_our_variables():
    app = PanelsApp(lambda: [DiffView("@@ -1 +1 @@\n-a\n+b\n", path="x.py")], theme="textual-dark")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"
        assert app.query_one(DiffView).row_count == 3


def test_light_theme_snapshot(snap_compare):
    app = PanelsApp(theme="one-light")

    async def open_diff(pilot) -> None:
        await app.push_screen(
            DiffScreen("greet.py", 'def greet():\n    return "hi"\n', 'def greet(name):\n    return f"hi {name}"\n')
        )

    assert snap_compare(app, terminal_size=(80, 10), run_before=open_diff)
