"""The glob tool on real trees: pattern semantics, newest first, .gitignore, the cap,
paths relative to the workspace root, and the errors."""

from __future__ import annotations

import os

import pytest

from app.core.errors import PermissionDeniedError, ToolError
from app.tools.glob import MAX_RESULTS, GlobTool

tool = GlobTool()

TREE = {
    "README.md": "",
    "docs/guide.md": "",
    "setup.py": "",
    "src/app/main.py": "",
    "src/app/test_main.py": "",
    "src/test_top.py": "",
    "src/web/view.ts": "",
    "src/web/view.tsx": "",
    "src/web/view.js": "",
}


async def found(ctx, **args) -> set[str]:
    output = (await tool.call(args, ctx)).output
    return set(output.split("\n")) if not output.startswith("No files") else set()


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("**/*.py", {"setup.py", "src/app/main.py", "src/app/test_main.py", "src/test_top.py"}),
        ("*.md", {"README.md"}),  # "*" does not descend into folders
        ("**/*.md", {"README.md", "docs/guide.md"}),
        ("src/**/test_*.py", {"src/app/test_main.py", "src/test_top.py"}),
        ("src/web/*.{ts,tsx}", {"src/web/view.ts", "src/web/view.tsx"}),
        ("src/*/main.py", {"src/app/main.py"}),
        ("./src/web/view.js", {"src/web/view.js"}),
        ("src/**", {p for p in TREE if p.startswith("src/")}),
        ("**/nothing.*", set()),
    ],
)
async def test_pattern_semantics(ctx, write_files, pattern: str, expected: set[str]) -> None:
    write_files(TREE)
    assert await found(ctx, pattern=pattern) == expected


async def test_newest_first_and_relative_to_the_workspace_root(ctx, workspace, write_files) -> None:
    write_files({"src/old.py": "", "src/new.py": "", "src/mid.py": ""})
    for age, name in enumerate(["new.py", "mid.py", "old.py"]):
        stamp = 1_700_000_000 - age * 100
        os.utime(workspace / "src" / name, (stamp, stamp))
    result = await tool.call({"pattern": "*.py", "path": "src"}, ctx)
    assert result.output == "src/new.py\nsrc/mid.py\nsrc/old.py"
    assert result.metadata == {"path": "src", "count": 3, "truncated": False}
    assert result.title == "*.py in src"


async def test_gitignored_and_tool_folders_are_skipped(ctx, write_files) -> None:
    write_files(
        {
            ".gitignore": "build/\n*_pb2.py\n",
            "a.py": "",
            "a_pb2.py": "",
            "build/b.py": "",
            "node_modules/pkg/c.py": "",
            ".venv/lib/d.py": "",
            ".hidden/e.py": "",
        }
    )
    assert await found(ctx, pattern="**/*.py") == {"a.py", ".hidden/e.py"}
    assert await found(ctx, pattern="**/*") == {".gitignore", "a.py", ".hidden/e.py"}  # no database files


async def test_at_most_100_with_a_note(ctx, write_files) -> None:
    write_files({f"many/f{n:03}.txt": "" for n in range(MAX_RESULTS + 20)})
    result = await tool.call({"pattern": "many/*.txt"}, ctx)
    assert len(result.output.split("\n\n")[0].split("\n")) == MAX_RESULTS
    assert result.output.endswith(
        "(Showing the 100 newest of 120 matching files. Use a more specific pattern or path to see the others)"
    )
    assert result.metadata == {"path": ".", "count": 120, "truncated": True}


async def test_no_match(ctx, write_files) -> None:
    write_files({"a.txt": ""})
    result = await tool.call({"pattern": "**/*.rs"}, ctx)
    assert result.output == "No files found matching **/*.rs in ."
    assert result.metadata["count"] == 0


async def test_folders_through_a_symlink_are_not_followed(ctx, workspace, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.py").write_text("")
    os.symlink(elsewhere, workspace / "link")
    assert await found(ctx, pattern="link/*.py") == set()
    assert await found(ctx, pattern="**/*.py") == set()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"pattern": "/etc/*.conf"}, "^glob pattern /etc/\\*.conf is absolute: give the folder in path"),
        ({"pattern": "../*.py"}, 'contains "..": put the folder to search in path instead$'),
        ({"pattern": "*.{ts,tsx"}, "^invalid glob pattern: the pattern '\\*.{ts,tsx' has an unclosed '{'"),
        ({"pattern": "*.py", "path": "a.txt"}, "^path a.txt is a file, not a folder"),
        ({"pattern": "*.py", "path": "nope"}, "^path nope does not exist: give a folder that exists"),
        ({"pattern": ""}, "pattern"),
    ],
)
async def test_errors(ctx, write_files, args: dict, message: str) -> None:
    write_files({"a.txt": ""})
    with pytest.raises(ToolError, match=message):
        await tool.call(args, ctx)


async def test_permission_rules(make_runtime, write_files) -> None:
    runtime = make_runtime(config={"permission": {"rules": {"glob": {"vault": "deny", "*.key": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    write_files({"vault/a.txt": "", "certs/server.key": "", "certs/server.pem": ""})
    with pytest.raises(PermissionDeniedError, match='glob vault: denied by global rule "vault"'):
        await tool.call({"pattern": "*", "path": "vault"}, ctx)
    assert await found(ctx, pattern="certs/*") == {"certs/server.pem"}


async def test_folders_written_in_the_pattern_obey_the_same_skips(ctx, write_files) -> None:
    """`build/*.py` finds what `b*/*.py` and `**/*.py` find: the literal start of a pattern
    is where the walk begins, not a way past .gitignore, node_modules or the database."""
    write_files(
        {
            ".gitignore": "build/\n",
            "build/o.py": "",
            "node_modules/m/i.js": "",
            "src/.gitignore": "gen/\n",
            "src/gen/g.py": "",
            "src/a.py": "",
        }
    )
    for pattern in ("build/*.py", "node_modules/**/*.js", ".opencode/*", "src/gen/*.py", "src/a.py/x"):
        assert await found(ctx, pattern=pattern) == set(), pattern
    assert await found(ctx, pattern="src/*.py") == {"src/a.py"}
    assert await found(ctx, pattern="*.py", path="build") == {"build/o.py"}  # a path named explicitly is searched


# --- cases from OpenCode's/Crush's suites ---------------------------------------------


async def test_an_absolute_folder_in_path(ctx, workspace, write_files) -> None:
    write_files({"a.ts": "export const a = 1\n", "b.txt": "hello\n", "subdir/inner.txt": "", "outer.txt": ""})
    result = await tool.call({"pattern": "*.ts", "path": str(workspace)}, ctx)
    assert (result.output, result.metadata["count"]) == ("a.ts", 1)
    assert await found(ctx, pattern="*.txt", path=str(workspace / "subdir")) == {"subdir/inner.txt"}


async def test_a_file_as_path_is_refused(ctx, workspace, write_files) -> None:
    write_files({"a.ts": ""})
    with pytest.raises(ToolError, match="is a file, not a folder: give the folder to search in path"):
        await tool.call({"pattern": "*.ts", "path": str(workspace / "a.ts")}, ctx)


async def test_deep_and_literal_patterns(ctx, write_files) -> None:
    write_files(
        {
            "sub/deep/target.yml": "",
            "other.txt": "",
            "src/main.go": "",
            "src/utils.go": "",
            "pkg/helper.go": "",
            "a/b/c/file1.txt": "",
            "a/b/file2.txt": "",
        }
    )
    assert await found(ctx, pattern="**/target.yml") == {"sub/deep/target.yml"}
    assert await found(ctx, pattern="**/main.go") == {"src/main.go"}
    assert await found(ctx, pattern="a/b/c/file1.txt") == {"a/b/c/file1.txt"}


async def test_folders_are_not_results(ctx, workspace, write_files) -> None:
    """Crush's glob also returns folders ("pkg", "**/pkg", "pkg/**" itself); OpenCode's and
    ours return files only: the results are meant to be viewed."""
    write_files({"pkg/main.go": "", "src/pkg/x.go": "", "pkg.txt": ""})
    assert await found(ctx, pattern="pkg") == set()
    assert await found(ctx, pattern="**/pkg") == set()
    assert await found(ctx, pattern="pkg/**") == {"pkg/main.go"}


async def test_newest_first_from_crushs_case(ctx, workspace, write_files) -> None:
    write_files({"file1.txt": "first", "file2.txt": "second", "file3.txt": "third"})
    for n in (1, 2, 3):
        stamp = 1_700_000_000 + n
        os.utime(workspace / f"file{n}.txt", (stamp, stamp))
    assert (await tool.call({"pattern": "*.txt"}, ctx)).output == "file3.txt\nfile2.txt\nfile1.txt"


async def test_no_match_and_the_cap_from_opencodes_cases(ctx, write_files) -> None:
    assert (await tool.call({"pattern": "*.nonexistent"}, ctx)).metadata == {
        "path": ".",
        "count": 0,
        "truncated": False,
    }
    write_files({f"file{n:03}.txt": "" for n in range(110)})
    result = await tool.call({"pattern": "*.txt"}, ctx)
    assert result.metadata == {"path": ".", "count": 110, "truncated": True}
    assert len(result.output.split("\n\n")[0].split("\n")) == MAX_RESULTS


async def test_node_modules_and_ignored_output_folders(ctx, write_files) -> None:
    """OpenCode skips dist/ and build/ by name; we skip them when .gitignore says so."""
    write_files(
        {
            "node_modules/pkg/index.ts": "",
            "src.ts": "",
            "dist/bundle.js": "",
            "build/output.js": "",
            "app.js": "",
            ".gitignore": "dist/\n",
        }
    )
    assert await found(ctx, pattern="**/*.ts") == {"src.ts"}
    assert await found(ctx, pattern="**/*.js") == {"app.js", "build/output.js"}


async def test_dot_ignore_files_are_honoured(ctx, write_files) -> None:
    write_files({".ignore": "*.snap\n", "a.snap": "", "src/b.snap": "", "src/c.py": ""})
    assert await found(ctx, pattern="**/*") == {".ignore", "src/c.py"}


async def test_unicode_names(ctx, write_files) -> None:
    write_files({"données/résumé.md": "", "données/plain.txt": ""})
    assert await found(ctx, pattern="données/*.md") == {"données/résumé.md"}
    assert await found(ctx, pattern="**/r?sumé.md") == {"données/résumé.md"}
