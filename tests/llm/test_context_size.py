"""The next request's size by part (app/llm/context_size.py), and /context headless."""

from __future__ import annotations

from pathlib import Path

from app.llm.context import INSTRUCTIONS_HEADING
from app.llm.context_size import PARTS, measure
from tests.llm.fake_openai import FakeOpenAI, Text
from tests.llm.test_turn_undo import headless

SPEC = {"type": "function", "function": {"name": "view", "description": "Read a file " * 20, "parameters": {}}}
MCP_SPEC = {"type": "function", "function": {"name": "calc_add", "description": "Add", "parameters": {}}}


def request(system: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": "question " * 50}]


def test_the_estimate_splits_the_system_prompt_from_its_instructions_files():
    system = f"You are opencode.\n\n{INSTRUCTIONS_HEADING}\n\n# AGENTS.md\n\n" + "rule " * 100
    size = measure(request(system), [SPEC, MCP_SPEC], {"calc_add"}, counted=0, window=1000)
    parts = dict(size.parts)
    assert list(parts) == list(PARTS)
    assert parts["Instructions files"] > 100 > parts["System prompt"] > 0
    assert parts["Tools"] > parts["MCP tools"] > 0 and parts["Messages"] > 90
    assert sum(parts.values()) == size.total and not size.counted


def test_a_provider_count_is_the_total_and_the_parts_share_it():
    estimated = measure(request("You are opencode."), [SPEC], set(), counted=0, window=0)
    counted = measure(request("You are opencode."), [SPEC], set(), counted=1234, window=0)
    assert counted.total == 1234 and counted.counted and sum(tokens for _, tokens in counted.parts) == 1234
    assert dict(counted.parts)["MCP tools"] == 0
    ratio = 1234 / estimated.total
    for (name, share), (_, estimate) in zip(counted.parts, estimated.parts, strict=True):
        assert abs(share - estimate * ratio) <= 4, name


def test_headless_context_lists_the_parts(fake_llm: FakeOpenAI, workspace: Path):
    (workspace / ".opencode.json").write_text('{"lsp": {"python": {"disabled": true}}}')
    fake_llm.reply(Text("hello"))
    assert headless(workspace, "hi", fake_llm)[0] == 0

    code, out, err = headless(workspace, "/context", fake_llm, continue_last=True)

    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Context of the next request: ")
    assert [line.split("  ")[0] for line in lines[1:6]] == list(PARTS)
    assert lines[-1].startswith("Total") and lines[-1].endswith("(estimated)")
    assert len(fake_llm.requests) == 1
