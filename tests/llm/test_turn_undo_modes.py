"""Undo, redo and the sidebar's revert put back what a file was besides its bytes: its
permission bits, and a symlink as the same symlink (never a file holding its target's
content). The real loop on the fake OpenAI server, real tools (bash included), real
files, a real SQLite store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.prompt.turn_undo import FileStep, redo_turn, undo_turn
from app.tools.revert import revert_file
from tests.llm.test_turn_undo import C_BEFORE, Chat, call

SCRIPT = b"#!/bin/sh\necho hi\n"


@pytest.fixture
def chat(make_runtime, fake_llm, workspace: Path) -> Chat:
    return Chat(make_runtime(), fake_llm, workspace)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def executable(chat: Chat) -> Path:
    script = chat.root / "run.sh"
    script.write_bytes(SCRIPT)
    script.chmod(0o755)
    return script


def link(chat: Chat) -> Path:
    """A symlink to c.py, relative, as a project keeps one."""
    alias = chat.root / "alias.py"
    alias.symlink_to("c.py")
    return alias


async def test_a_deleted_executable_and_symlink_come_back_as_they_were(chat: Chat):
    script, alias = executable(chat), link(chat)
    await chat.run("clean up", [call("delete", path="run.sh")], [call("delete", path="alias.py")])
    assert not script.exists() and not alias.is_symlink()

    step = await undo_turn(chat.runtime, chat.session_id)

    assert (script.read_bytes(), mode(script)) == (SCRIPT, 0o755)
    assert alias.is_symlink() and os.readlink(alias) == "c.py"
    assert step.files == [FileStep("alias.py", "restored"), FileStep("run.sh", "restored")]
    await redo_turn(chat.runtime, chat.session_id)
    assert not script.exists() and not alias.is_symlink()
    assert (chat.root / "c.py").read_bytes() == C_BEFORE  # the link's target is never touched


async def test_a_rewrite_that_changed_a_files_mode_is_undone_with_its_mode(chat: Chat):
    """Deleted then written again, the script is a new file of the default mode; a move
    keeps the mode (as mv does), and its undo puts the source back with it."""
    script = executable(chat)
    (chat.root / "tool.sh").write_bytes(SCRIPT)
    (chat.root / "tool.sh").chmod(0o750)
    move = "*** Begin Patch\n*** Update File: tool.sh\n*** Move to: bin/tool.sh\n@@\n-echo hi\n+echo moved\n*** End Patch\n"
    await chat.run(
        "redo the scripts",
        [call("delete", path="run.sh")],
        [call("write", filePath="run.sh", content="echo new\n")],
        [call("patch", patch=move, allow_move=True)],
    )
    assert mode(script) & 0o111 == 0
    assert mode(chat.root / "bin" / "tool.sh") == 0o750

    await undo_turn(chat.runtime, chat.session_id)

    assert (script.read_bytes(), mode(script)) == (SCRIPT, 0o755)
    assert (chat.root / "tool.sh").read_bytes() == SCRIPT and mode(chat.root / "tool.sh") == 0o750
    assert not (chat.root / "bin" / "tool.sh").exists()
    await redo_turn(chat.runtime, chat.session_id)
    assert (script.read_text(), mode(script) & 0o111) == ("echo new\n", 0)


async def test_a_chmod_the_turn_made_after_changing_the_file_is_undone(chat: Chat):
    """The mode a bash command gave after the turn's edit is not the turn's recorded
    result, yet undo puts the file back whole, mode included (content is what it guards)."""
    c = chat.root / "c.py"
    c.chmod(0o644)
    await chat.run("look at c", [call("view", filePath="c.py")])
    await chat.run(
        "make c a script",
        [call("edit", filePath="c.py", oldString="c = 3", newString="c = 4")],
        [call("bash", command="chmod +x c.py", description="make c executable")],
    )
    assert mode(c) == 0o755

    await undo_turn(chat.runtime, chat.session_id)

    assert (c.read_bytes(), mode(c)) == (C_BEFORE, 0o644)


async def test_the_sidebars_revert_puts_back_a_deleted_executable_and_symlink(chat: Chat):
    script, alias = executable(chat), link(chat)
    await chat.run("clean up", [call("delete", path="run.sh")], [call("delete", path="alias.py")])
    ctx = chat.runtime.context(chat.session_id)

    await revert_file(ctx, "run.sh", confirmed=True)
    await revert_file(ctx, "alias.py", confirmed=True)

    assert (script.read_bytes(), mode(script)) == (SCRIPT, 0o755)
    assert alias.is_symlink() and os.readlink(alias) == "c.py"
    unchanged = {c.path: c.unchanged for c in chat.runtime.store.history.list_latest_session_files(chat.session_id)}
    assert unchanged == {"alias.py": True, "run.sh": True}  # as before the session: the sidebar lists neither
