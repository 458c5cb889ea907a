"""Codex's apply_patch scenarios through ``parse_patch`` + ``plan_patch``, byte for byte.

Each scenario's patch is planned against its input tree (with ``allow_delete=True``)
and the plan is applied to an in-memory tree, which must equal the expected tree.
A patch Codex rejects leaves its tree as it was, which is what a ``PatchError`` does.

Intended divergence, scenario 015: Codex keeps ``created.txt`` written by the first
section when the second fails. Our planner validates every section before anything is
written, so for 015 the tree must stay exactly as it was, and that is what is asserted.
"""

from __future__ import annotations

import pytest

from app.tools.text.patch import PatchError, PatchPlan, parse_patch, plan_patch
from tests.conformance.scenarios import Scenario, load_scenarios

SCENARIOS = load_scenarios()
ATOMIC_DIVERGENCE = "015_failure_after_partial_success_leaves_changes"


def apply_plan(tree: dict[str, bytes], plan: PatchPlan) -> dict[str, bytes]:
    """The tree after the plan's operations, in order (a tiny stand-in for the tool)."""
    after = dict(tree)
    for op in plan.ops:
        if op.kind in ("delete", "move"):
            del after[op.path]
        if op.new_bytes is not None:
            after[op.new_path or op.path] = op.new_bytes
    return after


def run(scenario: Scenario) -> dict[str, bytes]:
    """The tree after the patch, or the untouched tree when the patch is refused."""
    try:
        plan = plan_patch(parse_patch(scenario.patch), scenario.before.get, allow_delete=True)
    except PatchError:
        return scenario.before
    return apply_plan(scenario.before, plan)


def test_all_scenarios_are_present() -> None:
    assert len(SCENARIOS) == 25


@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.name != ATOMIC_DIVERGENCE], ids=lambda s: s.name
)
def test_scenario_matches_codex(scenario: Scenario) -> None:
    assert run(scenario) == scenario.expected


def test_failed_patch_leaves_tree_unchanged_unlike_codex() -> None:
    (scenario,) = [s for s in SCENARIOS if s.name == ATOMIC_DIVERGENCE]
    with pytest.raises(PatchError, match="Update File missing.txt: file not found"):
        plan_patch(parse_patch(scenario.patch), scenario.before.get, allow_delete=True)
    assert run(scenario) == scenario.before == {}
    assert "created.txt" in scenario.expected  # what Codex leaves behind, and we do not
