"""Codex's apply_patch scenarios through the real ``patch`` tool on disk, byte for byte.

Each scenario's input/ tree is copied into a fresh workspace, the patch goes through
``PatchTool.call`` with ``allow_delete: true`` (the change path: locks, permission,
atomic writes, history), and the whole workspace must then equal expected/. The
runtime's database lives outside the workspace so the tree holds only the scenario.

Intended divergence, scenario 015: Codex keeps ``created.txt`` from the first section
when the second fails; our tool places every hunk before writing anything, so the
tree must be left exactly as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.core.errors import ToolError
from app.tools.base import ToolContext
from app.tools.patch import PatchTool
from tests.conformance.scenarios import CODEX_DIR, Scenario, load_scenarios, read_tree

SCENARIOS = load_scenarios()
ATOMIC_DIVERGENCE = "015_failure_after_partial_success_leaves_changes"


@pytest.fixture
def scenario_ctx(make_runtime, tmp_path: Path) -> ToolContext:
    runtime = make_runtime(config={"data": {"directory": str(tmp_path / "data")}})
    return runtime.context(runtime.store.sessions.create(title="conformance").id)


async def run_tool(scenario: Scenario, workspace: Path, ctx: ToolContext) -> dict:
    """Copy the input tree in, apply the patch, and return the tool's spec 002 JSON."""
    source = CODEX_DIR / scenario.name / "input"
    if source.is_dir():
        shutil.copytree(source, workspace, dirs_exist_ok=True)
    try:
        result = await PatchTool().call({"patch": scenario.patch, "allow_delete": True}, ctx)
    except ToolError as err:
        return json.loads(str(err))
    return json.loads(result.output)


def test_all_scenarios_are_present() -> None:
    assert len(SCENARIOS) == 25


@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.name != ATOMIC_DIVERGENCE], ids=lambda s: s.name
)
async def test_scenario_matches_codex(scenario: Scenario, workspace: Path, scenario_ctx: ToolContext) -> None:
    outcome = await run_tool(scenario, workspace, scenario_ctx)
    assert read_tree(workspace) == scenario.expected
    # Every scenario Codex rejects leaves its tree as it was (and every accepted one
    # changes it), so the tree tells which answer spec 002's JSON must give.
    if scenario.expected == scenario.before:
        assert outcome["ok"] is False and outcome["error"]
    else:
        assert outcome["ok"] is True and set(outcome) == {"ok", "summary"} and outcome["summary"]


async def test_failed_patch_leaves_tree_unchanged_unlike_codex(workspace: Path, scenario_ctx: ToolContext) -> None:
    """Our intended divergence: atomic, so nothing of the failing patch is written."""
    (scenario,) = [s for s in SCENARIOS if s.name == ATOMIC_DIVERGENCE]
    outcome = await run_tool(scenario, workspace, scenario_ctx)
    assert outcome["ok"] is False and "Update File missing.txt: file not found" in outcome["error"]
    assert read_tree(workspace) == scenario.before == {}
    assert "created.txt" in scenario.expected  # what Codex leaves behind, and we do not
