"""The delete tool (spec 000) on real files, a real SQLite history and the
real permission service: every edge case of the spec, the directory rule checks, and
the maxFiles approval."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from app.core.errors import OutsideWorkspaceError, PermissionDeniedError, ToolError
from app.permission import PermissionReply, PermissionRequested
from app.store import FileVersionCreated
from app.tools.changes import Change, ChangeSet, apply_changes
from app.tools.delete import DeleteTool

SPEC_RULES = {"*": "ask", "tmp/*": "allow", "*.go": "deny"}
ALLOW = PermissionReply("allow_once")


@pytest.fixture
def tool() -> DeleteTool:
    return DeleteTool()


def versions(runtime, session_id: str, rel: str) -> list[tuple[str, str, bool]]:
    return [(v.version, v.content, v.deleted) for v in runtime.store.history.versions(session_id, rel)]


def rules(delete_rules: dict, **extra) -> dict:
    return {"permission": {"rules": {"delete": delete_rules}}, **extra}


def interactive(make_runtime, config: dict | None = None):
    runtime = make_runtime(policy="interactive", config=config)
    return runtime, runtime.context(runtime.store.sessions.create(title="t").id)


# --- files -----------------------------------------------------------------------------


async def test_a_file_is_removed_and_history_keeps_its_content_then_a_deleted_version(
    write_files, tool, ctx, runtime, session_id, workspace
):
    write_files({"notes.txt": "one\ntwo\nthree\n"})
    events = runtime.bus.subscribe(FileVersionCreated)
    result = await tool.call({"path": "notes.txt"}, ctx)
    assert not (workspace / "notes.txt").exists()
    assert result.output == "1 file deleted, 3 lines removed (notes.txt)."
    assert versions(runtime, session_id, "notes.txt") == [
        ("initial", "one\ntwo\nthree\n", False),
        ("v1", "", True),
    ]
    assert [(e.path, e.version, e.deleted) for e in (events.get_nowait(), events.get_nowait())] == [
        ("notes.txt", "initial", False),
        ("notes.txt", "v1", True),
    ]
    meta = result.metadata
    assert (meta["kind"], meta["path"], meta["deleted_count"], meta["removed_lines"]) == (
        "file",
        "notes.txt",
        1,
        3,
    )
    assert meta["files"] == [{"path": "notes.txt", "lines": 3}]
    assert meta["diff"].startswith("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +0,0 @@\n-one\n")
    assert ctx.records.last_write(session_id, workspace / "notes.txt") is not None


async def test_a_file_changed_earlier_in_the_session_gets_the_next_version(
    tool, ctx, runtime, session_id, workspace
):
    target = workspace / "foo.go"
    target.write_text("package old\n")

    def edit(snapshot):
        return ChangeSet([Change(target, b"package new\nfunc f() {}\n")], title="edit", ask_subject="foo.go")

    await apply_changes(ctx, "edit", [target], edit)
    await tool.call({"path": "foo.go"}, ctx)
    assert versions(runtime, session_id, "foo.go") == [
        ("initial", "package old\n", False),
        ("v1", "package new\nfunc f() {}\n", False),
        ("v2", "", True),
    ]
    [change] = runtime.store.history.list_latest_session_files(session_id)
    assert (change.deleted, change.additions, change.deletions) == (True, 0, 1)


async def test_an_empty_file_is_deleted_and_recorded(write_files, tool, ctx, runtime, session_id, workspace):
    write_files({"empty.txt": ""})
    result = await tool.call({"path": "empty.txt"}, ctx)
    assert result.output == "1 file deleted, 0 lines removed (empty.txt)."
    assert versions(runtime, session_id, "empty.txt") == [("initial", "", False), ("v1", "", True)]


async def test_a_path_spelled_with_dot_dot_is_recorded_under_its_plain_name(
    write_files, tool, ctx, runtime, session_id, workspace
):
    write_files({"a.txt": "a\n", "sub/keep.txt": "k\n"})
    await tool.call({"path": "./sub/../a.txt"}, ctx)
    assert [c.path for c in runtime.store.history.list_latest_session_files(session_id)] == ["a.txt"]


# --- refused before anything is asked --------------------------------------------------


async def test_a_missing_path_is_an_error_without_a_question_or_history(
    tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, ALLOW)
    with pytest.raises(ToolError, match="File or directory does not exist: missing.txt"):
        await tool.call({"path": "missing.txt"}, ctx)
    with pytest.raises(ToolError, match="does not exist: missing/inner.txt"):
        await tool.call({"path": "missing/inner.txt"}, ctx)
    await asyncio.sleep(0)
    assert answers.requests == []
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


@pytest.mark.parametrize("outside", ["../outside.txt", "/etc/hosts"])
async def test_outside_the_workspace_is_a_hard_block_even_when_rules_allow_it(
    tool, make_runtime, workspace, outside
):
    (workspace.parent / "outside.txt").write_text("keep\n")
    runtime = make_runtime(config=rules({"*": "allow", "/*": "allow", "../*": "allow"}))
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(OutsideWorkspaceError) as err:
        await tool.call({"path": outside}, ctx)
    # Spec 000's message first, then which path and why.
    assert str(err.value).startswith(
        f"Cannot delete files outside the working directory: {outside} is outside"
    )
    assert (workspace.parent / "outside.txt").read_text() == "keep\n"
    assert Path("/etc/hosts").exists()


async def test_a_file_reached_through_a_symlinked_folder_pointing_outside_is_outside(tool, ctx, workspace):
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("s\n")
    (workspace / "door").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutsideWorkspaceError):
        await tool.call({"path": "door/secret.txt"}, ctx)
    assert (elsewhere / "secret.txt").exists()


@pytest.mark.parametrize("root", [".", "sub/..", "./"])
async def test_the_workspace_root_itself_cannot_be_deleted(write_files, tool, ctx, workspace, root):
    write_files({"sub/a.txt": "a\n"})
    with pytest.raises(ToolError, match="workspace root itself"):
        await tool.call({"path": root}, ctx)
    assert (workspace / "sub" / "a.txt").exists()


async def test_the_session_database_folder_is_never_deleted(tool, ctx, runtime, workspace):
    data_dir = runtime.config.data_dir(workspace)
    with pytest.raises(ToolError, match="opencode's own data"):
        await tool.call({"path": data_dir.name}, ctx)
    with pytest.raises(ToolError, match="opencode's own data"):
        await tool.call({"path": f"{data_dir.name}/opencode.db"}, ctx)
    assert (data_dir / "opencode.db").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "  "}, "path is required"),
        ({}, "path is required"),
        ({"filePath": "a.txt"}, "filePath is not a parameter"),
        ({"path": "a\0b"}, "contains a NUL character, which no file name can hold"),
        ({"path": "n" * 300}, "File name too long; nothing was deleted"),
        ({"path": "loop/x"}, "loop/x goes through a loop of symbolic links: fix or remove the link"),
    ],
)
async def test_bad_arguments_get_one_line_errors(tool, ctx, workspace, arguments, message):
    (workspace / "loop").symlink_to("loop2")
    (workspace / "loop2").symlink_to("loop")
    with pytest.raises(ToolError, match=message) as err:
        await tool.call(arguments, ctx)
    assert "\n" not in str(err.value)


# --- directories -----------------------------------------------------------------------


async def test_nested_directories_record_every_file_and_leave_nothing(
    write_files, tool, ctx, runtime, session_id, workspace
):
    write_files(
        {
            "tmp/a.txt": "a\n",
            "tmp/sub/b.py": "b1\nb2\n",
            "tmp/sub/deeper/c.md": "c1\nc2\nc3",
            "keep.txt": "k\n",
        },
    )
    (workspace / "tmp" / "sub" / "empty").mkdir()
    result = await tool.call({"path": "tmp"}, ctx)
    assert not (workspace / "tmp").exists() and (workspace / "keep.txt").exists()
    assert result.output.splitlines() == [
        "3 files deleted, 6 lines removed (tmp/):",
        "- tmp/a.txt (1 line)",
        "- tmp/sub/b.py (2 lines)",
        "- tmp/sub/deeper/c.md (3 lines)",
    ]
    assert result.metadata["kind"] == "directory" and result.metadata["diff"] == ""
    assert result.metadata["files"] == [
        {"path": "tmp/a.txt", "lines": 1},
        {"path": "tmp/sub/b.py", "lines": 2},
        {"path": "tmp/sub/deeper/c.md", "lines": 3},
    ]
    assert versions(runtime, session_id, "tmp/sub/deeper/c.md") == [
        ("initial", "c1\nc2\nc3", False),
        ("v1", "", True),
    ]


async def test_the_session_listing_shows_every_deleted_file_with_all_removal_stats(
    write_files, tool, ctx, runtime, session_id, workspace
):
    write_files({"tmp/a.txt": "1\n2\n", "tmp/b/c.txt": "3\n", "README.md": "r\n"})
    await tool.call({"path": "tmp"}, ctx)
    await tool.call({"path": "README.md"}, ctx)
    listing = runtime.store.history.list_latest_session_files(session_id)
    assert [(c.path, c.deleted, c.additions, c.deletions, c.latest_content) for c in listing] == [
        ("README.md", True, 0, 1, ""),
        ("tmp/a.txt", True, 0, 2, ""),
        ("tmp/b/c.txt", True, 0, 1, ""),
    ]


async def test_an_empty_directory_is_asked_about_and_removed_without_history(
    tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    (workspace / "empty" / "only_folders").mkdir(parents=True)
    answers = permission_answers(runtime, ALLOW)
    result = await tool.call({"path": "empty"}, ctx)
    assert result.output == "Deleted empty directory: empty"
    assert result.metadata["kind"] == "empty_directory" and result.metadata["files"] == []
    assert not (workspace / "empty").exists()
    assert [r.title for r in answers.requests] == ["Delete empty directory empty/"]
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


async def test_binary_files_inside_a_directory_are_deleted_and_recorded(
    write_files, tool, ctx, runtime, session_id, workspace
):
    write_files(
        {"assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0binary", "assets/late.bin": b"a" * 9000 + b"\xff"},
    )
    result = await tool.call({"path": "assets"}, ctx)
    assert not (workspace / "assets").exists()
    assert result.metadata["files"] == [
        {"path": "assets/late.bin", "lines": 0},
        {"path": "assets/logo.png", "lines": 0},
    ]
    [(_, initial, _), deleted] = versions(runtime, session_id, "assets/logo.png")
    assert initial.startswith("(binary file") and deleted == ("v1", "", True)
    assert versions(runtime, session_id, "assets/late.bin")[0][1] == "(binary file, 9001 bytes)"


async def test_a_socket_or_fifo_inside_a_directory_refuses_the_whole_delete(
    write_files, tool, ctx, workspace
):
    write_files({"run/a.txt": "a\n"})
    os.mkfifo(workspace / "run" / "pipe")
    with pytest.raises(ToolError, match="run/pipe is a FIFO, which this tool does not remove"):
        await tool.call({"path": "run"}, ctx)
    assert (workspace / "run" / "a.txt").exists()


async def test_a_folder_that_cannot_be_listed_refuses_the_delete(
    write_files, tool, ctx, workspace, monkeypatch
):
    write_files({"locked/a.txt": "a\n", "locked/inner/b.txt": "b\n"})
    real_scandir = os.scandir

    def scandir(path):  # the OS refusing to list one folder (tests run as root)
        if Path(path).name == "inner":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(ToolError, match="Cannot list locked/inner: Permission denied; nothing was deleted"):
        await tool.call({"path": "locked"}, ctx)
    assert (workspace / "locked" / "a.txt").exists()


async def test_a_name_that_is_not_utf8_refuses_the_delete_in_one_line(write_files, tool, ctx, workspace):
    """History keys files by their name as text: one it cannot hold is never removed unrecorded."""
    write_files({"raw/ok.txt": "ok\n"})
    odd = os.fsencode(workspace / "raw") + b"/\xff.txt"
    with open(odd, "wb") as handle:
        handle.write(b"kept\n")
    with pytest.raises(ToolError, match=r"^The name raw/\\xff.txt is not UTF-8 text, which the session's history"):
        await tool.call({"path": "raw"}, ctx)
    assert (workspace / "raw" / "ok.txt").exists()
    with open(odd, "rb") as handle:
        assert handle.read() == b"kept\n"


# --- symlinks --------------------------------------------------------------------------


async def test_a_symlink_to_a_file_outside_is_removed_and_its_target_kept(
    tool, ctx, runtime, session_id, workspace
):
    target = workspace.parent / "outside.txt"
    target.write_text("precious\n")
    (workspace / "hosts_link").symlink_to(target)
    result = await tool.call({"path": "hosts_link"}, ctx)
    assert not (workspace / "hosts_link").is_symlink()
    assert target.read_text() == "precious\n"
    assert result.metadata["kind"] == "symlink" and result.metadata["links"] == ["hosts_link"]
    assert "was not touched" in result.output
    [change] = runtime.store.history.list_latest_session_files(session_id)  # kept, for undo and revert
    assert (change.path, change.deleted, change.initial_link) == ("hosts_link", True, str(target))


async def test_a_symlinked_directory_is_removed_as_a_link_and_its_files_kept(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    write_files({"real_lib/mod.py": "x = 1\n"})
    (workspace / "lib").symlink_to("real_lib", target_is_directory=True)
    answers = permission_answers(runtime, ALLOW)
    await tool.call({"path": "lib"}, ctx)
    assert not (workspace / "lib").is_symlink()
    assert (workspace / "real_lib" / "mod.py").read_text() == "x = 1\n"
    [change] = runtime.store.history.list_latest_session_files(ctx.session_id)
    assert (change.path, change.deleted, change.initial_link) == ("lib", True, "real_lib")
    [request] = answers.requests
    assert (request.subject, request.title) == ("lib", "Delete symlink lib")
    assert "lib -> real_lib" in request.preview.text


async def test_symlinks_inside_a_directory_are_removed_never_followed(
    write_files, tool, ctx, runtime, session_id, workspace
):
    outside = workspace.parent / "shared"
    outside.mkdir()
    (outside / "data.txt").write_text("shared\n")
    write_files({"tmp/own.txt": "own\n"})
    (workspace / "tmp" / "to_dir").symlink_to(outside, target_is_directory=True)
    (workspace / "tmp" / "to_file").symlink_to(outside / "data.txt")
    result = await tool.call({"path": "tmp"}, ctx)
    assert not (workspace / "tmp").exists()
    assert (outside / "data.txt").read_text() == "shared\n"
    assert result.metadata["links"] == ["tmp/to_dir", "tmp/to_file"]
    assert "- tmp/to_file (a symlink: removed, its target not touched)" in result.output
    changes = runtime.store.history.list_latest_session_files(session_id)
    assert [(c.path, c.initial_link) for c in changes] == [
        ("tmp/own.txt", None), ("tmp/to_dir", str(outside)), ("tmp/to_file", str(outside / "data.txt"))
    ]  # fmt: skip


# --- the removal fails: nothing changes, nothing is recorded ---------------------------


async def test_when_the_os_refuses_a_removal_every_file_is_back_and_nothing_is_recorded(
    write_files, tool, ctx, runtime, session_id, workspace, monkeypatch
):
    write_files({"pkg/a.sh": "echo a\n", "pkg/b.txt": "b\n", "pkg/c.txt": "c\n"})
    (workspace / "pkg" / "a.sh").chmod(0o755)
    (workspace / "pkg" / "link").symlink_to("a.sh")
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):  # the OS refusing one entry (tests run as root)
        if Path(path).name == "c.txt":
            raise PermissionError(13, "Permission denied", str(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(
        ToolError, match=r"Could not change pkg/c.txt: Permission denied; nothing was changed"
    ):
        await tool.call({"path": "pkg"}, ctx)
    assert (workspace / "pkg" / "a.sh").read_text() == "echo a\n"
    assert (workspace / "pkg" / "a.sh").stat().st_mode & 0o777 == 0o755
    assert (workspace / "pkg" / "b.txt").read_text() == "b\n"
    assert os.readlink(workspace / "pkg" / "link") == "a.sh"
    assert runtime.store.history.list_latest_session_files(session_id) == []


async def test_a_file_created_in_the_folder_while_the_user_decides_is_never_lost(
    write_files, tool, make_runtime, workspace
):
    runtime, ctx = interactive(make_runtime)
    write_files({"out/a.txt": "a\n", "out/sub/b.txt": "b\n"})
    questions = runtime.bus.subscribe(PermissionRequested)

    async def user_answers_late():
        event = await questions.get()
        (workspace / "out" / "sub" / "new.txt").write_text("written meanwhile\n")
        runtime.permissions.reply(event.request_id, ALLOW)

    answering = asyncio.create_task(user_answers_late())
    with pytest.raises(ToolError, match="Could not change out/sub: .*nothing was changed"):
        await tool.call({"path": "out"}, ctx)
    await answering
    assert (workspace / "out" / "sub" / "new.txt").read_text() == "written meanwhile\n"
    assert (workspace / "out" / "a.txt").read_text() == "a\n"
    assert (workspace / "out" / "sub" / "b.txt").read_text() == "b\n"
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


# --- permission rules ------------------------------------------------------------------


async def test_a_deny_on_any_file_inside_refuses_the_whole_directory_and_names_it(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime, rules(SPEC_RULES))
    write_files({"src/a.txt": "a\n", "src/main.go": "package main\n", "src/sub/util.go": "package sub\n"})
    answers = permission_answers(runtime, ALLOW)
    with pytest.raises(
        PermissionDeniedError, match=r"forbid delete on src/main\.go, src/sub/util\.go \(delete rule \"\*\.go\"\); nothing was changed"
    ):
        await tool.call({"path": "src"}, ctx)
    assert sorted(p.name for p in (workspace / "src").rglob("*")) == ["a.txt", "main.go", "sub", "util.go"]
    await asyncio.sleep(0)
    assert answers.requests == []


async def test_under_the_spec_rules_tmp_x_go_is_allowed_and_tmp_star_go_deny_protects_it(
    write_files, tool, make_runtime, workspace
):
    """docs/permissions.md: the most specific pattern wins, and "tmp/*" (4 literal
    characters) beats "*.go" (3), so the spec's rules allow tmp/x.go; a "tmp/*.go" deny
    is how Go files in tmp/ are protected, and then the folder cannot be deleted either."""
    write_files({"tmp/a.txt": "a\n", "tmp/x.go": "package x\n"})
    guarded = make_runtime(policy="headless", config=rules({**SPEC_RULES, "tmp/*.go": "deny"}))
    with pytest.raises(PermissionDeniedError, match=r"forbid delete on tmp/x\.go \(delete rule"):
        await tool.call({"path": "tmp"}, guarded.context(guarded.store.sessions.create().id))
    assert (workspace / "tmp" / "x.go").exists()
    spec = make_runtime(policy="headless", config=rules(SPEC_RULES))
    await tool.call({"path": "tmp/x.go"}, spec.context(spec.store.sessions.create().id))
    assert not (workspace / "tmp" / "x.go").exists()


async def test_spec_rules_allow_a_file_under_tmp_without_a_question_and_ask_for_readme(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime, rules(SPEC_RULES))
    write_files({"tmp/a.txt": "a\n", "README.md": "# title\nbody\n"})
    answers = permission_answers(runtime, ALLOW)
    await tool.call({"path": "tmp/a.txt"}, ctx)
    assert answers.requests == []
    await tool.call({"path": "README.md"}, ctx)
    [request] = answers.requests
    assert (request.tool, request.subject, request.title) == (
        "delete",
        "README.md",
        "Delete README.md (2 lines)",
    )
    assert request.preview.kind == "diff" and "-# title\n-body\n" in request.preview.text
    assert not (workspace / "README.md").exists()


async def test_a_directory_asks_once_with_its_files_and_line_counts(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime, rules(SPEC_RULES))
    write_files({"tmp/a.txt": "a\n", "tmp/b/c.txt": "1\n2\n"})
    answers = permission_answers(runtime, ALLOW)
    await tool.call({"path": "tmp"}, ctx)
    [request] = answers.requests
    assert (request.subject, request.title) == ("tmp", "Delete tmp/ (2 files, 3 lines)")
    assert request.preview.kind == "files"
    assert request.preview.files == [("tmp/a.txt", 1), ("tmp/b/c.txt", 2)]


async def test_a_file_that_asks_inside_an_allowed_folder_still_gets_the_question(
    write_files, tool, make_runtime, workspace, permission_answers
):
    config = rules({"*": "allow", "conf/*.env": "ask"})
    runtime, ctx = interactive(make_runtime, config)
    write_files({"conf/app.toml": "a\n", "conf/prod.env": "KEY=1\n"})
    answers = permission_answers(runtime, PermissionReply("deny"))
    with pytest.raises(PermissionDeniedError):
        await tool.call({"path": "conf"}, ctx)
    assert [r.subject for r in answers.requests] == ["conf"]
    assert (workspace / "conf" / "prod.env").exists()
    headless = make_runtime(policy="headless", config=config)
    with pytest.raises(PermissionDeniedError, match="run with --yes"):
        await tool.call({"path": "conf"}, headless.context(headless.store.sessions.create().id))


async def test_an_agent_rule_beats_the_global_rule(write_files, tool, make_runtime, workspace):
    config = rules({"*": "deny"}, agents={"coder": {"permission": {"delete": {"scratch/*": "allow"}}}})
    runtime = make_runtime(policy="headless", config=config)
    session = runtime.store.sessions.create().id
    write_files({"scratch/a.txt": "a\n", "scratch/b.txt": "b\n"})
    await tool.call({"path": "scratch/a.txt"}, runtime.context(session, agent="coder"))
    assert not (workspace / "scratch" / "a.txt").exists()
    with pytest.raises(PermissionDeniedError, match="scratch/b.txt"):
        await tool.call({"path": "scratch/b.txt"}, runtime.context(session, agent="workhorse"))
    assert (workspace / "scratch" / "b.txt").exists()


# --- more files than tools.delete.maxFiles ---------------------------------------------

BIG = {f"build/f{n}.txt": f"{n}\n" for n in range(5)}
LIMIT_3 = {"tools": {"delete": {"maxFiles": 3}}}


async def test_over_max_files_needs_an_interactive_approval_showing_the_count_even_if_rules_allow(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime, rules({"*": "allow"}, **LIMIT_3))
    write_files(BIG)
    answers = permission_answers(runtime, ALLOW)
    result = await tool.call({"path": "build"}, ctx)
    [request] = answers.requests
    assert request.title == "Delete build/ (5 files, more than the 3 limit)"
    assert request.preview.kind == "files" and len(request.preview.files) == 5
    assert result.metadata["deleted_count"] == 5 and not (workspace / "build").exists()


async def test_over_max_files_denied_by_the_user_deletes_nothing(
    write_files, tool, make_runtime, workspace, permission_answers
):
    runtime, ctx = interactive(make_runtime, LIMIT_3)
    write_files(BIG)
    permission_answers(runtime, PermissionReply("deny"))
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await tool.call({"path": "build"}, ctx)
    assert len(list((workspace / "build").iterdir())) == 5


@pytest.mark.parametrize("policy", ["headless", "headless-yes"])
async def test_over_max_files_is_refused_headless_even_with_yes(
    write_files, tool, make_runtime, workspace, policy
):
    runtime = make_runtime(policy=policy, config=rules({"*": "allow"}, **LIMIT_3))
    write_files(BIG)
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(PermissionDeniedError) as err:
        await tool.call({"path": "build"}, ctx)
    message = str(err.value)
    assert "5 files, more than tools.delete.maxFiles (3)" in message
    assert "--yes does not cover it" in message
    assert len(list((workspace / "build").iterdir())) == 5
    assert runtime.store.history.list_latest_session_files(ctx.session_id) == []


async def test_at_the_limit_no_extra_approval_is_needed(write_files, tool, make_runtime, workspace):
    runtime = make_runtime(policy="headless-yes", config=LIMIT_3)
    write_files({f"three/f{n}.txt": "x\n" for n in range(3)})
    result = await tool.call({"path": "three"}, runtime.context(runtime.store.sessions.create().id))
    assert result.output.startswith("3 files deleted, 3 lines removed")


async def test_the_summary_counts_are_plain_numbers(write_files, tool, ctx):
    """The summary reads "N files deleted, M lines removed", with no thousands separator."""
    write_files({f"logs/{n}.log": "x\n" * 500 for n in range(3)})
    result = await tool.call({"path": "logs"}, ctx)
    assert result.output.startswith("3 files deleted, 1500 lines removed (logs/):\n- logs/0.log (500 lines)")


async def test_the_models_result_names_at_most_fifty_entries(write_files, tool, ctx, workspace):
    write_files({f"many/f{n:02}.txt": "x\n" for n in range(53)})
    result = await tool.call({"path": "many"}, ctx)
    lines = result.output.splitlines()
    assert lines[0] == "53 files deleted, 53 lines removed (many/):"
    assert len(lines) == 52 and lines[-1] == "- ... and 3 more"
    assert len(result.metadata["files"]) == 53
