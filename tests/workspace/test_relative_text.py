"""Workspace.relative reads a path's text: the same answers as pathlib's relative_to,
for a workspace anywhere, the filesystem root included."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from app.core.errors import OutsideWorkspaceError
from app.workspace import Workspace

NAMES = ["w", "x", "..", "wx", ""]


@pytest.mark.parametrize("root", ["/", "/tmp"])
def test_relative_agrees_with_relative_to(root: str) -> None:
    workspace = Workspace(Path(root))
    for size in range(4):
        for names in itertools.product(NAMES, repeat=size):
            for lead in ("/", "//", "/tmp/"):
                path = Path(lead + "/".join(names))
                if path.is_relative_to(workspace.root):
                    assert workspace.relative(path) == path.relative_to(workspace.root).as_posix(), path
                else:
                    with pytest.raises(OutsideWorkspaceError):
                        workspace.relative(path)


def test_a_sibling_whose_name_starts_like_the_root_is_outside(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "w")
    assert workspace.relative(tmp_path / "w") == "."
    assert workspace.relative(tmp_path / "w" / "a" / "b.py") == "a/b.py"
    with pytest.raises(OutsideWorkspaceError):
        workspace.relative(tmp_path / "wx" / "a.py")
