"""The workspace lock while a person is asked: it is let go for the question,
so another process can change files meanwhile, and the files are read again after the
answer: one changed meanwhile refuses the change instead of being overwritten."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.errors import StaleFileError
from app.permission import PermissionReply, PermissionRequested


async def test_a_file_changed_while_the_question_is_open_is_not_overwritten(make_runtime, workspace: Path) -> None:
    runtime = make_runtime(policy="interactive")
    target = workspace / "a.txt"
    target.write_text("one\ntwo\n")
    ctx = runtime.context(runtime.store.sessions.create(title="ask").id)
    questions = runtime.bus.subscribe(PermissionRequested)
    await runtime.tools["view"].call({"filePath": "a.txt"}, ctx)
    edit = asyncio.create_task(
        runtime.tools["edit"].call({"filePath": "a.txt", "oldString": "two", "newString": "TWO"}, ctx)
    )
    asked = await asyncio.wait_for(anext(aiter(questions)), 60)
    # Another opencode process takes the workspace lock and writes while the question is open.
    def other_writer() -> None:
        with runtime.workspace_lock.held():
            target.write_text("one\ntwo\nthree, from elsewhere\n")

    await asyncio.wait_for(asyncio.to_thread(other_writer), 60)
    runtime.permissions.reply(asked.request_id, PermissionReply("allow_once"))
    with pytest.raises(StaleFileError, match="a.txt changed while the permission question was open"):
        await asyncio.wait_for(edit, 60)
    assert target.read_text() == "one\ntwo\nthree, from elsewhere\n"
    assert runtime.store.history.versions(ctx.session_id, "a.txt") == []
    questions.close()
