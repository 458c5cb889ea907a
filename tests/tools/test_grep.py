"""The grep tool on real trees, through both backends (ripgrep as a real subprocess, and
the pure-Python search): same files seen, same output, same errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.core.errors import PermissionDeniedError, ToolError
from app.tools.grep import MATCH_CEILING, MAX_MATCHES, GrepTool


@pytest.fixture(params=["rg", "python"])
def tool(request) -> GrepTool:
    return GrepTool(request.param)


def age(workspace: Path, *names: str) -> None:
    """Give the files decreasing modification times: the first is the newest."""
    for n, name in enumerate(names):
        stamp = 1_700_000_000 - n * 100
        os.utime(workspace / name, (stamp, stamp))


async def test_matches_grouped_by_file_newest_first(tool, ctx, workspace, write_files) -> None:
    write_files(
        {
            "src/old.py": "import os\nTODO: first\n",
            "src/new.py": "x = 1\n# TODO later\ny = 2\nTODO again\n",
            "README.md": "nothing here\n",
        }
    )
    age(workspace, "src/new.py", "src/old.py")
    result = await tool.call({"pattern": "TODO"}, ctx)
    assert result.output == (
        "Found 3 matches in 2 files\n"
        "src/new.py:\n  Line 2: # TODO later\n  Line 4: TODO again\n\n"
        "src/old.py:\n  Line 2: TODO: first"
    )
    assert result.metadata == {"path": ".", "matches": 3, "file_count": 2, "truncated": False}


async def test_regex_path_and_include(tool, ctx, workspace, write_files) -> None:
    write_files(
        {
            "web/a.ts": "function go() {}\n",
            "web/b.tsx": "const go = () => {}\n",
            "web/c.js": "function go() {}\n",
            "api/d.ts": "function go() {}\n",
        }
    )
    age(workspace, "web/b.tsx", "web/a.ts")
    result = await tool.call(
        {"pattern": r"(function|const) go\b", "path": "web", "include": "*.{ts,tsx}"}, ctx
    )
    assert result.output == (
        "Found 2 matches in 2 files\n"
        "web/b.tsx:\n  Line 1: const go = () => {}\n\n"
        "web/a.ts:\n  Line 1: function go() {}"
    )
    assert result.title == "(function|const) go\\b in web (files *.{ts,tsx})"
    deep = await tool.call({"pattern": "go", "include": "**/*.js"}, ctx)  # a leading **/ is harmless
    assert deep.output == "Found 1 matches in 1 files\nweb/c.js:\n  Line 1: function go() {}"


async def test_gitignore_is_respected_even_with_include(tool, ctx, write_files) -> None:
    write_files(
        {
            ".gitignore": "secret.py\nbuild/\n",
            "secret.py": "KEY = 1\n",
            "build/gen.py": "KEY = 2\n",
            "app.py": "KEY = 3\n",
            "node_modules/m/index.py": "KEY = 4\n",
            ".config/tool.py": "KEY = 5\n",  # hidden files are searched
        }
    )
    for include in (None, "*.py"):
        result = await tool.call({"pattern": "KEY", "include": include}, ctx)
        assert result.metadata["file_count"] == 2
        assert "app.py:" in result.output and ".config/tool.py:" in result.output


async def test_database_and_binary_files_are_skipped(tool, ctx, runtime, write_files) -> None:
    assert (runtime.root / ".opencode").is_dir()  # the runtime's database folder
    write_files({"data.bin": b"needle\x00\x01", "text.txt": "needle\n", ".opencode/log.txt": "needle\n"})
    result = await tool.call({"pattern": "needle"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ntext.txt:\n  Line 1: needle"


async def test_at_most_100_matches_with_a_note(tool, ctx, workspace, write_files) -> None:
    write_files({"a.txt": "hit\n" * 80, "b.txt": "hit\n" * 70})
    age(workspace, "a.txt", "b.txt")
    result = await tool.call({"pattern": "hit"}, ctx)
    assert result.output.startswith("Found 150 matches in 2 files\na.txt:\n  Line 1: hit\n")
    assert result.output.count("  Line ") == MAX_MATCHES
    assert "b.txt:\n  Line 1: hit" in result.output and "Line 21:" not in result.output.split("b.txt:")[1]
    assert result.output.endswith(
        "(Results are truncated: showing 100 of 150 matches. "
        "Use a more specific pattern, path or include to see the others)"
    )
    assert result.metadata["truncated"] is True


async def test_the_search_stops_at_the_ceiling(tool, ctx, write_files) -> None:
    write_files({"huge.txt": "x\n" * (MATCH_CEILING + 500)})
    result = await tool.call({"pattern": "x"}, ctx)
    assert result.output.startswith(f"Found {MATCH_CEILING}+ matches in 1 files\n")
    assert f"showing 100 of more than {MATCH_CEILING} matches" in result.output


async def test_a_single_file_long_lines_and_crlf(tool, ctx, write_files) -> None:
    write_files({"one.txt": "a" * 2100 + "Z\r\nZ end\r\n", "two.txt": "Z\n"})
    result = await tool.call({"pattern": "Z", "path": "one.txt"}, ctx)
    assert result.output == (
        "Found 2 matches in 1 files\none.txt:\n"
        f"  Line 1: {'a' * 2000}... [line cut: 101 more characters]\n"
        "  Line 2: Z end"
    )


async def test_no_matches(tool, ctx, write_files) -> None:
    write_files({"a.py": "x\n"})
    result = await tool.call({"pattern": "absent", "include": "*.py"}, ctx)
    assert result.output == "No matches found for 'absent' in . (files *.py)"
    assert result.metadata["matches"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"pattern": "foo("},
            "^invalid regular expression 'foo\\(': .+; fix it, or escape special characters",
        ),
        ({"pattern": "x", "path": "nope"}, "^path nope does not exist"),
        (
            {"pattern": "x", "include": "src/*.py"},
            '^include "src/\\*.py" names folders.*put the folder in path$',
        ),
        (
            {"pattern": "x", "include": "*.{py"},
            "^invalid include glob: the pattern '\\*.{py' has an unclosed",
        ),
        ({"pattern": ""}, "pattern"),
    ],
)
async def test_errors(tool, ctx, write_files, args: dict, message: str) -> None:
    write_files({"a.py": "x\n"})
    with pytest.raises(ToolError, match=message) as caught:
        await tool.call(args, ctx)
    assert "\n" not in str(caught.value)


async def test_permission_rules(tool, make_runtime, write_files) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"grep": {"vault": "deny", "*.env": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    write_files({"vault/a.txt": "token\n", "cfg/.env": "token=1\n", "cfg/app.toml": "token = 2\n"})
    with pytest.raises(PermissionDeniedError, match='grep vault: denied by global rule "vault"'):
        await tool.call({"pattern": "token", "path": "vault"}, ctx)
    result = await tool.call({"pattern": "token", "path": "cfg"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ncfg/app.toml:\n  Line 1: token = 2"


async def test_a_deny_for_every_tool_hides_files_from_the_search(tool, make_runtime, write_files) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"*": {"*.env": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    write_files({"cfg/.env": "token=1\n", "cfg/app.toml": "token = 2\n"})
    result = await tool.call({"pattern": "token"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ncfg/app.toml:\n  Line 1: token = 2"


async def test_outside_the_workspace_needs_external_directory(tool, make_runtime, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("far\n")
    with pytest.raises(PermissionDeniedError, match="external_directory"):
        await tool.call(
            {"pattern": "far", "path": str(outside)}, make_runtime(policy="headless").context("s")
        )
    result = await tool.call({"pattern": "far", "path": str(outside)}, make_runtime().context("s"))
    assert result.output == f"Found 1 matches in 1 files\n{outside.as_posix()}/f.txt:\n  Line 1: far"


async def test_both_backends_see_the_same_tree(ctx, workspace, write_files) -> None:
    write_files(
        {
            ".gitignore": "*.log\n!keep.log\n/out/\n",
            "a.log": "m\n",
            "keep.log": "m\n",
            "out/x.txt": "m\n",
            "sub/out/y.txt": "m\n",  # "/out/" is anchored at the root
            "sub/.gitignore": "*.md\n",
            "sub/n.md": "m\n",
            "n.md": "m\n",
            "__pycache__/c.txt": "m\n",
        }
    )
    age(workspace, "keep.log", "sub/out/y.txt", "n.md")
    outputs = [(await GrepTool(backend).call({"pattern": "^m$"}, ctx)).output for backend in ("rg", "python")]
    assert outputs[0] == outputs[1]
    assert outputs[0] == (
        "Found 3 matches in 3 files\nkeep.log:\n  Line 1: m\n\nsub/out/y.txt:\n  Line 1: m\n\nn.md:\n  Line 1: m"
    )


async def test_backend_choice_by_config(make_runtime, write_files) -> None:
    write_files({"a.txt": "xb\n"})
    lookbehind = {"pattern": "(?<=x)b"}  # Python's re has look-behind, ripgrep's regex does not

    def ctx_with(backend: str):
        runtime = make_runtime(config={"tools": {"grep": {"backend": backend}}})
        return runtime.context(runtime.store.sessions.create().id)

    assert (
        await GrepTool().call(lookbehind, ctx_with("python"))
    ).output == "Found 1 matches in 1 files\na.txt:\n  Line 1: xb"
    with pytest.raises(ToolError, match="look-around"):
        await GrepTool().call(lookbehind, ctx_with("auto"))
    with pytest.raises(ValueError, match="unknown grep backend 'fast'"):
        GrepTool("fast")


def test_the_backend_is_set_from_the_environment_like_any_setting(workspace) -> None:
    from app.config import load_config
    from app.core.errors import ConfigError

    env = {"OPENCODE_TOOLS__GREP__BACKEND": "python"}
    assert load_config(workspace, global_path=workspace / "none.json", env=env).tools.grep.backend == "python"
    with pytest.raises(ConfigError, match="OPENCODE_TOOLS__GREP__BACKEND"):
        load_config(workspace, global_path=workspace / "none.json", env={"OPENCODE_TOOLS__GREP__BACKEND": "fast"})


async def test_without_ripgrep_auto_falls_back_and_rg_is_an_error(
    ctx, tmp_path, write_files, monkeypatch
) -> None:
    write_files({"a.txt": "xb\n"})
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert (await GrepTool().call({"pattern": "(?<=x)b"}, ctx)).metadata["matches"] == 1
    with pytest.raises(
        ToolError, match="ripgrep \\(rg\\) was not found: install the ripgrep package, or set"
    ):
        await GrepTool("rg").call({"pattern": "b"}, ctx)


async def test_root_gitignore_applies_when_searching_a_subfolder(tool, ctx, write_files) -> None:
    write_files(
        {".gitignore": "/src/gen/\n", "src/gen/x.py": "hit\n", "src/a.py": "hit\n", "gen/y.py": "hit\n"}
    )
    result = await tool.call({"pattern": "hit", "path": "src"}, ctx)
    assert result.output == "Found 1 matches in 1 files\nsrc/a.py:\n  Line 1: hit"


async def test_patterns_matching_empty_text_see_only_real_lines(tool, ctx, write_files) -> None:
    write_files({"gaps.txt": "a\n\nb\n", "empty.txt": "", "last.txt": "x\n\ny"})
    result = await tool.call({"pattern": "^$"}, ctx)
    assert result.metadata["matches"] == 2  # no "line" after a final newline, none in an empty file
    assert "gaps.txt:\n  Line 2: " in result.output and "last.txt:\n  Line 2: " in result.output
    assert "empty.txt" not in result.output


async def test_crlf_lines_end_before_the_carriage_return(tool, ctx, write_files) -> None:
    write_files({"win.txt": b"foo\r\n\r\nbar \r\n"})
    assert (await tool.call({"pattern": "foo$"}, ctx)).output == "Found 1 matches in 1 files\nwin.txt:\n  Line 1: foo"
    assert (await tool.call({"pattern": "^$"}, ctx)).output == "Found 1 matches in 1 files\nwin.txt:\n  Line 2: "
    assert (await tool.call({"pattern": r"r\s$"}, ctx)).metadata["matches"] == 1


async def test_byte_order_marks_are_read_as_ripgrep_reads_them(tool, ctx, workspace, write_files) -> None:
    write_files(
        {
            "bom8.txt": b"\xef\xbb\xbfneedle one\n",
            "le16.txt": "needle two\r\nmore\r\n".encode("utf-16"),  # a BOM, then little-endian
            "be16.txt": b"\xfe\xff" + "needle three\n".encode("utf-16-be"),
        }
    )
    age(workspace, "bom8.txt", "le16.txt", "be16.txt")
    result = await tool.call({"pattern": "^needle"}, ctx)
    assert result.output == (
        "Found 3 matches in 3 files\n"
        "bom8.txt:\n  Line 1: needle one\n\n"
        "le16.txt:\n  Line 1: needle two\n\n"
        "be16.txt:\n  Line 1: needle three"
    )


async def test_a_nul_byte_far_into_a_file_still_makes_it_binary(tool, ctx, write_files) -> None:
    """ripgrep notices a NUL byte only when it reaches it, after printing earlier matches."""
    late_nul = b"needle\n" + b"y" * 300_000 + b"\n\0needle\n"
    write_files({"late.bin": late_nul, "text.txt": "needle\n"})
    result = await tool.call({"pattern": "needle"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ntext.txt:\n  Line 1: needle"
    named = await tool.call({"pattern": "needle", "path": "late.bin"}, ctx)
    assert named.output == "No matches found for 'needle' in late.bin"


@pytest.mark.parametrize("pattern", ["a\\nb", "a\nb", "[^x]\\n"])
async def test_a_line_break_in_the_pattern_is_a_clear_error(tool, ctx, write_files, pattern: str) -> None:
    write_files({"a.txt": "a\nb\n"})
    with pytest.raises(ToolError, match="line break.*one line at a time") as caught:
        await tool.call({"pattern": pattern}, ctx)
    assert "\n" not in str(caught.value).replace(pattern, "")


async def test_a_very_long_line_is_cut_with_its_length(tool, ctx, write_files) -> None:
    write_files({"min.js": "var a=1;" * 200_000 + "needle\nneedle\n"})
    result = await tool.call({"pattern": "needle"}, ctx)
    first, second = result.output.split("\n")[2:4]
    assert first == f"  Line 1: {'var a=1;' * 250}... [line cut: {1_600_006 - 2000} more characters]"
    assert second == "  Line 2: needle"


async def test_a_newline_inside_a_class_is_no_line_break(tool, ctx, write_files) -> None:
    write_files({"a.txt": "say needle\n"})
    result = await tool.call({"pattern": "^[^\\n]*needle$"}, ctx)
    assert result.output == "Found 1 matches in 1 files\na.txt:\n  Line 1: say needle"


# --- cases from OpenCode's/Crush's suites, and the ignore files ripgrep reads ---------


async def test_a_file_path_without_a_final_newline(tool, ctx, write_files) -> None:
    """OpenCode: grep given a file path finds "line2" on line 2 of "line1\\nline2\\nline3"."""
    write_files({"test.txt": "line1\nline2\nline3"})
    result = await tool.call({"pattern": "line2", "path": "test.txt"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ntest.txt:\n  Line 2: line2"
    assert result.metadata["matches"] == 1


async def test_no_match_reports_zero_matches(tool, ctx, write_files) -> None:
    write_files({"test.txt": "hello world"})
    result = await tool.call({"pattern": "xyznonexistentpatternxyz123"}, ctx)
    assert result.output == "No matches found for 'xyznonexistentpatternxyz123' in ."
    assert result.metadata == {"path": ".", "matches": 0, "file_count": 0, "truncated": False}


async def test_crushs_mixed_tree(tool, ctx, write_files) -> None:
    """Crush's search case: ignored, binary and empty files give nothing. Crush also skips
    hidden files; we search them, as OpenCode does (`rg --hidden`)."""
    write_files(
        {
            "file1.go": 'package main\nfunc main() {\n\tfmt.Println("hello world")\n}',
            "file2.js": "console.log('hello world');",
            "file3.txt": "hello world from text file",
            "binary.exe": b"\x00\x01\x02\x03hello world",
            "empty.txt": "",
            "subdir/nested.go": "package nested\n// hello world comment",
            ".hidden.txt": "hello world in hidden file",
            "file4.txt": "hello world from a banana",
            ".gitignore": "file4.txt\nignored/\n*.key\n",
            "ignored/file5.txt": "hello world",
            "secret.key": "hello world",
            "node_modules/lib.js": "hello world",
        }
    )
    result = await tool.call({"pattern": "hello world"}, ctx)
    found = {line[:-1] for line in result.output.split("\n") if line.endswith(":") and not line.startswith(" ")}
    assert found == {"file1.go", "file2.js", "file3.txt", "subdir/nested.go", ".hidden.txt"}
    assert "file1.go:\n  Line 3: \tfmt.Println(\"hello world\")" in result.output


async def test_the_line_of_crushs_column_case(tool, ctx, write_files) -> None:
    write_files({"testdata/grep.txt": "nothing here\nI wanna grep THIS particular word\n"})
    result = await tool.call({"pattern": "THIS", "path": "testdata"}, ctx)
    assert result.output == "Found 1 matches in 1 files\ntestdata/grep.txt:\n  Line 2: I wanna grep THIS particular word"


async def test_an_escaped_pipe_is_a_literal_pipe(tool, ctx, write_files) -> None:
    write_files({"pipes.txt": "a|b\naXb\n"})
    result = await tool.call({"pattern": "a\\|b"}, ctx)
    assert result.output == "Found 1 matches in 1 files\npipes.txt:\n  Line 1: a|b"


async def test_ignore_files_above_the_workspace_do_not_hide_it(tool, ctx, workspace, write_files) -> None:
    """ripgrep reads ignore files in every folder above the one searched; a `*` in a
    .gitignore in the user's home (a dotfiles repository) made every search come back
    empty, while ls and glob listed the files."""
    (workspace.parent / ".gitignore").write_text("*\n")
    (workspace.parent / ".ignore").write_text("*.py\n")
    write_files({"src/app.py": "needle\n", "notes.txt": "needle\n"})
    for path in (".", "src"):
        result = await tool.call({"pattern": "needle", "path": path}, ctx)
        assert result.metadata["matches"] == (2 if path == "." else 1), path


async def test_dot_ignore_files_are_honoured(tool, ctx, write_files) -> None:
    write_files(
        {
            ".gitignore": "*.log\n",
            ".ignore": "generated/\n!keep.log\n",
            "generated/x.py": "needle\n",
            "a.log": "needle\n",
            "keep.log": "needle\n",
            "src/.rgignore": "*.snap\n",
            "src/t.snap": "needle\n",
            "src/t.py": "needle\n",
        }
    )
    result = await tool.call({"pattern": "needle"}, ctx)
    assert result.metadata["file_count"] == 2
    assert "keep.log:" in result.output and "src/t.py:" in result.output


async def test_a_subfolder_search_keeps_the_rules_of_every_folder_above_it(
    tool, ctx, workspace, write_files
) -> None:
    write_files(
        {
            ".git/info/exclude": "*.swp\n",
            ".gitignore": "*.log\n/pkg/sub/gen/\n",
            "pkg/.gitignore": "!keep.log\n/sub/cache/\n",
            "pkg/.ignore": "*.tmp\n",
            "pkg/sub/a.log": "needle\n",
            "pkg/sub/keep.log": "needle\n",
            "pkg/sub/gen/g.py": "needle\n",
            "pkg/sub/cache/c.py": "needle\n",
            "pkg/sub/x.tmp": "needle\n",
            "pkg/sub/x.swp": "needle\n",
            "pkg/sub/ok.py": "needle\n",
            "pkg/sub/deeper/gen/d.py": "needle\n",  # "/pkg/sub/gen/" is anchored
        }
    )
    age(workspace, "pkg/sub/keep.log", "pkg/sub/ok.py", "pkg/sub/deeper/gen/d.py")
    result = await tool.call({"pattern": "needle", "path": "pkg/sub"}, ctx)
    assert result.output == (
        "Found 3 matches in 3 files\npkg/sub/keep.log:\n  Line 1: needle\n\n"
        "pkg/sub/ok.py:\n  Line 1: needle\n\npkg/sub/deeper/gen/d.py:\n  Line 1: needle"
    )


async def test_folder_names_with_glob_characters_above_a_subfolder(tool, ctx, write_files) -> None:
    """The rules handed to rg for the folders above name those folders: their `[`, `*` and
    `{` must stay literal."""
    write_files(
        {
            "we[ird]{1}/.gitignore": "/deep/a.txt\n",
            "we[ird]{1}/deep/a.txt": "needle\n",
            "we[ird]{1}/deep/b.txt": "needle\n",
        }
    )
    result = await tool.call({"pattern": "needle", "path": "we[ird]{1}/deep"}, ctx)
    assert result.output == "Found 1 matches in 1 files\nwe[ird]{1}/deep/b.txt:\n  Line 1: needle"
