"""The single change path: permission over every subject, atomic multi-file writes with
rollback, history and file records, all in one place."""

from __future__ import annotations

import pytest

from app.core.errors import PermissionDeniedError, StaleFileError, ToolError
from app.permission import PermissionReply
from app.store import FileVersionCreated
from app.tools.changes import Change, ChangeSet, apply_changes


def plan_writes(contents: dict):
    def plan(snapshot):
        return ChangeSet(
            changes=[Change(path, data) for path, data in contents.items()],
            title="test change",
            ask_subject=", ".join(snapshot[path].rel for path in contents),
        )

    return plan


async def test_writes_record_history_initial_then_version(ctx, workspace, runtime, session_id):
    target = workspace / "a.txt"
    target.write_text("old\n")
    ctx.records.record_read(session_id, target)
    applied = await apply_changes(ctx, "write", [target], plan_writes({target: b"new\n"}), require_read=[target])
    assert target.read_text() == "new\n"
    assert [(a.path, a.additions, a.deletions) for a in applied] == [("a.txt", 1, 1)]
    versions = runtime.store.history.versions(session_id, "a.txt")
    assert [(v.version, v.content) for v in versions] == [("initial", "old\n"), ("v1", "new\n")]


async def test_a_failing_second_write_puts_the_first_file_back(ctx, workspace, runtime, session_id):
    first = workspace / "first.txt"
    first.write_text("keep me\n")
    (workspace / "blocker").write_text("a file where a directory is needed\n")
    second = workspace / "blocker" / "second.txt"
    with pytest.raises(ToolError, match="nothing was changed"):
        await apply_changes(ctx, "patch", [first, second], plan_writes({first: b"changed\n", second: b"x\n"}))
    assert first.read_text() == "keep me\n"
    assert runtime.store.history.list_latest_session_files(session_id) == []


async def test_a_deny_rule_on_any_subject_refuses_everything(make_runtime, workspace):
    runtime = make_runtime(config={"permission": {"rules": {"write": {"*.go": "deny"}}}})
    session = runtime.store.sessions.create().id
    ctx = runtime.context(session)
    ok, denied = workspace / "ok.txt", workspace / "main.go"

    def plan(snapshot):
        return ChangeSet(
            changes=[Change(ok, b"1\n"), Change(denied, b"2\n")], title="two files", ask_subject="ok.txt"
        )

    with pytest.raises(PermissionDeniedError, match="main.go"):
        await apply_changes(ctx, "write", [ok, denied], plan)
    assert not ok.exists() and not denied.exists()


async def test_an_interactive_denial_with_a_message_writes_nothing(make_runtime, workspace, permission_answers):
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    target = workspace / "b.txt"
    answers = permission_answers(runtime, PermissionReply("deny", "use tabs"))
    with pytest.raises(PermissionDeniedError, match="use tabs"):
        await apply_changes(ctx, "write", [target], plan_writes({target: b"x\n"}))
    assert not target.exists()
    assert [r.tool for r in answers.requests] == ["write"]
    assert "+x" in answers.requests[0].preview.text


async def test_unread_files_are_refused_before_any_question(ctx, workspace):
    target = workspace / "c.txt"
    target.write_text("c\n")
    with pytest.raises(StaleFileError):
        await apply_changes(ctx, "edit", [target], plan_writes({target: b"d\n"}), require_read=[target])
    assert target.read_text() == "c\n"


async def test_dry_run_describes_without_writing_or_recording(ctx, workspace, runtime, session_id):
    target = workspace / "d.txt"
    applied = await apply_changes(ctx, "patch", [target], plan_writes({target: b"new\n"}), dry_run=True)
    assert applied[0].created and applied[0].additions == 1
    assert not target.exists()
    assert runtime.store.history.list_latest_session_files(session_id) == []


async def test_deletions_are_versions_with_the_deleted_flag_and_publish_events(ctx, workspace, runtime, session_id):
    target = workspace / "gone.txt"
    target.write_text("one\ntwo\n")
    events = runtime.bus.subscribe(FileVersionCreated)
    await apply_changes(ctx, "delete", [target], plan_writes({target: None}))
    assert not target.exists()
    [change] = runtime.store.history.list_latest_session_files(session_id)
    assert (change.path, change.deleted, change.additions, change.deletions) == ("gone.txt", True, 0, 2)
    seen = [events.get_nowait(), events.get_nowait()]
    assert [(e.version, e.deleted) for e in seen] == [("initial", False), ("v1", True)]


async def test_an_unwritable_file_is_refused_for_every_tool_before_any_question(
    make_runtime, workspace, permission_answers, make_unwritable
):
    """The patch tool too: its atomic rename would replace the file whatever its mode."""
    from app.tools.patch import PatchTool

    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    locked, free = workspace / "locked.txt", workspace / "free.txt"
    locked.write_text("a\n")
    free.write_text("b\n")
    make_unwritable(locked)
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    patch = (
        "*** Begin Patch\n*** Update File: free.txt\n@@\n-b\n+B\n"
        "*** Update File: locked.txt\n@@\n-a\n+A\n*** End Patch\n"
    )
    with pytest.raises(ToolError, match=r"locked\.txt is not writable \(mode 0444\): nothing was changed"):
        await PatchTool().call({"patch": patch}, ctx)
    assert (locked.read_text(), free.read_text()) == ("a\n", "b\n")
    assert answers.requests == []

