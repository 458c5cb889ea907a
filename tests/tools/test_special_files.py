"""The tools and special files and deep trees: a FIFO, a socket or a device (or a link to
one) is never opened as a file nor replaced or removed, whichever tool meets it, and
folder walks have no depth limit of their own. Every call is bounded, so a hang fails the
test instead of holding the run."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import ToolError
from app.tools.delete import DeleteTool
from app.tools.edit import EditTool
from app.tools.glob import GlobTool
from app.tools.grep import GrepTool
from app.tools.ls import MAX_CHARS, LsTool
from app.tools.multiedit import MultiEditTool
from app.tools.patch import PatchTool
from app.tools.revert import revert_file
from app.tools.view import ViewTool
from app.tools.write import WriteTool
from tests.conftest import DEEP_TREE_LEVELS

CALL_BOUND_S = 300
"""Generous: the bound only turns a hang into a failure (a deep tree's delete takes seconds on a busy machine)."""


async def call(tool, ctx, **arguments):
    return await asyncio.wait_for(tool.call(arguments, ctx), CALL_BOUND_S)


@pytest.fixture
def specials(workspace: Path) -> Iterator[Path]:
    """A FIFO, a socket (bound while the test runs), and links to /dev/zero and /dev/urandom."""
    (workspace / "notes.txt").write_text("hello\n")
    (workspace / "sub").mkdir()
    os.mkfifo(workspace / "fifo")
    os.mkfifo(workspace / "sub" / "fifo2")
    (workspace / "zero").symlink_to("/dev/zero")
    (workspace / "sub" / "random").symlink_to("/dev/urandom")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workspace / "sock"))
    yield workspace
    listener.close()


@pytest.mark.parametrize(
    ("path", "kind"),
    [("fifo", "a FIFO"), ("sock", "a socket"), ("zero", "a character device"), ("sub/random", "a character device")],
)
@pytest.mark.parametrize("tool", [ViewTool(), GrepTool(), GrepTool("python")], ids=["view", "grep-rg", "grep-python"])
async def test_a_special_file_named_explicitly_is_refused_by_its_type(specials, ctx, tool, path: str, kind: str) -> None:
    arguments = {"filePath": path} if tool.name == "view" else {"pattern": "hello", "path": path}
    with pytest.raises(ToolError) as refused:
        await call(tool, ctx, **arguments)
    assert f" is {kind}, not a" in str(refused.value)


@pytest.mark.parametrize("tool", [GrepTool(), GrepTool("python")], ids=["rg", "python"])
async def test_a_search_of_the_workspace_passes_special_files_by(specials, ctx, tool) -> None:
    result = await call(tool, ctx, pattern="hello")
    assert result.metadata["file_count"] == 1 and "notes.txt" in result.output


async def test_glob_leaves_special_files_out_and_says_so(specials, ctx) -> None:
    result = await call(GlobTool(), ctx, pattern="**/*")
    listed, note = result.output.split("\n\n")
    assert listed == "notes.txt"
    assert note == (
        "(Left out 5 matching pipes, sockets or devices, which no tool reads: fifo, sock, sub/fifo2, sub/random, zero)"
    )


async def test_ls_marks_special_files(specials, ctx) -> None:
    result = await call(LsTool(), ctx)
    assert result.output.splitlines() == [
        "./",
        "  sub/",
        "    fifo2 (a FIFO, which no tool reads)",
        "    random (a character device, which no tool reads)",
        "  fifo (a FIFO, which no tool reads)",
        "  notes.txt",
        "  sock (a socket, which no tool reads)",
        "  zero (a character device, which no tool reads)",
    ]


@pytest.fixture
def device(workspace: Path) -> Path:
    """A character device node like /dev/null inside the workspace (mknod needs root)."""
    node = workspace / "dev"
    try:
        os.mknod(node, stat.S_IFCHR | 0o644, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    return node


def _patch(section: str) -> dict[str, object]:
    return {"patch": f"*** Begin Patch\n{section}\n*** End Patch\n", "allow_delete": True}


CHANGES = {
    "write": (WriteTool(), lambda path: {"filePath": path, "content": "text\n"}),
    "edit": (EditTool(), lambda path: {"filePath": path, "oldString": "", "newString": "text\n"}),
    "multiedit": (MultiEditTool(), lambda path: {"filePath": path, "edits": [{"oldString": "a", "newString": "b"}]}),
    "patch-add": (PatchTool(), lambda path: _patch(f"*** Add File: {path}\n+text")),
    "patch-update": (PatchTool(), lambda path: _patch(f"*** Update File: {path}\n@@\n-a\n+b")),
    "patch-delete": (PatchTool(), lambda path: _patch(f"*** Delete File: {path}")),
    "delete": (DeleteTool(), lambda path: {"path": path}),
}


@pytest.mark.parametrize(("path", "kind"), [("fifo", "a FIFO"), ("sock", "a socket"), ("dev", "a character device")])
@pytest.mark.parametrize("change", list(CHANGES))
async def test_no_tool_replaces_or_removes_a_special_file(specials, device, ctx, change: str, path: str, kind: str) -> None:
    """The rename would put a regular file in its place (a write), and history cannot keep
    it (a delete): either way the change could not be taken back, so it is refused."""
    tool, arguments = CHANGES[change]
    before = os.lstat(specials / path)
    with pytest.raises(ToolError) as refused:
        await call(tool, ctx, **arguments(path))
    message = str(refused.value)
    if tool.name == "patch":
        message = json.loads(message)["error"]
    assert message.startswith(f"{path} is {kind}, ")
    assert "not a regular file" in message or "which this tool does not remove" in message
    after = os.lstat(specials / path)
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)
    assert ctx.history.get_by_path_and_session(path, ctx.session_id) is None


async def test_a_revert_onto_a_fifo_put_where_the_file_was_is_refused(workspace: Path, ctx) -> None:
    await call(WriteTool(), ctx, filePath="made.txt", content="made\n")
    (workspace / "made.txt").unlink()
    os.mkfifo(workspace / "made.txt")
    with pytest.raises(ToolError, match=r"^made.txt is a FIFO, not a regular file: revert changes regular files only"):
        await asyncio.wait_for(revert_file(ctx, "made.txt", confirmed=True), CALL_BOUND_S)
    assert stat.S_ISFIFO(os.lstat(workspace / "made.txt").st_mode)


async def test_ls_lists_a_tree_a_thousand_folders_deep_within_its_size_cap(deep_tree: Path, ctx) -> None:
    """1,000 entries of it, each indented two spaces more, would be a megabyte of spaces."""
    result = await call(LsTool(), ctx, path="t")
    listing, note = result.output.split("\n\n")
    lines = listing.splitlines()
    assert lines[:3] == ["t/", "  d/", "    d/"]
    assert len(listing) <= MAX_CHARS
    shown = len(lines) - 1
    assert result.metadata == {"path": "t", "count": shown, "found": DEEP_TREE_LEVELS + 1, "truncated": True}
    assert note == (
        f"(Listing cut at {MAX_CHARS} characters, the tree being deep: {shown} entries shown, "
        f"{DEEP_TREE_LEVELS + 1 - shown} left out. List a subfolder, add ignore patterns, or use glob to find specific files)"
    )


async def test_delete_removes_a_tree_a_thousand_folders_deep_and_keeps_its_file(deep_tree: Path, ctx) -> None:
    result = await call(DeleteTool(), ctx, path="t")
    assert result.output.startswith("1 file deleted, 1 line removed (t/):")
    assert not deep_tree.exists()
    deep_file = "t/" + "d/" * DEEP_TREE_LEVELS + "f.txt"
    assert ctx.history.get_by_path_and_session(deep_file, ctx.session_id).deleted


async def test_a_deleted_tree_a_thousand_folders_deep_is_put_back_by_a_revert(deep_tree: Path, ctx) -> None:
    rel = "t/" + "d/" * DEEP_TREE_LEVELS + "f.txt"
    await call(DeleteTool(), ctx, path="t")
    assert not deep_tree.exists()

    await asyncio.wait_for(revert_file(ctx, rel, confirmed=True), CALL_BOUND_S)

    assert (deep_tree.parent / rel).read_text() == "deep\n"


@pytest.mark.parametrize("tail", ["", "\nnext line\n"], ids=["one line", "then another"])
async def test_a_line_of_megabytes_is_read_a_megabyte_at_most(workspace: Path, ctx, tail: str) -> None:
    (workspace / "one-line.txt").write_bytes("é".encode() * (1024 * 1024 + 1) + tail.encode())  # 2 MB + 2 bytes
    result = await call(ViewTool(), ctx, filePath="one-line.txt")
    first = result.output.splitlines()[0]
    # 1 MB read: 524,288 two-byte characters, 2,000 shown; the other 1 MB + 2 bytes left unread
    assert first.endswith("é... [line cut: 522288 more characters, then 1048578 bytes not read]")
    assert result.output.splitlines()[1:] == (["     2\tnext line"] if tail else [])

