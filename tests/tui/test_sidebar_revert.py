"""The core of the sidebar's revert (app/tools/revert.py), without the TUI: it goes through
the one change path, so it is recorded, locked and asked like any change."""

from __future__ import annotations

import pytest

from app.core.errors import PermissionDeniedError, ToolError
from app.permission import PermissionReply
from app.tools.revert import revert_file
from tests.tui.panels_harness import change


@pytest.fixture
def runtime(make_runtime):
    return make_runtime(policy="headless-yes", config={"permission": {"rules": {"edit": "allow"}}})


async def test_revert_writes_the_initial_bytes_back_and_records_a_version(runtime, session_id, workspace):
    (workspace / "crlf.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    ctx = runtime.context(session_id)
    await change(ctx, "crlf.txt", "rewritten\n")
    applied = await revert_file(ctx, "crlf.txt")
    assert (workspace / "crlf.txt").read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\n"
    assert (applied.additions, applied.deletions) == (2, 1)
    assert [v.version for v in runtime.store.history.versions(session_id, "crlf.txt")] == ["initial", "v1", "v2"]


async def test_a_file_changed_by_a_sub_agent_is_reverted_from_the_parent(runtime, session_id, workspace):
    (workspace / "shared.txt").write_text("before\n")
    child = runtime.store.sessions.create(parent_id=session_id).id
    await change(runtime.context(child), "shared.txt", "by the child\n")
    await revert_file(runtime.context(session_id), "shared.txt")
    assert (workspace / "shared.txt").read_text() == "before\n"
    [listed] = runtime.store.history.list_latest_session_files(session_id)
    assert (listed.additions, listed.deletions) == (0, 0)


async def test_nothing_to_revert_is_a_clear_error(runtime, session_id, workspace):
    (workspace / "same.txt").write_text("x\n")
    ctx = runtime.context(session_id)
    with pytest.raises(ToolError, match="never.txt was not changed in this session"):
        await revert_file(ctx, "never.txt")
    await change(ctx, "same.txt", "y\n")
    await revert_file(ctx, "same.txt")
    with pytest.raises(ToolError, match="same.txt already has its initial content"):
        await revert_file(ctx, "same.txt")
    assert len(runtime.store.history.versions(session_id, "same.txt")) == 3


async def test_a_deleted_binary_file_comes_back_byte_for_byte(runtime, session_id, workspace):
    logo = b"\x89PNG\r\n\x1a\n\x00\x00binary"
    (workspace / "logo.png").write_bytes(logo)
    ctx = runtime.context(session_id)
    await change(ctx, "logo.png", None)
    await revert_file(ctx, "logo.png")
    assert (workspace / "logo.png").read_bytes() == logo


async def test_the_user_is_asked_and_a_refusal_changes_nothing(make_runtime, permission_answers, workspace):
    # "edit" covers every write, a revert's too: its own "ask" is the stricter rule.
    rules = {"edit": "allow", "revert": "ask"}
    runtime = make_runtime(policy="interactive", config={"permission": {"rules": rules}})
    session_id = runtime.store.sessions.create().id
    (workspace / "a.txt").write_text("a\n")
    ctx = runtime.context(session_id, agent="user")
    await change(ctx, "a.txt", "b\n")
    answers = permission_answers(runtime, PermissionReply("deny"))
    with pytest.raises(PermissionDeniedError):
        await revert_file(ctx, "a.txt")
    [asked] = answers.requests
    assert (asked.tool, asked.subject, asked.preview.kind) == ("revert", "a.txt", "diff")
    assert "-b" in asked.preview.text and "+a" in asked.preview.text
    assert (workspace / "a.txt").read_text() == "b\n"


async def test_a_file_the_session_created_is_removed_and_recorded(runtime, session_id, workspace):
    ctx = runtime.context(session_id)
    await change(ctx, "new/empty.py", "")
    [listed] = runtime.store.history.list_latest_session_files(session_id)
    assert listed.created and not listed.unchanged
    applied = await revert_file(ctx, "new/empty.py")
    assert applied.deleted and not (workspace / "new" / "empty.py").exists()
    [listed] = runtime.store.history.list_latest_session_files(session_id)
    assert listed.deleted and listed.unchanged
    with pytest.raises(ToolError, match="already has its initial content"):
        await revert_file(ctx, "new/empty.py")


async def test_a_confirmed_revert_asks_nobody_again(make_runtime, permission_answers, workspace):
    runtime = make_runtime(policy="interactive", config={"permission": {"rules": {"edit": "allow"}}})
    session_id = runtime.store.sessions.create().id
    (workspace / "a.txt").write_text("a\n")
    ctx = runtime.context(session_id, agent="user")
    await change(ctx, "a.txt", "b\n")
    answers = permission_answers(runtime, PermissionReply("deny"))
    await revert_file(ctx, "a.txt", confirmed=True)
    assert answers.requests == [] and (workspace / "a.txt").read_text() == "a\n"


async def test_removing_a_created_file_is_judged_by_the_delete_rules_too(make_runtime, workspace):
    rules = {"edit": "allow", "revert": "allow", "delete": {"*.env": "deny"}}
    runtime = make_runtime(policy="interactive", config={"permission": {"rules": rules}})
    session_id = runtime.store.sessions.create().id
    ctx = runtime.context(session_id, agent="user")
    await change(ctx, "made.env", "KEY=1\n")
    with pytest.raises(PermissionDeniedError, match="the rules forbid delete on made.env"):
        await revert_file(ctx, "made.env", confirmed=True)
    assert (workspace / "made.env").exists()
