"""The ls tool on real trees: the tree format, what it skips, the ignore parameter, the
1,000-entry cap (breadth first), errors and permissions."""

from __future__ import annotations

import os

import pytest

from app.core.errors import PermissionDeniedError, ToolError
from app.tools import ls
from app.tools.ls import MAX_ENTRIES, LsTool
from tests.tools.test_ignore import CRUSH_HIDDEN_NAMES

tool = LsTool()


async def test_tree_folders_first_sorted_and_indented(ctx, write_files) -> None:
    write_files({"b.txt": "", "a.txt": "", "src/z.py": "", "src/lib/util.py": "", "docs/readme.md": ""})
    result = await tool.call({}, ctx)
    assert result.output == "\n".join(
        [
            "./",
            "  docs/",
            "    readme.md",
            "  src/",
            "    lib/",
            "      util.py",
            "    z.py",
            "  a.txt",
            "  b.txt",
        ]
    )
    assert result.metadata == {"path": ".", "count": 8, "found": 8, "truncated": False}


async def test_skips_tool_folders_gitignored_paths_and_the_database(ctx, runtime, write_files) -> None:
    assert (runtime.root / ".opencode").is_dir()  # the runtime's database lives in the workspace
    write_files(
        {
            ".gitignore": "*.log\ndist/\n",
            ".git/HEAD": "",
            "node_modules/x/index.js": "",
            ".venv/bin/python": "",
            "src/__pycache__/a.pyc": "",
            "src/a.py": "",
            "app.log": "",
            "dist/bundle.js": "",
            ".env.example": "",
        }
    )
    assert (await tool.call({}, ctx)).output == "./\n  src/\n    a.py\n  .env.example\n  .gitignore"


async def test_a_subfolder_and_the_ignore_parameter(ctx, write_files) -> None:
    write_files({"src/a.py": "", "src/a.pyc": "", "src/gen/x.py": "", "src/keep/y.py": ""})
    result = await tool.call({"path": "src", "ignore": ["*.pyc", "gen/"]}, ctx)
    assert result.output == "src/\n  keep/\n    y.py\n  a.py"
    assert result.title == "src"


async def test_empty_folder(ctx, workspace) -> None:
    (workspace / "empty").mkdir()
    assert (await tool.call({"path": "empty"}, ctx)).output == "empty/\n  (empty folder)"


async def test_cap_cuts_the_deepest_levels_first(ctx, write_files) -> None:
    write_files({f"deep/sub/f{n:04}.txt": "" for n in range(MAX_ENTRIES + 50)} | {"top.txt": ""})
    result = await tool.call({}, ctx)
    lines = result.output.split("\n")
    assert lines[:4] == ["./", "  deep/", "    sub/", "      f0000.txt"]
    assert "  top.txt" in lines  # the shallow level survives the cut
    # 1,050 files, their two folders and top.txt: 53 left out
    assert result.metadata == {"path": ".", "count": MAX_ENTRIES, "found": MAX_ENTRIES + 53, "truncated": True}
    assert result.output.endswith(
        "(Listing cut at 1000 entries: 53 more left out. "
        "List a subfolder, add ignore patterns, or use glob to find specific files)"
    )


async def test_what_is_left_out_is_counted_up_to_a_ceiling(ctx, write_files, monkeypatch) -> None:
    write_files({f"f{n:04}.txt": "" for n in range(MAX_ENTRIES + 50)})
    monkeypatch.setattr(ls, "COUNT_CEILING", MAX_ENTRIES + 20)  # a folder of 100,000 files, in small
    result = await tool.call({}, ctx)
    assert result.metadata == {"path": ".", "count": MAX_ENTRIES, "found": MAX_ENTRIES + 21, "truncated": True}
    assert result.output.endswith("(Listing cut at 1000 entries: over 20 more left out. "
                                  "List a subfolder, add ignore patterns, or use glob to find specific files)")


async def test_errors_for_a_file_or_a_missing_path(ctx, write_files) -> None:
    write_files({"a.txt": ""})
    with pytest.raises(ToolError, match="^a.txt is a file, not a folder: use the view tool to read it$"):
        await tool.call({"path": "a.txt"}, ctx)
    with pytest.raises(ToolError, match="^nope does not exist"):
        await tool.call({"path": "nope"}, ctx)


async def test_permission_rules_on_the_folder_and_on_entries(make_runtime, write_files) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"ls": {"private": "deny", "*.env": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    write_files({"private/x": "", "cfg/.env": "", "cfg/app.toml": ""})
    with pytest.raises(PermissionDeniedError, match='ls private: denied by global rule "private"'):
        await tool.call({"path": "private"}, ctx)
    assert (await tool.call({"path": "cfg"}, ctx)).output == "cfg/\n  app.toml"


async def test_outside_the_workspace_needs_external_directory(make_runtime, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "d").mkdir(parents=True)
    (outside / "d" / "f.txt").write_text("")
    headless = make_runtime(policy="headless")
    with pytest.raises(PermissionDeniedError, match="external_directory"):
        await tool.call({"path": str(outside)}, headless.context("s"))
    allowed = make_runtime(policy="headless-yes")
    result = await tool.call({"path": str(outside)}, allowed.context("s"))
    assert result.output == f"{outside.as_posix()}/\n  d/\n    f.txt"


# --- cases from OpenCode's/Crush's suites ---------------------------------------------


async def test_empty_folders_tool_folders_and_git_from_opencodes_cases(ctx, workspace, write_files) -> None:
    (workspace / "empty").mkdir()
    write_files({"src/app.ts": "", "node_modules/pkg/index.js": "", ".git/config": "", "keep.txt": ""})
    result = await tool.call({}, ctx)
    assert result.output == "./\n  empty/\n  src/\n    app.ts\n  keep.txt"
    assert result.metadata["count"] == 4


async def test_sorted_folders_first_and_indented(ctx, write_files) -> None:
    write_files({"zebra.txt": "", "apple.txt": "", "banana.txt": "", "adir/nested.txt": "", "afile.txt": ""})
    assert (await tool.call({}, ctx)).output.split("\n")[1:] == [
        "  adir/",
        "    nested.txt",
        "  afile.txt",
        "  apple.txt",
        "  banana.txt",
        "  zebra.txt",
    ]


async def test_an_absolute_path_and_caller_ignore_globs(ctx, workspace, write_files) -> None:
    write_files({"docs/keep.txt": "", "docs/skip.md": "", "ignore.txt": "", "keep.txt": ""})
    result = await tool.call({"path": str(workspace), "ignore": ["docs/*.md", "ignore.txt"]}, ctx)
    assert result.output == "./\n  docs/\n    keep.txt\n  keep.txt"
    assert result.metadata["path"] == "."


async def test_a_path_with_a_nul_byte_is_refused(ctx) -> None:
    with pytest.raises(ToolError, match="contains a NUL character"):
        await tool.call({"path": "./safe\x00dir"}, ctx)


async def test_crushs_hidden_name_gitignore(ctx, write_files) -> None:
    write_files(CRUSH_HIDDEN_NAMES)
    assert (await tool.call({}, ctx)).output == "./\n  subdir/\n    file.go\n  regular.txt"


async def test_a_link_to_a_folder_outside_is_listed_not_entered(ctx, workspace, tmp_path) -> None:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("")
    os.symlink(secret.parent, workspace / "link")
    os.symlink(secret, workspace / "file-link")
    assert (await tool.call({}, ctx)).output == "./\n  file-link\n  link"


async def test_dot_ignore_files_are_honoured(ctx, write_files) -> None:
    write_files({".ignore": "generated/\n", "generated/x.py": "", "src/.rgignore": "*.snap\n", "src/t.snap": ""})
    assert (await tool.call({}, ctx)).output == "./\n  src/\n    .rgignore\n  .ignore"
