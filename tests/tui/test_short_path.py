"""The one helper that cuts long paths: the file name stays, the middle goes."""

from __future__ import annotations

import pytest

from app.tui.short_path import shorten_path

DEMO = "opencode-demo/tmp/cache-1.txt"


@pytest.mark.parametrize(
    ("width", "shown"),
    [
        (40, DEMO),
        (29, DEMO),
        (26, "opencode-demo…/cache-1.txt"),
        (20, "opencod…/cache-1.txt"),
        (13, "…/cache-1.txt"),
        (12, "cache-1.txt"),
        (6, "…1.txt"),
        (1, "…"),
        (0, ""),
    ],
)
def test_a_long_path_keeps_its_file_name_and_loses_its_middle(width, shown):
    assert shorten_path(DEMO, width) == shown
    assert len(shorten_path(DEMO, width)) <= width


def test_a_bare_long_name_keeps_its_extension():
    assert shorten_path("a_very_long_module_name.py", 10) == "…e_name.py"


def test_whole_folders_are_kept_when_one_fits():
    deep = "src/very/deeply/nested/package/module_name.py"
    assert shorten_path(deep, 30) == "src/very/…/module_name.py"
