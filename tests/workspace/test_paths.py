"""Workspace path resolution on a real directory tree with real symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import OutsideWorkspaceError, ToolError
from app.workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.go").write_text("package main\n")
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return outside.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def test_relative_paths_join_the_root_and_dotdot_is_collapsed(ws: Workspace, root: Path) -> None:
    assert ws.resolve("src/main.go") == root / "src" / "main.go"
    assert ws.resolve("src/../src/./main.go") == root / "src" / "main.go"
    assert ws.resolve(".") == root


def test_dotdot_out_of_the_root_is_refused_with_a_clear_message(ws: Workspace, root: Path) -> None:
    with pytest.raises(OutsideWorkspaceError) as caught:
        ws.resolve("../outside/secret.txt")
    assert str(caught.value) == f"../outside/secret.txt is outside the workspace {root}: use a path inside it"


def test_absolute_paths_are_kept_and_checked(ws: Workspace, root: Path, outside: Path) -> None:
    assert ws.resolve(root / "src" / "main.go") == root / "src" / "main.go"
    assert ws.resolve(str(root / "src")) == root / "src"
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve(outside / "secret.txt")
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve("/etc/hosts")


def test_tilde_expands_to_home(
    ws: Workspace, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(root / "src"))
    assert ws.resolve("~/main.go") == root / "src" / "main.go"
    monkeypatch.setenv("HOME", str(outside))
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve("~/secret.txt")


def test_non_existent_nested_paths_resolve(ws: Workspace, root: Path) -> None:
    assert ws.resolve("new/deeper/file.txt") == root / "new" / "deeper" / "file.txt"
    assert ws.resolve("new/missing/../file.txt") == root / "new" / "file.txt"
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve("new/../../escape.txt")


def test_symlink_inside_pointing_outside_counts_as_outside(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside)
    (root / "file_link").symlink_to(outside / "secret.txt")
    for path in ("link/secret.txt", "link/new.txt", "file_link"):
        with pytest.raises(OutsideWorkspaceError):
            ws.resolve(path)
        with pytest.raises(OutsideWorkspaceError):
            ws.resolve_for_write(path)
        assert not ws.is_inside(path)


def test_dangling_symlink_pointing_outside_is_outside(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "dangling").symlink_to(outside / "not-yet.txt")
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve_for_write("dangling")


def test_symlink_inside_pointing_inside_resolves_to_its_target(ws: Workspace, root: Path) -> None:
    (root / "alias").symlink_to(root / "src")
    assert ws.resolve("alias/main.go") == root / "src" / "main.go"
    assert ws.resolve_for_write("alias/new.go") == root / "src" / "new.go"


def test_lexical_keeps_the_link_itself(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside / "secret.txt")
    entry = ws.lexical("./src/../link")
    assert entry == root / "link"
    assert entry.is_symlink()
    assert ws.lexical("src/main.go") == root / "src" / "main.go"


def test_lexical_refuses_paths_outside_by_name_or_by_real_parent(
    ws: Workspace, root: Path, outside: Path
) -> None:
    with pytest.raises(OutsideWorkspaceError):
        ws.lexical("../outside/secret.txt")
    (root / "out_dir").symlink_to(outside)
    with pytest.raises(OutsideWorkspaceError):
        ws.lexical("out_dir/secret.txt")


def test_symlinked_root_is_canonicalised(tmp_path: Path, root: Path) -> None:
    (tmp_path / "root_link").symlink_to(root)
    ws = Workspace(tmp_path / "root_link")
    assert ws.root == root.resolve()
    assert ws.resolve("src/main.go") == root / "src" / "main.go"
    assert ws.resolve(tmp_path / "root_link" / "src" / "main.go") == root / "src" / "main.go"
    assert ws.subject(tmp_path / "root_link" / "src" / "main.go") == "src/main.go"


def test_resolve_for_write_refuses_the_root_itself(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolError, match="is the workspace root .* itself: name a file or folder inside it"):
        ws.resolve_for_write(".")
    with pytest.raises(ToolError):
        ws.resolve_for_write(str(root))


def test_relative_is_posix_and_dot_for_the_root(ws: Workspace, root: Path, outside: Path) -> None:
    assert ws.relative(root / "src" / "main.go") == "src/main.go"
    assert ws.relative(root) == "."
    with pytest.raises(OutsideWorkspaceError):
        ws.relative(outside / "secret.txt")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("./tmp/../main.go", "main.go"),
        ("a//b", "a/b"),
        ("./a/./b/", "a/b"),
        ("src/main.go", "src/main.go"),
        (".", "."),
    ],
)
def test_subject_is_the_normalised_relative_path(ws: Workspace, given: str, expected: str) -> None:
    assert ws.subject(given) == expected


def test_subject_of_a_path_outside_is_absolute(ws: Workspace, outside: Path) -> None:
    assert ws.subject(outside / "secret.txt") == (outside / "secret.txt").as_posix()
    assert ws.subject("../outside/secret.txt") == (outside / "secret.txt").as_posix()


def test_subject_follows_links_unless_the_link_is_the_object(ws: Workspace, root: Path) -> None:
    (root / "tmp").mkdir()
    (root / "tmp" / "alias.go").symlink_to(root / "src" / "main.go")
    assert ws.subject("tmp/alias.go") == "src/main.go"
    assert ws.subject("tmp/alias.go", follow_symlinks=False) == "tmp/alias.go"


def test_is_inside(ws: Workspace, root: Path, outside: Path) -> None:
    assert ws.is_inside("src/main.go")
    assert ws.is_inside(root)
    assert ws.is_inside("not/yet/there.txt")
    assert not ws.is_inside(outside)
    assert not ws.is_inside("..")


@pytest.mark.parametrize("method", ["resolve", "resolve_for_write", "lexical", "subject", "is_inside"])
def test_paths_no_file_can_be_at_get_one_line_errors_from_every_method(
    ws: Workspace, root: Path, method: str
) -> None:
    """Every tool resolves through these, so none of them can crash on such a path."""
    (root / "loop").symlink_to("loop2")
    (root / "loop2").symlink_to("loop")
    call = getattr(ws, method)
    with pytest.raises(ToolError, match=r"^The path 'a\\x00b' contains a NUL character, which no file name"):
        call("a\0b")
    with pytest.raises(ToolError, match="^loop/x goes through a loop of symbolic links: fix or remove the link$"):
        call("loop/x")
