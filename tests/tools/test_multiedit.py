"""The multiedit tool on real files: edits in order on one draft, all or nothing, one
permission question for the combined diff, one history version."""

from __future__ import annotations

import codecs

import pytest

from app.core.errors import StaleFileError, ToolError
from app.permission import PermissionReply
from app.tools.multiedit import MultiEditTool

multiedit = MultiEditTool()

SOURCE = "import os\n\n\ndef load(path):\n    return open(path).read()\n\n\ndef save(path, text):\n    open(path, 'w').write(text)\n"


def change(old: str, new: str, replace_all: bool = False) -> dict:
    return {"oldString": old, "newString": new, "replaceAll": replace_all}


def versions(runtime, session_id, rel):
    return [(v.version, v.content) for v in runtime.store.history.versions(session_id, rel)]


async def test_edits_apply_in_order_each_to_the_previous_result(ctx, seen_file, runtime, session_id):
    path = seen_file("io.py", SOURCE)
    edits = [
        change("def load(path):", "def load(path: str) -> str:"),
        change(
            "def load(path: str) -> str:\n    return",
            "def load(path: str) -> str:\n    # read it\n    return",
        ),
        change("path", "p", replace_all=True),
    ]

    result = await multiedit.call({"filePath": "io.py", "edits": edits}, ctx)

    expected = (
        "import os\n\n\ndef load(p: str) -> str:\n    # read it\n    return open(p).read()\n\n\n"
        "def save(p, text):\n    open(p, 'w').write(text)\n"
    )
    assert path.read_text() == expected
    assert result.output == "Applied 3 edits to io.py."
    assert result.metadata["strategies"] == ["simple", "simple", "simple"]
    assert result.metadata["path"] == "io.py"
    assert versions(runtime, session_id, "io.py") == [("initial", SOURCE), ("v1", expected)]


async def test_a_failing_edit_writes_nothing_and_names_its_index(ctx, seen_file, runtime, session_id):
    path = seen_file("io.py", SOURCE)
    edits = [change("import os", "import sys"), change("open(path", "Path(path"), change("x", "y")]

    with pytest.raises(ToolError, match=r"^edit 2 of 3: Found multiple matches") as caught:
        await multiedit.call({"filePath": "io.py", "edits": edits}, ctx)

    assert caught.value.__cause__.kind == "multiple"
    assert path.read_text() == SOURCE
    assert versions(runtime, session_id, "io.py") == []


async def test_identical_strings_in_one_edit_fail_the_whole_call(ctx, seen_file):
    path = seen_file("io.py", SOURCE)
    with pytest.raises(
        ToolError, match="^edit 2 of 2: No changes to apply: oldString and newString are identical"
    ):
        await multiedit.call(
            {"filePath": "io.py", "edits": [change("os", "sys"), change("load", "load")]}, ctx
        )
    assert path.read_text() == SOURCE


async def test_the_first_edit_may_create_the_file_and_later_edits_apply_to_it(ctx, workspace):
    edits = [change("", "name = 'draft'\nversion = 1\n"), change("version = 1", "version = 2")]
    result = await multiedit.call({"filePath": "pkg/meta.py", "edits": edits}, ctx)
    assert (workspace / "pkg" / "meta.py").read_text() == "name = 'draft'\nversion = 2\n"
    assert result.metadata["strategies"] == ["create", "simple"]


async def test_an_empty_old_string_after_the_file_exists_is_refused(ctx, workspace):
    edits = [change("", "first\n"), change("", "second\n")]
    with pytest.raises(
        ToolError, match="^edit 2 of 2: oldString cannot be empty on an existing file: new.txt"
    ):
        await multiedit.call({"filePath": "new.txt", "edits": edits}, ctx)
    assert not (workspace / "new.txt").exists()


async def test_a_missing_file_is_reported_for_the_first_edit(ctx, workspace):
    (workspace / "config.toml").write_text("a = 1\n")
    with pytest.raises(
        ToolError, match=r"edit 1 of 1: File confg\.toml not found\. Did you mean config\.toml\?"
    ):
        await multiedit.call({"filePath": "confg.toml", "edits": [change("a = 1", "a = 2")]}, ctx)


async def test_an_empty_list_of_edits_is_refused(ctx):
    with pytest.raises(ToolError, match="edits: List should have at least 1 item"):
        await multiedit.call({"filePath": "io.py", "edits": []}, ctx)


async def test_unknown_keys_in_an_edit_are_refused(ctx):
    with pytest.raises(ToolError, match="edits.0.old_string is not a parameter"):
        await multiedit.call(
            {"filePath": "io.py", "edits": [{"old_string": "a", "oldString": "a", "newString": "b"}]}, ctx
        )


async def test_the_file_must_have_been_read(ctx, workspace):
    (workspace / "io.py").write_text(SOURCE)
    with pytest.raises(StaleFileError, match="view tool"):
        await multiedit.call({"filePath": "io.py", "edits": [change("os", "sys")]}, ctx)
    assert (workspace / "io.py").read_text() == SOURCE


async def test_crlf_is_kept_across_all_edits(ctx, seen_file):
    path = seen_file("win.txt", b"alpha\r\nbeta\r\ngamma\r\n")
    await multiedit.call(
        {"filePath": "win.txt", "edits": [change("alpha", "ALPHA"), change("beta\ngamma", "BETA")]}, ctx
    )
    assert path.read_bytes() == b"ALPHA\r\nBETA\r\n"


async def test_mixed_line_endings_are_kept_line_by_line_across_all_edits(ctx, seen_file):
    path = seen_file("mixed.txt", b"one\r\ntwo\nthree\r\nfour\n")
    await multiedit.call(
        {
            "filePath": "mixed.txt",
            "edits": [change("one", "ONE"), change("three\n", "3\n"), change("four", "4")],
        },
        ctx,
    )
    assert path.read_bytes() == b"ONE\r\ntwo\n3\r\n4\n"


async def test_fuzzy_matches_are_named_with_their_edit(ctx, seen_file):
    path = seen_file("f.py", "def f():\n    x = 1\n    return x\n")
    edits = [change("def f():", "def g():"), change("x = 1\nreturn x", "    return 1")]
    result = await multiedit.call({"filePath": "f.py", "edits": edits}, ctx)
    assert path.read_text() == "def g():\n    return 1\n"
    assert (
        result.output
        == "Applied 2 edits to f.py. (edit 2 matched with the line_trimmed strategy: check the result)"
    )


async def test_one_question_shows_the_combined_diff(make_runtime, workspace, permission_answers):
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    path = workspace / "io.py"
    path.write_text(SOURCE)
    ctx.records.record_read(ctx.session_id, path)
    answers = permission_answers(runtime, PermissionReply("allow_once"))

    await multiedit.call(
        {"filePath": "io.py", "edits": [change("import os", "import sys"), change("'w'", "'a'")]}, ctx
    )

    [request] = answers.requests
    assert (request.tool, request.subject, request.title) == ("multiedit", "io.py", "Apply 2 edits to io.py")
    assert "+import sys" in request.preview.text and "+    open(path, 'a')" in request.preview.text
    assert path.read_text() == SOURCE.replace("import os", "import sys").replace("'w'", "'a'")


async def test_a_refused_question_writes_nothing(make_runtime, workspace, permission_answers):
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    path = workspace / "io.py"
    path.write_text(SOURCE)
    ctx.records.record_read(ctx.session_id, path)
    permission_answers(runtime, PermissionReply("deny", "not now"))
    with pytest.raises(ToolError, match="not now"):
        await multiedit.call({"filePath": "io.py", "edits": [change("import os", "import sys")]}, ctx)
    assert path.read_text() == SOURCE


async def test_a_single_edit_is_counted_in_the_singular(ctx, seen_file):
    seen_file("one.txt", "a\n")
    result = await multiedit.call({"filePath": "one.txt", "edits": [change("a", "b")]}, ctx)
    assert (result.output, result.title) == ("Applied 1 edit to one.txt.", "one.txt")


# --- cases from OpenCode's edit suite ---------------------------------------------------
# OpenCode's multi-edit cases (ordered edits, all or nothing, BOM and CRLF), in our own data.


async def test_bom_and_crlf_are_kept_across_edits(ctx, seen_file):
    path = seen_file("App.cs", codecs.BOM_UTF8 + b"using System;\r\nclass App {}\r\n")
    await multiedit.call(
        {
            "filePath": "App.cs",
            "edits": [change("using System;", "using Core;"), change("class App {}", "class Main {}")],
        },
        ctx,
    )
    assert path.read_bytes() == codecs.BOM_UTF8 + b"using Core;\r\nclass Main {}\r\n"


async def test_edits_that_cancel_out_succeed_and_write_nothing(ctx, seen_file, runtime, session_id):
    path = seen_file("flag.txt", "debug = off\n")
    result = await multiedit.call(
        {"filePath": "flag.txt", "edits": [change("off", "on"), change("on", "off")]}, ctx
    )
    assert (
        result.output == "Applied 2 edits to flag.txt: together they leave it as it was; nothing was written."
    )
    assert (result.metadata["diff"], result.metadata["strategies"]) == ("", ["simple", "simple"])
    assert path.read_text() == "debug = off\n"
    assert versions(runtime, session_id, "flag.txt") == []


async def test_an_unwritable_file_is_refused(ctx, seen_file, make_unwritable):
    path = seen_file("ro.txt", "a\n")
    make_unwritable(path)
    with pytest.raises(ToolError, match=r"^ro.txt is not writable \(mode 0444\)"):
        await multiedit.call({"filePath": "ro.txt", "edits": [change("a", "b")]}, ctx)
    assert path.read_text() == "a\n"


async def test_each_edit_is_re_indented_to_the_file_and_the_result_says_so(ctx, seen_file):
    path = seen_file("io.py", SOURCE)
    edits = [  # the first body sent flat, the second one level too deep
        change(
            "def load(path):\nreturn open(path).read()",
            "def load(path):\nwith open(path) as f:\n    return f.read()",
        ),
        change("        open(path, 'w').write(text)", "        Path(path).write_text(text)"),
    ]
    result = await multiedit.call({"filePath": "io.py", "edits": edits}, ctx)
    assert path.read_text() == SOURCE.replace(
        "    return open(path).read()", "    with open(path) as f:\n        return f.read()"
    ).replace("    open(path, 'w').write(text)", "    Path(path).write_text(text)")
    assert result.output == (
        "Applied 2 edits to io.py. (edit 1 matched with the line_trimmed strategy: check the result; "
        "matched with different indentation: re-indented the replacement by 4 spaces; "
        "edit 2 matched with the line_trimmed strategy: check the result; "
        "matched with different indentation: re-indented the replacement by -4 spaces)"
    )


async def test_an_edit_whose_target_the_file_lacks_fails_the_whole_call(ctx, seen_file, runtime, session_id):
    path = seen_file("io.py", SOURCE)
    # The middle is misremembered (no such `if` there) and the change falls on it.
    remembered = (
        "    return open(path).read()\n\n\ndef save(path, text):\n    if text:\n    open(path, 'w').write(text)\n"
    )
    edits = [
        change("import os", "import os\nfrom pathlib import Path"),
        change(remembered, remembered.replace("    if text:\n", "    if text is not None:\n")),
    ]
    with pytest.raises(ToolError, match=r"^edit 2 of 2: Could not apply the edit") as caught:
        await multiedit.call({"filePath": "io.py", "edits": edits}, ctx)
    assert "'if text:'" in str(caught.value)
    assert path.read_text() == SOURCE
    assert versions(runtime, session_id, "io.py") == []
