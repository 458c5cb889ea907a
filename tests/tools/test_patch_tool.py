"""The patch tool end to end: real files in a workspace, a real runtime (SQLite history,
bus, permission service), spec 002's JSON results, and nothing written on any failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.diff import diff_stats, unified_diff
from app.core.errors import OutsideWorkspaceError, PermissionDeniedError, ToolError
from app.permission import PermissionReply
from app.store import FileVersionCreated
from app.tools.base import ToolContext, ToolResult
from app.tools.changes import counted_changes
from app.tools.patch import PatchTool
from app.tools.text.patch import PatchError


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


async def apply(ctx: ToolContext, body: str, **arguments: object) -> ToolResult:
    return await PatchTool().call({"patch": wrap(body), **arguments}, ctx)


async def refused(ctx: ToolContext, body: str, kind: type[ToolError] = ToolError, **arguments: object) -> str:
    """The error text of a refused patch, after checking it is spec 002's one-line JSON."""
    with pytest.raises(kind) as caught:
        await apply(ctx, body, **arguments)
    message = str(caught.value)
    assert "\n" not in message
    outcome = json.loads(message)
    assert set(outcome) == {"ok", "error"} and outcome["ok"] is False
    return outcome["error"]


def tree(root: Path) -> dict[str, bytes]:
    """Every file in the workspace except the runtime's own data folder."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".opencode" not in path.relative_to(root).parts
    }


def versions(ctx: ToolContext, path: str) -> list[tuple[str, str, bool]]:
    return [(v.version, v.content, v.deleted) for v in ctx.history.versions(ctx.session_id, path)]


@pytest.fixture
def files(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\ndef main():\n    run()\n")
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    return workspace


# --- success: disk, result, history, events ---------------------------------------------


async def test_add_update_delete_and_move_in_one_patch(files: Path, ctx: ToolContext) -> None:
    (files / "old.txt").write_text("obsolete\n")
    events = ctx.bus.subscribe(FileVersionCreated)
    result = await apply(
        ctx,
        "*** Add File: docs/new.md\n+# New\n"
        "*** Update File: src/app.py\n@@ def main():\n-    run()\n+    run(fast=True)\n"
        "*** Delete File: old.txt\n"
        "*** Update File: notes.txt\n*** Move to: archive/notes.txt\n@@\n one\n-two\n+2\n",
        allow_delete=True,
    )
    assert json.loads(result.output) == {
        "ok": True,
        "summary": "A 1, M 1, D 1, R 1",
    }
    assert result.title == "A docs/new.md, M src/app.py, D old.txt, R notes.txt -> archive/notes.txt"
    assert tree(files) == {
        "archive/notes.txt": b"one\n2\nthree\n",
        "docs/new.md": b"# New\n",
        "src/app.py": b"import os\n\ndef main():\n    run(fast=True)\n",
    }
    assert versions(ctx, "docs/new.md") == [("initial", "", True), ("v1", "# New\n", False)]
    assert versions(ctx, "src/app.py")[1] == ("v1", "import os\n\ndef main():\n    run(fast=True)\n", False)
    assert versions(ctx, "old.txt") == [("initial", "obsolete\n", False), ("v1", "", True)]
    # A move: a deleted version at the old path, a new file at the new one.
    assert versions(ctx, "notes.txt") == [("initial", "one\ntwo\nthree\n", False), ("v1", "", True)]
    assert versions(ctx, "archive/notes.txt") == [("initial", "", True), ("v1", "one\n2\nthree\n", False)]
    published = iter(events.get_nowait, None)
    assert {(e.path, e.version, e.deleted) for e in published if e.version != "initial"} == {
        ("docs/new.md", "v1", False),
        ("src/app.py", "v1", False),
        ("old.txt", "v1", True),
        ("notes.txt", "v1", True),
        ("archive/notes.txt", "v1", False),
    }


async def test_metadata_lists_each_file_and_the_combined_diff(files: Path, ctx: ToolContext) -> None:
    result = await apply(ctx, "*** Update File: notes.txt\n*** Move to: n2.txt\n@@\n-one\n+uno\n+eins\n")
    assert result.metadata["files"] == [
        {
            "path": "notes.txt",
            "additions": 0,
            "deletions": 3,
            "deleted": True,
            "created": False,
            "moved_from": None,
        },
        {
            "path": "n2.txt",
            "additions": 4,
            "deletions": 0,
            "deleted": False,
            "created": True,
            "moved_from": "notes.txt",
        },
    ]
    assert (result.metadata["additions"], result.metadata["deletions"]) == (4, 3)
    assert "--- a/notes.txt" in result.metadata["diff"] and "+++ b/n2.txt\n" in result.metadata["diff"]
    assert result.metadata["dry_run"] is False


async def test_diff_of_a_patched_file_is_its_whole_file_diff(workspace: Path, ctx: ToolContext) -> None:
    """The diff made from the hunks' regions is the one a whole-file diff gives."""
    old = "".join(f"line {n}\n" for n in range(60))
    (workspace / "big.txt").write_text(old)
    (workspace / "crlf.txt").write_bytes(old.replace("\n", "\r\n").encode())
    hunks = "@@\n line 4\n-line 5\n+five\n line 6\n@@\n line 30\n+inserted\n line 31\n@@\n-line 58\n line 59\n"
    result = await apply(ctx, f"*** Update File: big.txt\n{hunks}*** Update File: crlf.txt\n{hunks}")
    new = (workspace / "big.txt").read_text()
    new_crlf = (workspace / "crlf.txt").read_bytes().decode()
    expected = unified_diff(old, new, "big.txt") + unified_diff(old.replace("\n", "\r\n"), new_crlf, "crlf.txt")
    assert result.metadata["diff"] == expected
    assert [(f["additions"], f["deletions"]) for f in result.metadata["files"]] == [(2, 2), (2, 2)]


async def test_sections_see_earlier_sections_and_each_file_is_recorded_once(
    files: Path, ctx: ToolContext
) -> None:
    await apply(ctx, "*** Add File: a.txt\n+x\n*** Update File: a.txt\n@@\n-x\n+y\n")
    assert (files / "a.txt").read_bytes() == b"y\n"
    assert versions(ctx, "a.txt") == [("initial", "", True), ("v1", "y\n", False)]


async def test_bom_crlf_and_missing_final_newline_are_kept(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "w.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc")
    await apply(ctx, "*** Update File: w.txt\n@@\n a\n-b\n+B\n c\n")
    assert (workspace / "w.txt").read_bytes() == b"\xef\xbb\xbfa\r\nB\r\nc"


async def test_a_missing_final_newline_stays_missing_when_the_patch_changes_the_end(
    workspace: Path, ctx: ToolContext
) -> None:
    (workspace / "lf.txt").write_bytes(b"a\nb")
    (workspace / "crlf.txt").write_bytes(b"\xef\xbb\xbfa\r\nb")
    result = await apply(
        ctx,
        "*** Update File: lf.txt\n@@\n-b\n+B\n*** Update File: crlf.txt\n@@\n b\n+c\n*** End of File\n",
    )
    assert (workspace / "lf.txt").read_bytes() == b"a\nB"
    assert (workspace / "crlf.txt").read_bytes() == b"\xef\xbb\xbfa\r\nb\r\nc"
    assert "-b\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n" in result.metadata["diff"]


async def test_move_to_the_same_path_only_updates(files: Path, ctx: ToolContext) -> None:
    result = await apply(ctx, "*** Update File: notes.txt\n*** Move to: ./notes.txt\n@@\n-one\n+1\n")
    assert json.loads(result.output)["summary"] == "A 0, M 1, D 0, R 0"
    assert (files / "notes.txt").read_bytes() == b"1\ntwo\nthree\n"
    assert [v[2] for v in versions(ctx, "notes.txt")] == [False, False]


async def test_a_move_without_hunks_renames_the_file_as_it_is(files: Path, ctx: ToolContext) -> None:
    (files / "w.txt").write_bytes(b"\xef\xbb\xbfa\r\nb")
    result = await apply(ctx, "*** Update File: w.txt\n*** Move to: docs/w.txt\n")
    assert json.loads(result.output) == {"ok": True, "summary": "A 0, M 0, D 0, R 1"}
    assert not (files / "w.txt").exists()
    assert (files / "docs" / "w.txt").read_bytes() == b"\xef\xbb\xbfa\r\nb"
    assert versions(ctx, "w.txt") == [("initial", "\ufeffa\r\nb", False), ("v1", "", True)]
    assert versions(ctx, "docs/w.txt") == [("initial", "", True), ("v1", "\ufeffa\r\nb", False)]


async def test_moving_onto_an_existing_file_replaces_it_and_keeps_its_history(
    files: Path, ctx: ToolContext
) -> None:
    (files / "old.txt").write_text("replaced\n")
    result = await apply(ctx, "*** Update File: notes.txt\n*** Move to: old.txt\n@@\n-one\n+1\n")
    assert json.loads(result.output)["summary"] == "A 0, M 0, D 0, R 1"
    assert tree(files)["old.txt"] == b"1\ntwo\nthree\n" and "notes.txt" not in tree(files)
    assert versions(ctx, "old.txt") == [("initial", "replaced\n", False), ("v1", "1\ntwo\nthree\n", False)]
    assert [f["created"] for f in result.metadata["files"]] == [False, False]


async def test_a_patch_that_changes_nothing_writes_nothing(
    files: Path, make_runtime, permission_answers
) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime)  # would record any question; none may be asked
    before = os.stat(files / "notes.txt").st_mtime_ns
    result = await apply(
        ctx,
        "*** Update File: notes.txt\n@@\n-two\n+two\n*** Add File: t.txt\n*** Delete File: t.txt\n",
        allow_delete=True,
    )
    assert json.loads(result.output) == {"ok": True, "summary": "A 1, M 1, D 1, R 0"}
    assert os.stat(files / "notes.txt").st_mtime_ns == before and not (files / "t.txt").exists()
    assert answers.requests == [] and ctx.history.list_latest_session_files(ctx.session_id) == []


async def test_workspace_root_is_where_paths_start(files: Path, ctx: ToolContext) -> None:
    result = await apply(
        ctx, "*** Update File: app.py\n@@\n-import os\n+import sys\n", workspace_root=str(files / "src")
    )
    assert result.title == "M app.py"
    assert (files / "src" / "app.py").read_text().startswith("import sys\n")
    assert versions(ctx, "src/app.py")[1][0] == "v1"  # history paths stay workspace-relative


async def test_dry_run_summarises_and_writes_nothing(files: Path, make_runtime, permission_answers) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime)
    before = tree(files)
    result = await apply(
        ctx,
        "*** Add File: n.txt\n+n\n*** Update File: notes.txt\n@@\n-one\n+1\n*** Delete File: src/app.py\n",
        dry_run=True,
        allow_delete=True,
    )
    assert json.loads(result.output) == {"ok": True, "summary": "A 1, M 1, D 1, R 0"}
    assert result.metadata["dry_run"] is True and result.metadata["additions"] == 2
    assert tree(files) == before
    assert answers.requests == [] and ctx.history.list_latest_session_files(ctx.session_id) == []


async def test_dry_run_still_reports_failures(files: Path, ctx: ToolContext) -> None:
    error = await refused(ctx, "*** Update File: notes.txt\n@@\n-four\n+4\n", PatchError, dry_run=True)
    assert error.startswith("Update File notes.txt, hunk 1: context not found")


# --- failures: nothing written, one line naming the file and the hunk ----------------------


async def assert_untouched(root: Path, ctx: ToolContext, before: dict[str, bytes]) -> None:
    assert tree(root) == before
    assert ctx.history.list_latest_session_files(ctx.session_id) == []


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        ("*** Update File: missing.txt\n@@\n-a\n+b\n", {}, "Update File missing.txt: file not found"),
        ("*** Delete File: missing.txt\n", {"allow_delete": True}, "Delete File missing.txt: file not found"),
        (
            "*** Update File: notes.txt\n@@\n-four\n+4\n",
            {},
            'Update File notes.txt, hunk 1: context not found: "four"',
        ),
        (
            "*** Delete File: notes.txt\n",
            {},
            "Delete File notes.txt: deleting files is disabled; set allow_delete: true",
        ),
        (
            "*** Update File: notes.txt\n*** Move to: n.txt\n@@\n-one\n+1\n",
            {"allow_move": False},
            "Update File notes.txt: moving files is disabled",
        ),
        ("*** Add File: ../escape.txt\n+x\n", {}, "Add File ../escape.txt: the path leaves the workspace"),
        ("*** Update File: src/../../notes.txt\n@@\n-one\n+1\n", {}, "the path leaves the workspace"),
        ("*** Add File: /tmp/abs.txt\n+x\n", {}, "Add File /tmp/abs.txt: absolute paths are not allowed"),
        (
            "*** Update File: notes.txt\n@@\n-one\n+1\n@@\n-zero\n+0\n",
            {},
            'Update File notes.txt, hunk 2: context not found: "zero"',
        ),
        ("*** Update File: src\n@@\n-a\n+b\n", {}, "src is a folder"),
        ("*** Update File: notes.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n", {}, "is a unified-diff range"),
    ],
    ids=[
        "missing-update",
        "missing-delete",
        "context-not-found",
        "delete-not-allowed",
        "move-disabled",
        "dotdot",
        "dotdot-inside",
        "absolute",
        "second-hunk",
        "folder",
        "line-numbers",
    ],
)
async def test_refusals(files: Path, ctx: ToolContext, body: str, arguments: dict, expected: str) -> None:
    before = tree(files)
    assert expected in await refused(ctx, body, **arguments)
    await assert_untouched(files, ctx, before)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("*** Add File: a\0b.txt\n+x\n", "the path contains a NUL character"),
        (f"*** Add File: {'n' * 300}.txt\n+x\n", "File name too long"),
        ("*** Add File: loop/x.txt\n+x\n", "loop/x.txt goes through a loop of symbolic links"),
        (
            "*** Add File: notes.txt/x.txt\n+x\n",
            "notes.txt is a file, not a folder, so notes.txt/x.txt cannot",
        ),
        ("*** Update File: notes.txt\n*** Move to: src/app.py/x\n@@\n-one\n+1\n", "src/app.py is a file"),
    ],
    ids=["nul", "too-long", "symlink-loop", "file-as-folder", "move-under-a-file"],
)
async def test_paths_the_system_cannot_hold_are_refused_in_one_line(
    files: Path, ctx: ToolContext, body: str, expected: str
) -> None:
    (files / "loop").symlink_to("loop2")
    (files / "loop2").symlink_to("loop")
    before = tree(files)
    assert expected in await refused(ctx, body)
    await assert_untouched(files, ctx, before)


@pytest.mark.parametrize(
    "body",
    [
        f"*** Delete File: {'n' * 300}.txt\n",
        f"*** Delete File: src/{'n' * 300}/x.txt\n",
        f"*** Update File: notes.txt\n*** Move to: {'n' * 300}.txt\n@@\n-one\n+1\n",
    ],
    ids=["delete", "delete-under", "move-to"],
)
async def test_a_name_over_255_characters_to_delete_or_move_is_a_tool_error(
    files: Path, ctx: ToolContext, body: str
) -> None:
    before = tree(files)
    assert "File name too long; check the path" in await refused(ctx, body, allow_delete=True)
    await assert_untouched(files, ctx, before)


async def test_ambiguous_context_is_refused_not_guessed(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "dup.py").write_text("def a():\n    return 1\n\ndef b():\n    return 1\n")
    error = await refused(ctx, "*** Update File: dup.py\n@@\n-    return 1\n+    return 2\n", PatchError)
    assert error.startswith("Update File dup.py, hunk 1: ambiguous: the hunk matches at lines 2 and 5")
    assert (workspace / "dup.py").read_text().count("return 1") == 2
    await apply(ctx, "*** Update File: dup.py\n@@ def b():\n-    return 1\n+    return 2\n")
    assert (workspace / "dup.py").read_text() == "def a():\n    return 1\n\ndef b():\n    return 2\n"


async def test_a_failing_later_file_leaves_earlier_files_untouched(files: Path, ctx: ToolContext) -> None:
    before = tree(files)
    error = await refused(
        ctx,
        "*** Add File: created.txt\n+new\n*** Update File: notes.txt\n@@\n-one\n+1\n"
        "*** Update File: src/app.py\n@@\n-nothing like this\n+x\n",
    )
    assert error.startswith("Update File src/app.py, hunk 1: context not found")
    await assert_untouched(files, ctx, before)


async def test_a_symlink_pointing_outside_is_refused(files: Path, tmp_path: Path, ctx: ToolContext) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (files / "link.txt").symlink_to(outside)
    before = tree(files)
    error = await refused(ctx, "*** Update File: link.txt\n@@\n-secret\n+leaked\n", OutsideWorkspaceError)
    assert error.startswith("Update File link.txt:") and "outside the workspace" in error
    assert outside.read_text() == "secret\n"
    await assert_untouched(files, ctx, before)


async def test_a_symlinked_folder_leading_outside_is_refused_for_new_files(
    files: Path, tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (files / "out").symlink_to(tmp_path / "elsewhere")
    await refused(ctx, "*** Add File: out/new.txt\n+x\n", OutsideWorkspaceError)
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize(
    "body", ["*** Delete File: alias.txt\n", "*** Update File: alias.txt\n*** Move to: moved.txt\n@@\n-one\n+1\n"]
)
async def test_a_symlink_is_never_deleted_or_moved_through(files: Path, ctx: ToolContext, body: str) -> None:
    """Resolving the link would delete or move the file it points to instead."""
    (files / "alias.txt").symlink_to(files / "notes.txt")
    error = await refused(ctx, body, PatchError, allow_delete=True)
    assert "alias.txt is a symbolic link" in error
    assert (files / "notes.txt").read_text() == "one\ntwo\nthree\n" and (files / "alias.txt").is_symlink()
    assert not (files / "moved.txt").exists()


async def test_updating_through_a_symlink_inside_changes_its_target(files: Path, ctx: ToolContext) -> None:
    (files / "alias.txt").symlink_to(files / "notes.txt")
    await apply(ctx, "*** Update File: alias.txt\n@@\n-one\n+1\n")
    assert (files / "notes.txt").read_text() == "1\ntwo\nthree\n" and (files / "alias.txt").is_symlink()
    assert versions(ctx, "notes.txt")[1] == ("v1", "1\ntwo\nthree\n", False)


async def test_two_names_for_one_file_are_refused(files: Path, ctx: ToolContext) -> None:
    (files / "alias.txt").symlink_to(files / "notes.txt")
    error = await refused(
        ctx,
        "*** Update File: notes.txt\n@@\n-one\n+1\n*** Update File: alias.txt\n@@\n-two\n+2\n",
        PatchError,
    )
    assert "alias.txt and notes.txt are the same file" in error
    assert (files / "notes.txt").read_text() == "one\ntwo\nthree\n"


@pytest.mark.parametrize("root", ["..", "/", "notes.txt", "no/such/dir"])
async def test_workspace_root_must_be_a_folder_inside_the_workspace(
    files: Path, ctx: ToolContext, root: str
) -> None:
    error = await refused(ctx, "*** Add File: x.txt\n+x\n", workspace_root=root)
    assert error.startswith("workspace_root")
    assert not (files / "x.txt").exists() and not (files.parent / "x.txt").exists()


async def test_binary_files_are_not_patched(workspace: Path, ctx: ToolContext) -> None:
    data = b"line\n" + b"\x00\x01" * 10
    (workspace / "blob.bin").write_bytes(data)
    (workspace / "latin.txt").write_bytes(b"first\n" + b"a\n" * 5000 + b"caf\xe9\n")  # bad UTF-8 past 8 KiB
    error = await refused(ctx, "*** Update File: blob.bin\n@@\n-line\n+LINE\n", PatchError)
    assert error.startswith("Update File blob.bin: not UTF-8 text")
    assert "latin.txt: not UTF-8 text" in await refused(ctx, "*** Update File: latin.txt\n@@\n-first\n+x\n")
    assert (workspace / "blob.bin").read_bytes() == data


async def test_deleting_a_file_with_invalid_utf8_past_the_sniffed_prefix(
    workspace: Path, ctx: ToolContext
) -> None:
    """The change path's history keeps such a file (invalid UTF-8 past the first 8 KiB it
    sniffs for text) without crashing."""
    (workspace / "latin.txt").write_bytes(b"a\n" * 5000 + b"caf\xe9\n")
    await apply(ctx, "*** Delete File: latin.txt\n", allow_delete=True)
    assert not (workspace / "latin.txt").exists()
    assert versions(ctx, "latin.txt") == [("initial", "(binary file, 10005 bytes)", False), ("v1", "", True)]


async def test_bad_arguments_get_the_spec_json_too(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await PatchTool().call({"patch": "x", "allow_delete": "maybe"}, ctx)
    assert json.loads(str(caught.value))["error"].startswith("patch: invalid arguments: allow_delete")
    with pytest.raises(ToolError) as caught:
        await PatchTool().call({"patch": ""}, ctx)
    assert json.loads(str(caught.value)) == {
        "ok": False,
        "error": "the patch is empty; send *** Begin Patch, the file sections, then *** End Patch",
    }


# --- permission ------------------------------------------------------------------------------


async def test_a_deny_rule_on_any_path_refuses_the_whole_patch(files: Path, make_runtime) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"patch": {"archive/*": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    before = tree(files)
    error = await refused(
        ctx,
        "*** Update File: src/app.py\n@@\n-import os\n+import sys\n"
        "*** Update File: notes.txt\n*** Move to: archive/notes.txt\n@@\n-one\n+1\n",
        PermissionDeniedError,
    )
    assert "archive/notes.txt" in error and "nothing was changed" in error
    await assert_untouched(files, ctx, before)


async def test_a_delete_rule_denying_a_file_refuses_a_patch_deleting_it(files: Path, make_runtime) -> None:
    """allow_delete is the model's own flag: the user's delete rules still hold (spec 000)."""
    runtime = make_runtime(config={"permission": {"rules": {"patch": "allow", "delete": {"*.py": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    before = tree(files)
    error = await refused(
        ctx,
        "*** Delete File: notes.txt\n*** Delete File: src/app.py\n",
        PermissionDeniedError,
        allow_delete=True,
    )
    assert error == 'Permission denied: the rules forbid delete on src/app.py (delete rule "*.py"); nothing was changed'
    await assert_untouched(files, ctx, before)
    await apply(
        ctx, "*** Delete File: notes.txt\n*** Update File: src/app.py\n@@\n-import os\n", allow_delete=True
    )
    assert tree(files) == {"src/app.py": b"\ndef main():\n    run()\n"}


async def test_a_delete_rule_asking_makes_a_patch_deleting_the_file_ask(
    files: Path, make_runtime, permission_answers
) -> None:
    """The patch rules allowing every path do not skip the question the delete rules ask."""
    runtime = make_runtime(
        policy="interactive", config={"permission": {"rules": {"patch": "allow", "delete": {"*.txt": "ask"}}}}
    )
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime, PermissionReply("deny"))
    before = tree(files)
    error = await refused(ctx, "*** Delete File: notes.txt\n", PermissionDeniedError, allow_delete=True)
    assert "denied" in error
    (request,) = answers.requests
    assert request.tool == "patch" and "notes.txt" in request.title
    await assert_untouched(files, ctx, before)
    await apply(ctx, "*** Update File: src/app.py\n@@\n-import os\n")  # nothing deleted: nothing asked
    assert len(answers.requests) == 1


async def test_one_question_with_the_combined_diff(files: Path, make_runtime, permission_answers) -> None:
    runtime = make_runtime(
        policy="interactive", config={"permission": {"rules": {"patch": {"src/*": "allow"}}}}
    )
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    await apply(ctx, "*** Update File: src/app.py\n@@\n-import os\n+import sys\n*** Add File: b.txt\n+b\n")
    (request,) = answers.requests
    # Asked about the path the rules did not allow, never a combined subject an allow rule could match.
    assert (request.tool, request.subject) == ("patch", "b.txt")
    assert "+import sys" in request.preview.text and "+++ b/b.txt" in request.preview.text
    assert (files / "b.txt").read_text() == "b\n"


async def test_the_user_saying_no_changes_nothing(files: Path, make_runtime, permission_answers) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    permission_answers(runtime, PermissionReply("deny", "not now"))
    before = tree(files)
    error = await refused(ctx, "*** Update File: notes.txt\n@@\n-one\n+1\n", PermissionDeniedError)
    assert error == 'The user denied this patch: "not now"'
    await assert_untouched(files, ctx, before)


async def test_headless_without_yes_refuses_what_would_be_asked(files: Path, make_runtime) -> None:
    runtime = make_runtime(policy="headless")
    ctx = runtime.context(runtime.store.sessions.create().id)
    error = await refused(ctx, "*** Add File: x.txt\n+x\n", PermissionDeniedError)
    assert "run with --yes" in error and not (files / "x.txt").exists()


# --- the change path's shortcuts this tool relies on ---------------------------------------

_LINES = st.lists(st.sampled_from(["a", "b", "+a", "-b", "--- a/x", "+++ b/x", "@@", "\\ x", "c\r", ""]), max_size=12)


@given(_LINES, _LINES, st.booleans(), st.booleans())
def test_counted_changes_equal_diff_stats(old: list[str], new: list[str], old_end: bool, new_end: bool) -> None:
    """The stats the change path reads off the diff text are the diff's own stats."""
    before = "\n".join(old) + ("\n" if old_end and old else "")
    after = "\n".join(new) + ("\n" if new_end and new else "")
    assert counted_changes(unified_diff(before, after, "f.txt")) == diff_stats(before, after)


async def test_a_many_file_patch_is_written_in_one_batch(workspace: Path, ctx: ToolContext) -> None:
    """Past the fsync-each limit the change path syncs once per batch; the files, modes
    and history must be exactly what per-file writes give, and no temp file is left."""
    for n in range(20):
        (workspace / f"f{n}.txt").write_text(f"line {n}\n")
    (workspace / "f0.txt").chmod(0o600)
    body = "".join(f"*** Update File: f{n}.txt\n@@\n-line {n}\n+LINE {n}\n" for n in range(20))
    await apply(ctx, body + "*** Add File: new/deep/g.txt\n+g\n")
    assert tree(workspace) == {
        **{f"f{n}.txt": f"LINE {n}\n".encode() for n in range(20)}, "new/deep/g.txt": b"g\n"
    }
    assert (workspace / "f0.txt").stat().st_mode & 0o777 == 0o600
    assert len(ctx.history.list_latest_session_files(ctx.session_id)) == 21


# --- cases from Codex's apply-patch suite (tool level) ----------------------------------------
# openai/codex, codex-rs/apply-patch: invocation.rs and tests/suite/tool.rs, with our own data.


def heredoc(prefix: str, body: str) -> str:
    return f"{prefix}apply_patch <<'PATCH'\n{wrap(body)}PATCH\n"


async def test_codex_cd_wrapper_patches_inside_that_folder(files: Path, ctx: ToolContext) -> None:
    """Codex resolves paths in the folder of ``cd <dir> && apply_patch``; a same-named
    file at the root must not be the one changed."""
    (files / "src" / "notes.txt").write_text("one\ntwo\nthree\n")
    body = "*** Update File: notes.txt\n*** Move to: kept.txt\n@@\n-two\n+2\n*** Add File: new.txt\n+n\n"
    result = await PatchTool().call({"patch": heredoc("cd src && ", body)}, ctx)
    assert json.loads(result.output) == {"ok": True, "summary": "A 1, M 0, D 0, R 1"}
    assert (files / "src" / "kept.txt").read_text() == "one\n2\nthree\n"
    assert (files / "src" / "new.txt").read_text() == "n\n" and not (files / "src" / "notes.txt").exists()
    assert (files / "notes.txt").read_text() == "one\ntwo\nthree\n" and not (files / "new.txt").exists()
    assert versions(ctx, "src/kept.txt")[-1][1] == "one\n2\nthree\n"  # history stays workspace-relative


async def test_codex_cd_wrapper_starts_from_workspace_root(files: Path, ctx: ToolContext) -> None:
    (files / "src" / "lib").mkdir()
    arguments = {"patch": heredoc("cd lib && ", "*** Add File: x.txt\n+x\n"), "workspace_root": "src"}
    await PatchTool().call(arguments, ctx)
    assert (files / "src" / "lib" / "x.txt").read_text() == "x\n"


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("nowhere", "cd nowhere is not a folder"),
        ("notes.txt", "cd notes.txt is not a folder"),
        ("..", "cd: "),
        ("/", "cd: "),
    ],
)
async def test_codex_cd_wrapper_must_name_a_folder_inside_the_workspace(
    files: Path, ctx: ToolContext, folder: str, expected: str
) -> None:
    before = tree(files)
    with pytest.raises(ToolError) as caught:
        await PatchTool().call({"patch": heredoc(f"cd {folder} && ", "*** Add File: x.txt\n+x\n")}, ctx)
    assert json.loads(str(caught.value))["error"].startswith(expected)
    await assert_untouched(files, ctx, before)
    assert not (files.parent / "x.txt").exists()


async def test_codex_multiple_operations_and_chunks(files: Path, ctx: ToolContext) -> None:
    (files / "gone.txt").write_text("bye\n")
    result = await apply(
        ctx,
        "*** Add File: deep/er/new.txt\n+made\n*** Delete File: gone.txt\n"
        "*** Update File: notes.txt\n@@\n-one\n+1\n@@\n-three\n+3\n",
        allow_delete=True,
    )
    assert json.loads(result.output) == {"ok": True, "summary": "A 1, M 1, D 1, R 0"}
    assert tree(files) == {
        "deep/er/new.txt": b"made\n",
        "notes.txt": b"1\ntwo\n3\n",
        "src/app.py": b"import os\n\ndef main():\n    run()\n",
    }


async def test_codex_failures_name_the_problem(files: Path, ctx: ToolContext) -> None:
    (files / "folder").mkdir()
    before = tree(files)
    assert "the patch has no file sections" in await refused(ctx, "")  # Codex: "No files were modified."
    assert (await refused(ctx, "*** Delete File: folder\n", allow_delete=True)).startswith("folder is a folder")
    assert "unknown header" in await refused(ctx, "*** Frobnicate File: notes.txt\n")
    await assert_untouched(files, ctx, before)


async def test_allow_for_session_on_one_file_does_not_let_a_later_patch_write_another_unasked(
    workspace: Path, make_runtime, permission_answers
) -> None:
    """What the permission dialog promises: the session answer covers patch on that file;
    a later patch touching it and another file asks, about the other file."""
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime, PermissionReply("allow_session"), PermissionReply("deny"))
    await apply(ctx, "*** Add File: a.txt\n+a\n")
    with pytest.raises(PermissionDeniedError):
        await apply(ctx, "*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: c.txt\n+c\n")
    assert [request.subject for request in answers.requests] == ["a.txt", "c.txt"]
    assert not (workspace / "c.txt").exists() and (workspace / "a.txt").read_text() == "a\n"


async def test_the_result_says_when_added_lines_were_re_indented(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "cart.py").write_text("class Cart:\n    def total(self):\n        return 0\n")
    result = await apply(ctx, "*** Update File: cart.py\n@@\n-return 0\n+return sum(self.items)\n")
    assert (workspace / "cart.py").read_text() == (
        "class Cart:\n    def total(self):\n        return sum(self.items)\n"
    )
    assert json.loads(result.output)["notes"] == [
        "cart.py, hunk 1: matched with different indentation: re-indented the replacement by 8 spaces"
    ]
