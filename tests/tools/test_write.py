"""The write tool on real files: create, overwrite after a read, bytes kept as the file
had them (BOM, CRLF, mode), refusals that leave the disk as it was, history and events."""

from __future__ import annotations

import codecs
import os
import stat

import pytest

from app.core.errors import (
    BinaryFileError,
    OutsideWorkspaceError,
    PermissionDeniedError,
    StaleFileError,
    ToolError,
)
from app.permission import PermissionReply
from app.store import FileVersionCreated
from app.tools.write import WriteTool

write = WriteTool()


def versions(runtime, session_id, rel):
    return [(v.version, v.content, v.deleted) for v in runtime.store.history.versions(session_id, rel)]


async def test_creates_a_new_file_and_its_folders_without_a_read(ctx, workspace, runtime, session_id):
    result = await write.call({"filePath": "src/pkg/new.py", "content": "a = 1\nb = 2\n"}, ctx)

    assert (workspace / "src/pkg/new.py").read_bytes() == b"a = 1\nb = 2\n"
    assert result.output == "Created src/pkg/new.py (2 lines)."
    assert result.metadata["created"] is True
    assert (result.metadata["additions"], result.metadata["deletions"]) == (2, 0)
    assert "+a = 1" in result.metadata["diff"]
    assert versions(runtime, session_id, "src/pkg/new.py") == [
        ("initial", "", True),
        ("v1", "a = 1\nb = 2\n", False),
    ]


async def test_overwrites_a_file_read_before_and_reports_the_diff(ctx, seen_file, runtime, session_id):
    path = seen_file("notes.txt", "one\ntwo\n")

    result = await write.call({"filePath": "notes.txt", "content": "one\nthree\n"}, ctx)

    assert path.read_text() == "one\nthree\n"
    assert result.output == "Wrote notes.txt: +1 -1 lines."
    assert result.metadata["path"] == "notes.txt"
    assert "-two\n+three\n" in result.metadata["diff"]
    assert versions(runtime, session_id, "notes.txt") == [
        ("initial", "one\ntwo\n", False),
        ("v1", "one\nthree\n", False),
    ]


async def test_an_existing_file_never_read_is_refused(ctx, workspace):
    path = workspace / "old.txt"
    path.write_text("keep\n")
    with pytest.raises(StaleFileError, match="read old.txt with the view tool"):
        await write.call({"filePath": "old.txt", "content": "lost\n"}, ctx)
    assert path.read_text() == "keep\n"


async def test_a_file_changed_on_disk_since_the_read_is_refused(ctx, seen_file):
    path = seen_file("race.txt", "mine\n")
    path.write_text("someone else's longer text\n")
    with pytest.raises(StaleFileError, match="read it again"):
        await write.call({"filePath": "race.txt", "content": "mine, changed\n"}, ctx)
    assert path.read_text() == "someone else's longer text\n"


async def test_keeps_the_bom_and_crlf_of_the_existing_file(ctx, seen_file):
    path = seen_file("win.cs", codecs.BOM_UTF8 + b"old\r\nlines\r\n")
    await write.call({"filePath": "win.cs", "content": "new\nlines\nno final newline"}, ctx)
    assert path.read_bytes() == codecs.BOM_UTF8 + b"new\r\nlines\r\nno final newline"


async def test_a_bom_sent_in_the_content_is_not_doubled(ctx, seen_file):
    path = seen_file("bom.txt", codecs.BOM_UTF8 + b"old\n")
    await write.call({"filePath": "bom.txt", "content": "\ufeffnew\n"}, ctx)
    assert path.read_bytes() == codecs.BOM_UTF8 + b"new\n"


async def test_a_new_file_keeps_the_line_endings_of_its_content(ctx, workspace):
    await write.call({"filePath": "run.bat", "content": "@echo off\r\necho hi\r\n"}, ctx)
    assert (workspace / "run.bat").read_bytes() == b"@echo off\r\necho hi\r\n"


async def test_keeps_the_permission_bits(ctx, seen_file):
    path = seen_file("run.sh", "#!/bin/sh\necho old\n")
    path.chmod(0o750)  # the fingerprint (mtime, size, inode) is unchanged: still fresh
    await write.call({"filePath": "run.sh", "content": "#!/bin/sh\necho new\n"}, ctx)
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert path.read_text() == "#!/bin/sh\necho new\n"


async def test_the_same_content_writes_nothing(ctx, seen_file, runtime, session_id):
    path = seen_file("same.txt", "same\n")
    before = path.stat().st_mtime_ns
    result = await write.call({"filePath": "same.txt", "content": "same\n"}, ctx)
    assert result.output == "same.txt already has exactly this content: nothing was written."
    assert path.stat().st_mtime_ns == before
    assert versions(runtime, session_id, "same.txt") == []


async def test_refuses_a_directory(ctx, workspace):
    (workspace / "pkg").mkdir()
    with pytest.raises(ToolError, match="Path is a directory, not a file: pkg"):
        await write.call({"filePath": "pkg", "content": "x"}, ctx)
    assert (workspace / "pkg").is_dir()


async def test_refuses_a_binary_file(ctx, seen_file):
    path = seen_file("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0")
    with pytest.raises(BinaryFileError, match="logo.png is a binary file"):
        await write.call({"filePath": "logo.png", "content": "text"}, ctx)
    assert path.read_bytes() == b"\x89PNG\r\n\x1a\n\0\0\0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"filePath": "", "content": "x"}, "filePath is required"),
        ({"content": "x"}, "filePath is required"),
        ({"filePath": "a.txt"}, "content is required"),
        ({"filePath": "a.txt", "content": "a\0b"}, "content contains a NUL character"),
        ({"filePath": "a.txt", "content": "bad \ud800 text"}, "unpaired surrogate"),
    ],
)
async def test_bad_arguments_are_refused_with_the_reason(ctx, workspace, args, message):
    with pytest.raises(ToolError, match=message):
        await write.call(args, ctx)
    assert not (workspace / "a.txt").exists()


async def test_a_path_outside_the_workspace_is_refused(ctx, workspace):
    with pytest.raises(OutsideWorkspaceError, match="outside the workspace"):
        await write.call({"filePath": "../escape.txt", "content": "x"}, ctx)
    assert not (workspace.parent / "escape.txt").exists()


async def test_a_symlink_leading_outside_is_refused_and_its_target_kept(ctx, workspace, tmp_path):
    target = tmp_path / "outside.txt"
    target.write_text("keep\n")
    (workspace / "link.txt").symlink_to(target)
    ctx.records.record_read(ctx.session_id, target)
    with pytest.raises(OutsideWorkspaceError, match="link.txt is outside the workspace"):
        await write.call({"filePath": "link.txt", "content": "x"}, ctx)
    assert target.read_text() == "keep\n"


@pytest.mark.parametrize(
    ("file_path", "message"),
    [
        ("docs/", "filePath docs/ ends with '/', so it names a folder: give the path of a file"),
        ("a\0b.txt", "contains a NUL character, which no file name can hold"),
        ("notes.txt/inner.txt", "Cannot use notes.txt/inner.txt: notes.txt is a file, not a folder"),
        ("notes.txt/deeper/inner.txt", "notes.txt is a file, not a folder"),
        ("n" * 300 + ".txt", "Cannot use n+\\.txt: File name too long"),
    ],
    ids=["trailing-slash", "nul", "under-a-file", "deep-under-a-file", "name-too-long"],
)
async def test_a_path_no_file_can_be_at_is_refused_before_anything_is_written(
    ctx, workspace, file_path, message
):
    (workspace / "notes.txt").write_text("keep\n")
    with pytest.raises(ToolError, match=message):
        await write.call({"filePath": file_path, "content": "x\n"}, ctx)
    assert sorted(path.name for path in workspace.iterdir() if not path.name.startswith(".")) == ["notes.txt"]
    assert (workspace / "notes.txt").read_text() == "keep\n"


async def test_publishes_the_new_version(ctx, runtime, session_id):
    events = runtime.bus.subscribe(FileVersionCreated)
    await write.call({"filePath": "e.txt", "content": "e\n"}, ctx)
    seen = [events.get_nowait(), events.get_nowait()]
    events.close()
    assert [(e.session_id, e.path, e.version, e.deleted) for e in seen] == [
        (session_id, "e.txt", "initial", True),
        (session_id, "e.txt", "v1", False),
    ]


async def test_a_deny_rule_writes_nothing(make_runtime, workspace):
    runtime = make_runtime(config={"permission": {"rules": {"write": {"*.lock": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(PermissionDeniedError, match="forbid write on deps.lock"):
        await write.call({"filePath": "deps.lock", "content": "x\n"}, ctx)
    assert not (workspace / "deps.lock").exists()
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


async def test_the_user_is_asked_about_the_relative_path_and_their_denial_is_passed_on(
    make_runtime, workspace, permission_answers
):
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime, PermissionReply("deny", "put it under docs/"))
    with pytest.raises(PermissionDeniedError, match="put it under docs/"):
        await write.call({"filePath": str(workspace / "README.md"), "content": "# hi\n"}, ctx)
    assert not (workspace / "README.md").exists()
    [request] = answers.requests
    assert (request.tool, request.subject) == ("write", "README.md")
    assert "+# hi" in request.preview.text


# --- cases from OpenCode's edit suite ---------------------------------------------------
# OpenCode's write tests (packages/opencode/test/tool/write.test.ts), in our own data.
# Its "binary-safe content" case (a NUL written) is refused here on purpose: see
# test_bad_arguments_are_refused_with_the_reason.


async def test_a_new_file_gets_the_usual_permission_bits(ctx, workspace):
    umask = os.umask(0)
    os.umask(umask)
    await write.call({"filePath": "secrets.json", "content": '{"token": "x"}'}, ctx)
    assert stat.S_IMODE((workspace / "secrets.json").stat().st_mode) == 0o644 & ~umask


async def test_empty_content_creates_an_empty_file(ctx, workspace):
    result = await write.call({"filePath": "empty.txt", "content": ""}, ctx)
    assert (workspace / "empty.txt").read_bytes() == b""
    assert result.output == "Created empty.txt (0 lines)."


async def test_the_title_is_the_relative_path_of_an_absolute_one(ctx, workspace):
    target = workspace / "src" / "ui" / "Button.tsx"
    result = await write.call({"filePath": str(target), "content": "export const Button = 1\n"}, ctx)
    assert (result.title, result.metadata["path"]) == ("src/ui/Button.tsx", "src/ui/Button.tsx")


async def test_an_unwritable_file_is_refused(ctx, seen_file, make_unwritable):
    # OpenCode fails where the system denies writing; an atomic rename would not notice.
    path = seen_file("frozen.txt", "keep\n")
    make_unwritable(path)
    with pytest.raises(ToolError, match=r"^frozen.txt is not writable \(mode 0444\): nothing was changed"):
        await write.call({"filePath": "frozen.txt", "content": "lost\n"}, ctx)
    assert path.read_text() == "keep\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
