"""The gitignore matcher and the pruning walker shared by ls, glob and grep: glob
translation as pure functions, then walks over real trees on disk."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.tools.ignore import SKIPPED_DIRS, glob_to_regex, parse_ignore_lines, rules_above, walk


def matches(pattern: str, path: str, *, braces: bool = True) -> bool:
    return re.fullmatch(glob_to_regex(pattern, braces=braces), path, re.DOTALL) is not None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),  # "*" stays inside one folder name
        ("**/*.py", "a.py", True),  # "**/" may be no folder at all
        ("**/*.py", "src/deep/a.py", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/test_*.py", "test_a.py", False),
        ("src/**", "src/x/y.txt", True),  # a trailing "/**" is everything below...
        ("src/**", "src", False),  # ...but not the folder itself
        ("a**b", "axxb", True),  # "**" inside a name is a plain "*"
        ("a**b", "ax/b", False),
        ("?.md", "a.md", True),
        ("?.md", "ab.md", False),
        ("*.{ts,tsx}", "a.tsx", True),
        ("*.{ts,tsx}", "a.js", False),
        ("[abc].txt", "b.txt", True),
        ("[!abc].txt", "b.txt", False),
        ("[!abc].txt", "d.txt", True),
        ("x[!a]y", "x/y", False),  # a negated class never matches "/"
        ("\\*.txt", "*.txt", True),
        ("\\*.txt", "a.txt", False),
        ("[oops", "[oops", True),  # an unclosed "[" is a literal
        ("a+b(c).txt", "a+b(c).txt", True),  # regex characters are literals
        ("[[]x", "[x", True),  # characters Python reads as set operations are members
        ("[a&&b]", "&", True),
        ("[~~|]", "|", True),
    ],
)
@pytest.mark.filterwarnings("error")  # no "possible nested set" FutureWarning either
def test_glob_translation(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_braces_are_literal_without_alternation() -> None:
    assert matches("{a,b}", "{a,b}", braces=False)
    assert not matches("{a,b}", "a", braces=False)


def test_unclosed_brace_is_an_error() -> None:
    with pytest.raises(ValueError, match="unclosed"):
        glob_to_regex("*.{ts,tsx")


def test_parse_ignore_lines() -> None:
    rules = parse_ignore_lines(
        [
            "# a comment",
            "",
            "   ",
            "*.log",
            "!keep.log",
            "build/",
            "/top.txt",
            "doc/*.md",
            "\\#hash",
            "trail\\ ",
        ]
    )
    assert [(r.negated, r.dir_only, r.anchored) for r in rules] == [
        (False, False, False),
        (True, False, False),
        (False, True, False),
        (False, False, True),
        (False, False, True),
        (False, False, False),
        (False, False, False),
    ]
    assert rules[0].regex.fullmatch("x.log")
    assert rules[3].regex.fullmatch("top.txt")
    assert rules[5].regex.fullmatch("#hash")
    assert rules[6].regex.fullmatch("trail ")


CRUSH_HIDDEN_NAMES = {
    ".gitignore": ".*\n*.log\n",
    "regular.txt": "",
    ".hidden": "",
    "build.log": "",
    "subdir/file.go": "",
    "subdir/.another": "",
}
"""Crush's listing case: ".*" and "*.log" in .gitignore, dotfiles and a log at two depths."""


def make_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def walked(start: Path, root: Path | None = None, **options) -> set[str]:
    return {e.rel + ("/" if e.is_dir else "") for e in walk(start, root or start, **options)}


def test_gitignore_semantics(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/*.png\nout\n",
            "a.log": "",
            "keep.log": "",
            "top.txt": "",
            "sub/top.txt": "",  # "/top.txt" is anchored to the root
            "build/x.c": "",
            "sub/build": "",  # a file: "build/" matches folders only
            "docs/img/a.png": "",
            "docs/a.png": "",  # "docs/**/" may be no folder at all
            "docs/readme.md": "",
            "out/x": "",  # "out" matches the folder, at any depth...
            "sub/out": "",  # ...and a file of that name
            "main.py": "",
        },
    )
    assert walked(tmp_path) == {
        "docs/",
        "sub/",
        ".gitignore",
        "keep.log",
        "main.py",
        "docs/img/",
        "docs/readme.md",
        "sub/build",
        "sub/top.txt",
    }


def test_deeper_gitignore_wins_and_anchors_at_its_folder(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n",
            "a.log": "",
            "pkg/.gitignore": "!*.log\n/gen.py\n",
            "pkg/b.log": "",  # re-included by the deeper file
            "pkg/gen.py": "",  # anchored to pkg/
            "pkg/inner/gen.py": "",
        },
    )
    assert walked(tmp_path) == {
        "pkg/",
        ".gitignore",
        "pkg/inner/",
        "pkg/.gitignore",
        "pkg/b.log",
        "pkg/inner/gen.py",
    }


def test_a_file_inside_an_ignored_folder_cannot_be_reincluded(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "build/\n!build/keep.txt\n", "build/keep.txt": "", "a.txt": ""})
    assert walked(tmp_path) == {".gitignore", "a.txt"}


def test_git_info_exclude_applies_below_gitignore(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".git/info/exclude": "*.tmp\nlocal.txt\n",
            ".gitignore": "!local.txt\n",
            "a.tmp": "",
            "local.txt": "",
        },
    )
    assert walked(tmp_path) == {".gitignore", "local.txt"}  # .git itself is never entered


def test_skipped_dirs_are_never_entered_even_when_not_ignored(tmp_path: Path) -> None:
    make_tree(
        tmp_path, {f"{name}/x.py": "" for name in SKIPPED_DIRS} | {"deep/node_modules/y.js": "", "a.py": ""}
    )
    assert walked(tmp_path) == {"deep/", "a.py"}


def test_walk_below_the_root_applies_the_root_rules_relative_to_the_root(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "/src/gen/\n*.o\n",
            "src/gen/x.py": "",
            "src/a.o": "",
            "src/a.c": "",
            "src/sub/b.c": "",
        },
    )
    assert walked(tmp_path / "src", tmp_path) == {"src/sub/", "src/a.c", "src/sub/b.c"}


def test_the_start_is_walked_even_when_ignored(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "build/\n", "build/x.c": ""})
    assert walked(tmp_path / "build", tmp_path) == {"build/x.c"}


def test_extra_patterns_win_over_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "!*.md\n", "a.md": "", "b.txt": "", "docs/c.md": "", "docs/d.txt": ""})
    assert walked(tmp_path, extra_ignore=["*.md", "docs/"]) == {".gitignore", "b.txt"}


def test_skip_and_max_depth(tmp_path: Path) -> None:
    make_tree(tmp_path, {"db/x": "", "a/b/c.txt": "", "top.txt": ""})
    assert walked(tmp_path, skip=["db"], max_depth=2) == {"a/", "top.txt", "a/b/"}


def test_symlinked_folders_are_listed_not_followed(tmp_path: Path) -> None:
    make_tree(tmp_path, {"real/x.txt": ""})
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert walked(tmp_path) == {"real/", "link", "real/x.txt"}


def test_breadth_first_sorted_by_name(tmp_path: Path) -> None:
    make_tree(tmp_path, {"b/deep/x.txt": "", "a/y.txt": "", "c.txt": ""})
    assert [e.rel for e in walk(tmp_path, tmp_path)] == [
        "a",
        "b",
        "c.txt",
        "a/y.txt",
        "b/deep",
        "b/deep/x.txt",
    ]


# --- cases from OpenCode's/Crush's suites, and the ignore files ripgrep reads ---------


def test_a_hidden_name_pattern_hides_dotfiles_at_every_depth(tmp_path: Path) -> None:
    """Crush's listing case: ".*" and "*.log" in .gitignore. Git (and rg) apply an unanchored
    pattern at every depth, so the nested dotfile goes too (Crush's own lister kept it)."""
    make_tree(tmp_path, CRUSH_HIDDEN_NAMES)
    assert walked(tmp_path) == {"regular.txt", "subdir/", "subdir/file.go"}


def test_ignored_files_and_folders_from_crushs_glob_case(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "*.tmp\nbackup/\n", "good.txt": "", "bad.tmp": "", "backup/old.txt": ""})
    (tmp_path / "src").mkdir()
    assert walked(tmp_path) == {".gitignore", "good.txt", "src/"}


def test_dot_ignore_files_are_read_like_gitignore(tmp_path: Path) -> None:
    """`.ignore` (and `.rgignore`) hold gitignore rules that ripgrep, and OpenCode through
    it, honour in every folder, git repository or not."""
    make_tree(
        tmp_path,
        {
            ".ignore": "*.tmp\n/top.txt\n",
            "a.tmp": "",
            "top.txt": "",
            "keep.txt": "",
            "pkg/.ignore": "gen/\n",
            "pkg/gen/x.py": "",
            "pkg/b.tmp": "",
            "pkg/top.txt": "",
            "other/.rgignore": "*.md\n",
            "other/r.md": "",
        },
    )
    assert walked(tmp_path) == {
        ".ignore",
        "keep.txt",
        "pkg/",
        "other/",
        "pkg/.ignore",
        "pkg/top.txt",
        "other/.rgignore",
    }


def test_dot_ignore_outranks_gitignore_and_rgignore_outranks_both(tmp_path: Path) -> None:
    """ripgrep's order: a match in any .rgignore wins over any .ignore, which wins over any
    .gitignore, whatever their depth."""
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n",
            ".ignore": "!keep.log\n*.bak\n",
            ".rgignore": "!keep.bak\n",
            "a.log": "",
            "keep.log": "",
            "a.bak": "",
            "keep.bak": "",
            "sub/.gitignore": "*.txt\n",
            "sub/x.txt": "",
            "sub/.ignore": "",
        },
    )
    assert walked(tmp_path) == {
        ".gitignore",
        ".ignore",
        ".rgignore",
        "keep.log",
        "keep.bak",
        "sub/",
        "sub/.gitignore",
        "sub/.ignore",
    }


def test_a_folder_named_like_an_ignore_file_is_just_a_folder(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore/x.txt": "", "a.txt": ""})
    assert walked(tmp_path) == {".gitignore/", ".gitignore/x.txt", "a.txt"}


def test_ignore_files_above_the_root_do_not_apply(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "*\n", ".ignore": "*\n", "ws/a.txt": "", "ws/sub/b.txt": ""})
    assert walked(tmp_path / "ws") == {"a.txt", "sub/", "sub/b.txt"}


def test_rules_above_rebases_the_folders_between_the_root_and_a_start(tmp_path: Path) -> None:
    """What ripgrep is handed when it searches a subfolder: the rules of the root and of
    every folder down to the start's parent, as one file anchored at the root, in
    ascending precedence (later lines win, as within one gitignore file)."""
    make_tree(
        tmp_path,
        {
            ".git/info/exclude": "*.swp\n",
            ".gitignore": "# build output\n*.log\n/dist/\n",
            "pkg/.gitignore": "/gen/\n!keep.log\ntmp*/\n",
            "pkg/.ignore": "/a[1]/*.bak\n",
            "pkg/sub/.gitignore": "not/read/here\n",
            "we[ird]/.gitignore": "/x\n",
        },
    )
    assert rules_above(tmp_path, "pkg/sub") == [
        "*.swp",
        "*.log",
        "/dist/",
        "/pkg/gen/",
        "!keep.log",
        "tmp*/",
        "/pkg/a[1]/*.bak",
    ]
    assert rules_above(tmp_path, "") == []
    assert rules_above(tmp_path, "we[ird]/deep") == ["*.swp", "*.log", "/dist/", "/we\\[ird\\]/x"]
