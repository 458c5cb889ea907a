"""The reading tools and deep trees: a FIFO, a socket or a device (or a link to one) is
never opened as a file, whichever tool meets it, and folder walks have no depth limit of
their own. Every call is bounded, so a hang fails the test instead of holding the run."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.errors import ToolError
from app.tools.delete import DeleteTool
from app.tools.glob import GlobTool
from app.tools.grep import GrepTool
from app.tools.ls import LsTool
from app.tools.revert import revert_file
from app.tools.view import ViewTool
from tests.conftest import DEEP_TREE_LEVELS

CALL_BOUND_S = 30
"""Generous: each call takes milliseconds; the bound only turns a hang into a failure."""


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


async def test_ls_lists_a_tree_a_thousand_folders_deep(deep_tree: Path, ctx) -> None:
    result = await call(LsTool(), ctx, path="t")
    lines = result.output.splitlines()
    assert lines[:3] == ["t/", "  d/", "    d/"]
    assert result.metadata["count"] == DEEP_TREE_LEVELS and result.metadata["truncated"]


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

