"""The view tool on real files: numbering, paging, long lines, the read record, binary
and image files, missing files with suggestions, and the permission checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.errors import BinaryFileError, PermissionDeniedError, ToolError
from app.permission import PermissionReply
from app.tools.view import ViewTool

tool = ViewTool()


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=start))


async def test_lines_are_numbered_like_cat_n(ctx, write_files) -> None:
    write_files({"src/a.py": "def f():\n\treturn 1\n"})
    result = await tool.call({"filePath": "src/a.py"}, ctx)
    assert result.output == "     1\tdef f():\n     2\t\treturn 1"
    assert result.metadata == {"path": "src/a.py", "offset": 0, "lines": 2, "more": False}
    assert result.title == "src/a.py"


async def test_offset_and_limit_page_through_the_file(ctx, write_files) -> None:
    write_files({"a.txt": "".join(f"line {n}\n" for n in range(1, 11))})
    result = await tool.call({"filePath": "a.txt", "offset": 3, "limit": 4}, ctx)
    assert result.output == (
        numbered([f"line {n}" for n in range(4, 8)], start=4)
        + "\n\n(File has more lines. Use offset 7 to read beyond line 7)"
    )
    assert result.metadata["more"] is True
    last = await tool.call({"filePath": "a.txt", "offset": 7, "limit": 4}, ctx)
    assert last.output == numbered(["line 8", "line 9", "line 10"], start=8)


async def test_default_limit_is_2000_lines(ctx, write_files) -> None:
    write_files({"big.txt": "x\n" * 2500})
    result = await tool.call({"filePath": "big.txt"}, ctx)
    assert result.metadata["lines"] == 2000
    assert result.output.endswith(
        "  2000\tx\n\n(File has more lines. Use offset 2000 to read beyond line 2000)"
    )


async def test_a_page_ending_at_the_last_line_has_no_note(ctx, write_files) -> None:
    write_files({"a.txt": "1\n2\n3"})
    result = await tool.call({"filePath": "a.txt", "limit": 3}, ctx)
    assert result.output == numbered(["1", "2", "3"])


async def test_long_lines_are_cut(ctx, write_files) -> None:
    write_files({"min.js": "a" * 2500 + "\nshort\n"})
    output = (await tool.call({"filePath": "min.js"}, ctx)).output
    first, second = output.split("\n")
    assert first == "     1\t" + "a" * 2000 + "... [line cut: 500 more characters]"
    assert second == "     2\tshort"


async def test_crlf_and_bom_are_not_shown(ctx, write_files) -> None:
    write_files({"win.txt": b"\xef\xbb\xbfone\r\ntwo\r\n"})
    assert (await tool.call({"filePath": "win.txt"}, ctx)).output == numbered(["one", "two"])


async def test_empty_file(ctx, write_files) -> None:
    write_files({"empty.txt": ""})
    assert (await tool.call({"filePath": "empty.txt"}, ctx)).output == "(the file is empty)"
    assert (await tool.call({"filePath": "empty.txt", "offset": 3}, ctx)).output == "(the file is empty)"


async def test_a_fifo_is_refused_not_waited_on(ctx, workspace) -> None:
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="^pipe is a FIFO, not a regular file"):
        await tool.call({"filePath": "pipe"}, ctx)


async def test_offset_past_the_end_is_an_error(ctx, write_files) -> None:
    write_files({"a.txt": "1\n2\n"})
    with pytest.raises(
        ToolError, match="offset 5 is past the end of a.txt, which has 2 lines: use an offset below 2"
    ):
        await tool.call({"filePath": "a.txt", "offset": 5}, ctx)


async def test_the_read_is_recorded_also_when_partial(ctx, workspace, write_files) -> None:
    write_files({"a.txt": "1\n2\n3\n"})
    path = workspace / "a.txt"
    assert ctx.records.last_read(ctx.session_id, path) is None
    await tool.call({"filePath": "a.txt", "limit": 1}, ctx)
    assert ctx.records.last_read(ctx.session_id, path) is not None
    ctx.records.assert_fresh(ctx.session_id, path)  # an edit may follow


async def test_binary_file_gets_a_message_and_no_read_record(ctx, workspace, write_files) -> None:
    write_files({"data.bin": b"\x00\x01\x02" * 700})
    with pytest.raises(BinaryFileError, match=r"^data.bin is a binary file \(2.1 KB\), not UTF-8 text"):
        await tool.call({"filePath": "data.bin"}, ctx)
    assert ctx.records.last_read(ctx.session_id, workspace / "data.bin") is None


async def test_image_type_and_size_from_its_signature(ctx, write_files) -> None:
    write_files({"logo.dat": b"\x89PNG\r\n\x1a\n" + b"\x00" * 92})
    with pytest.raises(
        BinaryFileError, match=r"^logo.dat is an image \(PNG, 100 bytes\): view shows text only"
    ):
        await tool.call({"filePath": "logo.dat"}, ctx)


async def test_image_type_from_the_extension(ctx, write_files) -> None:
    write_files({"photo.webp": b"\x00garbage"})
    with pytest.raises(BinaryFileError, match=r"image \(WEBP, 8 bytes\)"):
        await tool.call({"filePath": "photo.webp"}, ctx)


async def test_invalid_utf8_past_the_sniffed_start_is_binary_when_reached(ctx, write_files) -> None:
    write_files({"latin.txt": b"a\n" * 5000 + b"caf\xe9\n"})
    assert (await tool.call({"filePath": "latin.txt", "limit": 1}, ctx)).output.startswith(
        numbered(["a"]) + "\n\n"
    )
    with pytest.raises(BinaryFileError, match="latin.txt is a binary file"):
        await tool.call({"filePath": "latin.txt", "offset": 4990}, ctx)


async def test_directory_points_to_ls(ctx, write_files) -> None:
    write_files({"src/a.py": ""})
    with pytest.raises(ToolError, match="^src is a directory, not a file: use the ls tool to list it$"):
        await tool.call({"filePath": "src"}, ctx)


async def test_missing_file_suggests_similar_names(ctx, write_files) -> None:
    write_files({"src/main.py": "", "src/maint.py": "", "src/other.txt": ""})
    with pytest.raises(ToolError) as caught:
        await tool.call({"filePath": "src/mian.py"}, ctx)
    assert str(caught.value) == (
        "src/mian.py does not exist. Did you mean: src/main.py, src/maint.py? View one of those, or use glob to search"
    )


async def test_missing_file_without_similar_names_or_folder(ctx, write_files) -> None:
    write_files({"src/main.py": ""})
    with pytest.raises(ToolError, match="^src/zzz.rs does not exist: use ls src or glob to find the file$"):
        await tool.call({"filePath": "src/zzz.rs"}, ctx)
    with pytest.raises(ToolError, match="^nope/a.py does not exist, nor does its folder nope"):
        await tool.call({"filePath": "nope/a.py"}, ctx)


async def test_invalid_arguments(ctx) -> None:
    with pytest.raises(ToolError, match="filePath is required"):
        await tool.call({}, ctx)
    with pytest.raises(ToolError, match="offset"):
        await tool.call({"filePath": "a", "offset": -1}, ctx)


async def test_paths_the_system_refuses_are_errors_not_crashes(ctx) -> None:
    with pytest.raises(ToolError, match="contains a NUL character"):
        await tool.call({"filePath": "a\0b.txt"}, ctx)
    with pytest.raises(ToolError, match="^n+ cannot be read: File name too long; check the path$"):
        await tool.call({"filePath": "n" * 300}, ctx)


async def test_a_deny_rule_refuses_the_read(make_runtime, write_files) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"view": {"*.env": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    write_files({"config/.env": "SECRET=1\n", "a.txt": "ok\n"})
    with pytest.raises(PermissionDeniedError, match='view config/.env: denied by global rule "\\*.env"'):
        await tool.call({"filePath": "config/.env"}, ctx)
    assert ctx.records.last_read(ctx.session_id, runtime.root / "config/.env") is None
    assert (await tool.call({"filePath": "a.txt"}, ctx)).output == numbered(["ok"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "notes.txt"
    path.parent.mkdir()
    path.write_text("far away\n")
    return path


async def test_outside_the_workspace_asks_external_directory(
    make_runtime, permission_answers, outside
) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    result = await tool.call({"filePath": str(outside)}, ctx)
    assert result.output == numbered(["far away"])
    assert result.metadata["path"] == outside.as_posix()
    assert [(r.tool, r.subject) for r in answers.requests] == [("external_directory", outside.as_posix())]
    assert ctx.records.last_read(ctx.session_id, outside) is not None


async def test_outside_the_workspace_refused(make_runtime, permission_answers, outside) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    permission_answers(runtime, PermissionReply("deny", "stay in the project"))
    with pytest.raises(
        PermissionDeniedError, match='The user denied this external_directory: "stay in the project"'
    ):
        await tool.call({"filePath": str(outside)}, ctx)
    headless = make_runtime(policy="headless")
    with pytest.raises(PermissionDeniedError, match="needs approval"):
        await tool.call({"filePath": str(outside)}, headless.context("s"))


async def asked_about(make_runtime, permission_answers, path: str):
    """The one question viewing ``path`` asks, denied (the message shortens a long path,
    so the request itself is compared)."""
    runtime = make_runtime(policy="interactive")
    answers = permission_answers(runtime, PermissionReply("deny", "no"))
    with pytest.raises(PermissionDeniedError):
        await tool.call({"filePath": path}, runtime.context(runtime.store.sessions.create().id))
    [asked] = answers.requests
    return asked


async def test_a_symlink_leading_outside_is_outside(make_runtime, permission_answers, workspace, outside) -> None:
    os.symlink(outside, workspace / "link.txt")
    asked = await asked_about(make_runtime, permission_answers, "link.txt")
    assert (asked.tool, asked.subject) == ("external_directory", outside.as_posix())


async def test_inside_the_workspace_nobody_is_asked(make_runtime, permission_answers, write_files) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime)
    write_files({"a.txt": "1\n"})
    await tool.call({"filePath": "./a.txt"}, ctx)
    assert answers.requests == []


# --- cases from OpenCode's/Crush's suites ---------------------------------------------

FIVE_LINES = "line 1\nline 2\nline 3\nline 4\nline 5"  # no final newline


@pytest.mark.parametrize(
    ("offset", "limit", "shown", "more"),
    [
        (0, 5, [1, 2, 3, 4, 5], False),  # exactly limit lines remain
        (0, 4, [1, 2, 3, 4], True),  # one more than the limit
        (4, 3, [5], False),  # the offset at the last line
        (10, 5, None, False),  # past the end: Crush shows nothing, OpenCode and we refuse
    ],
)
async def test_crushs_paging_boundaries(ctx, write_files, offset, limit, shown, more) -> None:
    write_files({"sample.txt": FIVE_LINES})
    args = {"filePath": "sample.txt", "offset": offset, "limit": limit}
    if shown is None:
        with pytest.raises(ToolError, match="offset 10 is past the end of sample.txt, which has 5 lines"):
            await tool.call(args, ctx)
        return
    result = await tool.call(args, ctx)
    assert result.output.split("\n\n")[0] == numbered([f"line {n}" for n in shown], start=shown[0])
    assert result.metadata["more"] is more


async def test_opencodes_limit_and_offset_cases(ctx, write_files) -> None:
    write_files({"many.txt": "\n".join(f"line{n}" for n in range(100))})
    first = await tool.call({"filePath": "many.txt", "limit": 10}, ctx)
    assert "line9" in first.output and "line10" not in first.output
    assert first.output.endswith("(File has more lines. Use offset 10 to read beyond line 10)")
    page = await tool.call({"filePath": "many.txt", "offset": 10, "limit": 5}, ctx)
    assert page.output == numbered([f"line{n}" for n in range(10, 15)], start=11) + (
        "\n\n(File has more lines. Use offset 15 to read beyond line 15)"
    )


async def test_a_single_long_line_without_a_newline_is_cut(ctx, write_files) -> None:
    write_files({"long-line.txt": "x" * 3000})
    result = await tool.call({"filePath": "long-line.txt"}, ctx)
    assert result.output == "     1\t" + "x" * 2000 + "... [line cut: 1000 more characters]"


async def test_an_empty_file_at_the_default_offset(ctx, write_files) -> None:
    write_files({"empty.txt": ""})
    result = await tool.call({"filePath": "empty.txt"}, ctx)
    assert result.metadata == {"path": "empty.txt", "offset": 0, "lines": 0, "more": False}


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("image.bmp", "BM text content"),  # an image's extension with text inside is text
        ("photo.tiff", "II text content"),
        ("photo.avif", "avif text content"),
        ("schema.fbs", "namespace MyGame;\n\ntable Monster {\n  pos:Vec3;\n}\n"),
        ("module.wasm", "not really wasm"),  # OpenCode refuses by extension; text is text here
    ],
)
async def test_text_is_shown_whatever_the_extension(ctx, write_files, name: str, data: str) -> None:
    write_files({name: data})
    result = await tool.call({"filePath": name}, ctx)
    assert result.output == numbered(data.rstrip("\n").split("\n"))


async def test_image_and_binary_content_whatever_the_extension(ctx, write_files) -> None:
    jpeg = bytes([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01])
    write_files({"image.bin": jpeg, "null-byte.txt": b"hello\x00world"})
    with pytest.raises(BinaryFileError, match=r"^image.bin is an image \(JPEG, 12 bytes\)"):
        await tool.call({"filePath": "image.bin"}, ctx)
    with pytest.raises(BinaryFileError, match=r"^null-byte.txt is a binary file \(11 bytes\)"):
        await tool.call({"filePath": "null-byte.txt"}, ctx)


async def test_an_absolute_path_inside_the_workspace_asks_nobody(
    make_runtime, permission_answers, workspace, write_files
) -> None:
    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)
    answers = permission_answers(runtime)
    write_files({"subdir/test.txt": "nested content"})
    result = await tool.call({"filePath": str(workspace / "subdir" / "test.txt")}, ctx)
    assert result.output == numbered(["nested content"])
    assert result.metadata["path"] == "subdir/test.txt"
    assert answers.requests == []


async def test_a_relative_path_leaving_the_workspace_asks_external_directory(
    make_runtime, permission_answers, workspace
) -> None:
    (workspace.parent / "outside.txt").write_text("secret\n")
    asked = await asked_about(make_runtime, permission_answers, "../outside.txt")
    assert (asked.tool, asked.subject) == ("external_directory", (workspace.parent / "outside.txt").as_posix())


async def test_a_link_inside_to_a_file_inside_shows_the_file(ctx, workspace, write_files) -> None:
    write_files({"real/notes.md": "kept\n"})
    os.symlink("real/notes.md", workspace / "docs.md")
    result = await tool.call({"filePath": "docs.md"}, ctx)
    assert result.output == numbered(["kept"])
    assert result.metadata["path"] == "real/notes.md"
    assert ctx.records.last_read(ctx.session_id, workspace / "real" / "notes.md") is not None


async def test_unicode_names_and_their_near_misses(ctx, write_files) -> None:
    write_files({"dénoué.txt": "ça va\n"})
    assert (await tool.call({"filePath": "dénoué.txt"}, ctx)).output == numbered(["ça va"])
    with pytest.raises(ToolError, match=r"^denoue.txt does not exist. Did you mean: dénoué.txt\?"):
        await tool.call({"filePath": "denoue.txt"}, ctx)
