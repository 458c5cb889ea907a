"""protected_anchor: which protected entry a path is or lies in, for the roots of a workspace
(opencode's config and data, a hooks folder, the user's config folder outside)."""

from __future__ import annotations

import pytest

from app.permission.effects import protected_anchor

ROOTS = (".opencode.json", ".opencode", "var/data", ".husky", "/home/u/.config/opencode")


@pytest.mark.parametrize(
    ("subject", "anchor"),
    [
        ("src/app.py", None),
        ("", None),
        (".", None),
        (".opencode.json", ".opencode.json"),
        (".opencode", ".opencode"),
        (".opencode/agents/evil.md", ".opencode"),
        (".opencodex", None),
        (".opencode.json.bak", None),
        ("var/data", "var/data"),
        ("var/data/opencode.db", "var/data"),
        ("var/database", None),
        (".husky/pre-commit", ".husky"),
        (".git", ".git"),
        (".git/config", ".git"),
        ("sub/.git/hooks/x", "sub/.git"),
        ("a/.gitmodules", "a/.gitmodules"),
        ("a/.gitattributes", "a/.gitattributes"),
        (".gitmodules/x", None),
        (".github/workflows/ci.yml", None),
        ("/home/u/.config/opencode/opencode.json", "/home/u/.config/opencode"),
        ("/home/u/.config/opencodex", None),
        ("/etc/passwd", None),
    ],
)
def test_the_anchor_of_each_path(subject: str, anchor: str | None) -> None:
    assert protected_anchor(subject, ROOTS) == anchor
    assert protected_anchor(subject, list(ROOTS)) == anchor  # any sequence of roots


def test_a_root_written_with_a_trailing_slash_still_covers_what_is_in_it() -> None:
    assert protected_anchor("cache/x", ("cache/",)) == "cache/"
    assert protected_anchor("cachex", ("cache/",)) is None
