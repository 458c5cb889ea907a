"""OpenCode's edit-tool cases (tests/conformance/data/opencode-edit/cases.json) against the
replacement cascade. `tool/...` cases run through `apply_edit` too: it handles the BOM
and line endings the way the tool does. A missing copy of the data fails the run
rather than skipping it."""

from __future__ import annotations

from typing import Any

import pytest

from app.tools.text.replace import EditMatchError, apply_edit
from tests.conformance.scenarios import load_edit_cases

# A distinguishing piece of OpenCode's message -> our error kind.
ERROR_KINDS = {
    "not find": "not_found",
    "multiple matches": "multiple",
    "identical": "identical",
    "empty": "empty",
}


CASES = load_edit_cases()


def expected_kind(error: str) -> str:
    kinds = [kind for fragment, kind in ERROR_KINDS.items() if fragment in error.lower()]
    assert len(kinds) == 1, f"no single error kind for {error!r}: extend ERROR_KINDS"
    return kinds[0]


def test_every_case_is_here() -> None:
    assert len(CASES) == 65
    assert all(case["name"].startswith(("replacers/", "tool/")) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    if case["expected"] is None:
        with pytest.raises(EditMatchError) as caught:
            apply_edit(case["content"], case["old"], case["new"], case["replace_all"])
        assert caught.value.kind == expected_kind(case["error"])
        assert case["error"].lower() in str(caught.value).lower()
    else:
        outcome = apply_edit(case["content"], case["old"], case["new"], case["replace_all"])
        assert outcome.content == case["expected"]
