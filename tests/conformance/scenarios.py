"""Loading the peer conformance data in tests/conformance/data (see its README.md).

Kept apart from the tests so the same scenarios drive both the pure planner and the
real ``patch`` tool on disk, and the same edit cases both the replacers and the edit tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFORMANCE_DIR = Path(__file__).resolve().parent / "data"
CODEX_DIR = CONFORMANCE_DIR / "codex-apply-patch"
EDIT_CASES_FILE = CONFORMANCE_DIR / "opencode-edit" / "cases.json"


@dataclass(frozen=True)
class Scenario:
    """One Codex scenario: the tree before, the patch, and the tree Codex leaves after."""

    name: str
    patch: str
    before: dict[str, bytes]
    expected: dict[str, bytes]


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` keyed by its POSIX path relative to ``root`` (an absent
    directory is an empty tree)."""
    if not root.is_dir():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def load_scenarios() -> list[Scenario]:
    """All Codex scenarios, sorted by name; fails loudly when the data is missing."""
    if not CODEX_DIR.is_dir():
        raise FileNotFoundError(
            f"conformance data not found at {CODEX_DIR}; restore tests/conformance/data from git"
        )
    return [
        Scenario(
            name=folder.name,
            patch=(folder / "patch.txt").read_bytes().decode("utf-8"),
            before=read_tree(folder / "input"),
            expected=read_tree(folder / "expected"),
        )
        for folder in sorted(CODEX_DIR.iterdir())
        if folder.is_dir()
    ]


def load_edit_cases() -> list[dict[str, Any]]:
    """OpenCode's edit cases in file order; fails loudly when the data is missing."""
    if not EDIT_CASES_FILE.is_file():
        raise FileNotFoundError(
            f"conformance data not found at {EDIT_CASES_FILE}; restore tests/conformance/data from git"
        )
    return json.loads(EDIT_CASES_FILE.read_text(encoding="utf-8"))
