"""Loading the peer conformance data in ../shared/conformance (see its README.md).

Kept apart from the tests so the same scenarios can drive the pure planner here and,
later, the real ``patch`` tool on disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONFORMANCE_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
CODEX_DIR = CONFORMANCE_DIR / "codex-apply-patch"


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
            f"conformance data not found at {CODEX_DIR}; check out ../shared next to the repo"
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
