"""parts_of: the names a base-relative path is walked by, whatever way it is spelled."""

from __future__ import annotations

import pytest

from app.workspace.beneath import parts_of


@pytest.mark.parametrize(
    ("rel", "parts"),
    [
        ("src/app.py", ("src", "app.py")),
        ("app.py", ("app.py",)),
        ("", ()),
        (".", ()),
        ("./src/./app.py", ("src", "app.py")),
        ("src//app.py", ("src", "app.py")),
        ("src/", ("src",)),
        ("...", ("...",)),
        (".hidden/..x", (".hidden", "..x")),
    ],
)
def test_names_of_a_path(rel: str, parts: tuple[str, ...]) -> None:
    assert parts_of(rel) == parts


@pytest.mark.parametrize("rel", ["../outside", "src/../../x", "..", "/etc/passwd"])
def test_a_path_leaving_the_base_is_refused(rel: str) -> None:
    with pytest.raises(ValueError, match="not a path below the base folder"):
        parts_of(rel)
