"""Sub-agents inherit denies: the explorer started by `task` cannot read what the coder's
own rules deny, whatever its own rules allow; what the coder may read, it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bus import Bus
from app.config import Config
from app.llm.agent import AgentLoop
from app.llm.events import ToolCallFinished
from app.llm.scripted import Script, ScriptedProvider
from app.permission import PermissionService

MODEL = "scripted/test"
CODER_DENIES = {"view": {"secrets/*": "deny"}, "grep": {"secrets/*": "deny"}, "delete": {"*.go": "deny"}}


def turns(*explorer_calls: dict) -> list[dict]:
    return [
        {"match": "^Find the key", "steps": [
            {"toolCalls": [{"name": "task", "arguments": {"description": "find key", "prompt": "EXPLORE: read it"}}]},
            {"text": "done"},
        ]},
        {"match": "^EXPLORE", "steps": [{"toolCalls": list(explorer_calls)}, {"text": "explored"}]},
    ]  # fmt: skip


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("TOPSECRET-42\n")
    (workspace / "readme.txt").write_text("public text\n")
    config = {
        "lsp": {"python": {"disabled": True}},
        "agents": {"coder": {"permission": CODER_DENIES}, "explorer": {"permission": {"view": "allow", "grep": "allow"}}},
    }
    return make_runtime("headless-yes", config)


async def run_explorer(runtime, *calls: dict) -> list[ToolCallFinished]:
    loop = AgentLoop(runtime, ScriptedProvider(Script.model_validate({"turns": turns(*calls)})), env={})
    finished = runtime.bus.subscribe(ToolCallFinished)
    session_id = runtime.store.sessions.create(title="t").id
    await loop.run(session_id, "Find the key", model=MODEL)
    return [event for event in finished.drain() if event.tool != "task"]


async def test_the_explorer_cannot_view_what_the_coder_is_denied(runtime):
    [view] = await run_explorer(runtime, {"name": "view", "arguments": {"filePath": "secrets/key.txt"}})
    assert "TOPSECRET" not in view.output
    assert 'agent coder rule "secrets/*", inherited by explorer' in view.output


async def test_the_explorer_s_grep_leaves_out_what_the_coder_is_denied(runtime):
    [grep] = await run_explorer(runtime, {"name": "grep", "arguments": {"pattern": "TOPSECRET|public"}})
    assert "TOPSECRET" not in grep.output and "secrets/key.txt" not in grep.output
    assert "readme.txt" in grep.output


async def test_the_explorer_still_reads_what_the_coder_may(runtime):
    [view] = await run_explorer(runtime, {"name": "view", "arguments": {"filePath": "readme.txt"}})
    assert "public text" in view.output


def test_inheritance_reaches_every_level_below_and_only_denies_are_inherited():
    """The form later sub-agents reuse: a grandchild inherits the coder's and the
    workhorse's denies; an ancestor's ask or allow is not inherited."""
    config = Config.model_validate(
        {"agents": {
            "coder": {"permission": {"delete": {"*.go": "deny", "*.md": "ask"}}},
            "workhorse": {"permission": {"delete": {"*.py": "deny", "*.go": "allow", "*": "allow"}}},
            "explorer": {"permission": {"delete": "allow"}},
        }}
    )  # fmt: skip
    service = PermissionService(config, Bus())
    service.inherit("child", "top", "coder")
    service.inherit("grandchild", "child", "workhorse")
    assert service.agents_above("grandchild") == ("coder", "workhorse")
    decide = lambda path: service.evaluate("delete", path, "explorer", session_id="grandchild")  # noqa: E731
    assert decide("main.go").action == "deny" and "agent coder rule" in decide("main.go").reason
    assert decide("app.py").action == "deny" and "agent workhorse rule" in decide("app.py").reason
    assert decide("README.md").action == "allow"
    assert service.evaluate("delete", "main.go", "explorer").action == "allow"  # no session, no ancestors


@pytest.fixture
def view_only_runtime(make_runtime, workspace: Path):
    """The coder's rules deny only `view` on secrets/: the read group's key, inherited."""
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("TOPSECRET-42\n")
    (workspace / "readme.txt").write_text("public text\n")
    config = {
        "lsp": {"python": {"disabled": True}},
        "agents": {
            "coder": {"permission": {"view": {"secrets/*": "deny"}}},
            "explorer": {"permission": {"view": "allow", "grep": "allow", "glob": "allow", "ls": "allow"}},
        },
    }
    return make_runtime("headless-yes", config)


async def test_a_view_deny_above_holds_for_every_reading_tool_of_the_explorer(view_only_runtime):
    calls = await run_explorer(
        view_only_runtime,
        {"name": "grep", "arguments": {"pattern": "TOPSECRET|public"}},
        {"name": "grep", "arguments": {"pattern": "TOPSECRET", "path": "secrets/key.txt"}},
        {"name": "glob", "arguments": {"pattern": "secrets/*"}},
        {"name": "ls", "arguments": {"path": "secrets"}},
    )
    outputs = [call.output for call in calls]  # in the order they finished
    assert len(outputs) == 4 and all("TOPSECRET" not in output for output in outputs), outputs
    [refusal] = [output for output in outputs if "denied by" in output]
    assert 'agent coder view rule "secrets/*", inherited by explorer' in refusal
    assert all("key.txt" not in output for output in outputs if output != refusal), outputs
    assert any("readme.txt" in output for output in outputs), outputs
