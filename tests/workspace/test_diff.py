"""app.core.diff against real `git diff`, and properties that tie the stats to the diff text."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.diff import diff_stats, unified_diff


def _git_diff(tmp_path: Path, old: str, new: str, *options: str) -> str:
    (tmp_path / "old").write_bytes(old.encode())
    (tmp_path / "new").write_bytes(new.encode())
    result = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--diff-algorithm=myers", *options, "old", "new"],
        cwd=tmp_path,
        capture_output=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode in (0, 1), result.stderr
    return result.stdout.decode()


def _git_numstat(tmp_path: Path, old: str, new: str) -> tuple[int, int]:
    out = _git_diff(tmp_path, old, new, "--numstat")
    if not out:
        return 0, 0
    additions, deletions, _ = out.split("\t", 2)
    return int(additions), int(deletions)


def _numbered(count: int) -> list[str]:
    return [f"line {n}\n" for n in range(count)]


def _big_edit() -> tuple[str, str]:
    """A 2,000-line file with repeated lines (blank, braces) and 40 scattered edits."""
    rng = random.Random(7)
    lines = [rng.choice(["\n", "}\n", "    return x\n", f"value_{n} = {n}\n"]) for n in range(2000)]
    new = list(lines)
    for n in range(40):
        at = rng.randrange(len(new))
        kind = n % 3
        if kind == 0:
            new[at] = f"changed {n}\n"
        elif kind == 1:
            new.insert(at, rng.choice(["\n", "}\n", f"inserted {n}\n"]))
        else:
            del new[at]
    return "".join(lines), "".join(new)


CASES = {
    "one line changed": ("a\nb\nc\n", "a\nB\nc\n"),
    "appended": ("a\n", "a\nb\nc\n"),
    "removed": ("a\nb\nc\n", "a\n"),
    "created": ("", "a\nb\n"),
    "emptied": ("a\nb\n", ""),
    "final newline added": ("a\nb", "a\nb\n"),
    "final newline removed": ("a\nb\n", "a\nb"),
    "crlf to lf": ("a\r\nb\r\n", "a\nb\n"),
    "lone carriage return is content": ("a\rb\n", "a\rc\n"),
    "block moved": ("".join(_numbered(20)), "".join(_numbered(20)[10:] + _numbered(20)[:10])),
    "repeated lines": ("x\nx\ny\nx\nx\n", "x\ny\nx\ny\nx\n"),
    "scattered edits with repeats": _big_edit(),
}


@pytest.mark.parametrize("name", CASES)
def test_stats_match_git_numstat(tmp_path: Path, name: str) -> None:
    old, new = CASES[name]
    assert diff_stats(old, new) == _git_numstat(tmp_path, old, new)


@pytest.mark.parametrize("name", ["one line changed", "appended", "final newline added", "emptied"])
def test_hunks_match_git(tmp_path: Path, name: str) -> None:
    old, new = CASES[name]
    git_hunks = _git_diff(tmp_path, old, new)
    git_hunks = git_hunks[git_hunks.index("@@") :]
    ours = unified_diff(old, new, "f.txt")
    assert ours[ours.index("@@") :] == git_hunks


def test_headers_no_newline_marker_and_equal_input() -> None:
    assert unified_diff("same\n", "same\n", "f.txt") == ""
    assert unified_diff("a\nb", "a\nc", "src/f.txt") == (
        "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
        "+c\n\\ No newline at end of file\n"
    )


def test_distant_changes_get_separate_hunks_and_near_ones_share() -> None:
    old = "".join(_numbered(30))
    far = old.replace("line 2\n", "two\n").replace("line 25\n", "twenty-five\n")
    assert re.findall(r"^@@ .* @@$", unified_diff(old, far, "f"), re.M) == [
        "@@ -1,6 +1,6 @@",
        "@@ -23,7 +23,7 @@",
    ]
    near = old.replace("line 2\n", "two\n").replace("line 8\n", "eight\n")
    assert re.findall(r"^@@ .* @@$", unified_diff(old, near, "f"), re.M) == ["@@ -1,12 +1,12 @@"]


def test_context_argument() -> None:
    old = "".join(_numbered(10))
    new = old.replace("line 5\n", "five\n")
    assert unified_diff(old, new, "f", context=0).splitlines()[2:] == ["@@ -6 +6 @@", "-line 5", "+five"]


def test_pure_addition_and_removal_of_a_big_file() -> None:
    big = "".join(_numbered(50_000))
    assert diff_stats("", big) == (50_000, 0)
    assert diff_stats(big, "") == (0, 50_000)
    assert diff_stats(big, big + "tail\n") == (1, 0)


# --- properties ----------------------------------------------------------------------------------


def _apply(old: str, diff: str) -> str:
    """Apply a unified diff the way `patch` would: a reader independent of app.core.diff."""
    old_lines = [line + "\n" for line in old.split("\n")]
    old_lines[-1] = old_lines[-1][:-1]  # the text after the last newline, maybe ""
    out: list[str] = []
    position = 0
    kind = ""
    for line in diff.split("\n")[2:-1]:
        if line.startswith("@@"):
            start, length = re.match(r"@@ -(\d+)(?:,(\d+))? ", line).groups()
            begin = int(start) if length == "0" else int(start) - 1  # an empty range names the line before
            out.extend(old_lines[position:begin])
            position = begin
        elif line == "\\ No newline at end of file":
            if kind in " +":
                out[-1] = out[-1].removesuffix("\n")
        else:
            kind, content = line[0], line[1:] + "\n"
            if kind in " -":
                assert old_lines[position] in (content, content[:-1])
                position += 1
            if kind in " +":
                out.append(content)
    out.extend(old_lines[position:])
    return "".join(out)


def _counts(diff: str) -> tuple[int, int]:
    body = diff.split("\n")[2:]
    return sum(line.startswith("+") for line in body), sum(line.startswith("-") for line in body)


def _lcs_length(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


texts = st.lists(st.sampled_from(["a", "b", "c", "", "a\r"]), max_size=25).map("\n".join)
endings = st.sampled_from(["", "\n"])


@settings(max_examples=200, deadline=None)
@given(texts, endings, texts, endings, st.integers(0, 4))
def test_diff_text_agrees_with_stats_and_rebuilds_new(
    old: str, old_end: str, new: str, new_end: str, context: int
) -> None:
    old, new = old + old_end, new + new_end
    diff = unified_diff(old, new, "f", context=context)
    assert _counts(diff) == diff_stats(old, new)
    assert _apply(old, diff) == new


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_stats_are_minimal(old: str, new: str) -> None:
    old_lines, new_lines = old.split("\n"), new.split("\n")
    common = _lcs_length(old_lines, new_lines)
    assert diff_stats(old + "\n", new + "\n") == (len(new_lines) - common, len(old_lines) - common)


def test_reordering_too_costly_for_myers_still_gives_a_valid_diff() -> None:
    """Thousands of shuffled lines exceed the Myers edit budget: the patience fallback
    must still produce a diff that rebuilds the new text."""
    rng = random.Random(3)
    lines = _numbered(3000) + ["\n"] * 300
    shuffled = list(lines)
    rng.shuffle(shuffled)
    old, new = "".join(lines), "".join(shuffled)
    diff = unified_diff(old, new, "f")
    assert _apply(old, diff) == new
    assert _counts(diff) == diff_stats(old, new)
