"""Sub-agents' permissions: a workhorse's question names the sub-agent and its task, an
answer "for this session" given in the conversation holds in its children, and the plan
agent's denials hold whatever the rules say, in it and in every sub-agent it starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.agents.catalog import PLAN_MODE, AgentCatalog
from app.bus import Bus
from app.config import Config
from app.llm.agent import AgentLoop
from app.llm.events import ToolCallFinished
from app.llm.scripted import Script, ScriptedProvider
from app.permission import (
    PermissionPreview,
    PermissionReply,
    PermissionRequest,
    PermissionRequested,
    PermissionService,
)
from app.permission.effects import Effect

MODEL = "scripted/test"
BOUND = 300.0


def loop_with(runtime, turns: list[dict]) -> AgentLoop:
    return AgentLoop(runtime, ScriptedProvider(Script.model_validate({"turns": turns})), env={})


def delegate(prompt: str, child_calls: list[dict], **task: str) -> list[dict]:
    return [
        {"match": "^PARENT", "steps": [
            {"toolCalls": [{"name": "task", "arguments": {"description": "add tests", "prompt": prompt, **task}}]},
            {"text": "parent done"},
        ]},
        {"match": "^CHILD", "steps": [{"toolCalls": child_calls}, {"text": "child done"}]},
    ]  # fmt: skip


async def test_a_workhorse_question_names_the_sub_agent_and_its_task(make_runtime, workspace: Path, permission_answers):
    runtime = make_runtime("interactive")
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    write = {"name": "write", "arguments": {"filePath": "tests/test_api.txt", "content": "ok\n"}}
    loop = loop_with(runtime, delegate("CHILD: write the test", [write], subagent_type="workhorse"))
    parent = runtime.store.sessions.create(title="p").id

    await loop.run(parent, "PARENT: go", model=MODEL)

    [request] = answers.requests
    [child] = runtime.store.sessions.children(parent)
    assert (request.session_id, request.agent, request.task) == (child.id, "workhorse", "add tests")
    assert request.tool == "write" and request.subject == "tests/test_api.txt"
    assert (workspace / "tests" / "test_api.txt").read_text() == "ok\n"


async def test_allow_for_the_session_in_the_parent_holds_in_its_children(make_runtime, workspace: Path, permission_answers):
    runtime = make_runtime("interactive")
    answers = permission_answers(runtime, PermissionReply("allow_session"))
    write = {"name": "write", "arguments": {"filePath": "notes.txt", "content": "child\n"}}
    turns = [
        {"match": "^PARENT", "steps": [
            {"toolCalls": [{"name": "write", "arguments": {"filePath": "notes.txt", "content": "parent\n"}}]},
            {"toolCalls": [{"name": "view", "arguments": {"filePath": "notes.txt"}}]},
            {"toolCalls": [{"name": "task", "arguments": {"description": "rewrite", "prompt": "CHILD: again", "subagent_type": "workhorse"}}]},
            {"text": "parent done"},
        ]},
        {"match": "^CHILD", "steps": [
            {"toolCalls": [{"name": "view", "arguments": {"filePath": "notes.txt"}}]},
            {"toolCalls": [write]},
            {"text": "child done"},
        ]},
    ]  # fmt: skip
    loop = loop_with(runtime, turns)
    parent = runtime.store.sessions.create(title="p").id

    await loop.run(parent, "PARENT: go", model=MODEL)

    assert len(answers.requests) == 1  # the child's write of the same file was not asked again
    assert (workspace / "notes.txt").read_text() == "child\n"


async def test_an_answer_for_the_session_is_kept_for_the_whole_conversation():
    bus = Bus()
    service = PermissionService(Config(), bus, "interactive")
    service.inherit("child", "parent", "coder", "fix it")
    service.inherit("grandchild", "child", "workhorse", "deeper")
    service.inherit("sibling", "parent", "coder", "other")
    asked = bus.subscribe(PermissionRequested)
    check = asyncio.create_task(
        service.check("child", "bash", "make test", "workhorse", "bash make test", PermissionPreview("command", "make test"))
    )
    event = await asyncio.wait_for(asked.get(), BOUND)
    assert (event.request.agent, event.request.task) == ("workhorse", "fix it")

    service.reply(event.request_id, PermissionReply("allow_session"))
    await asyncio.wait_for(check, BOUND)

    def make_test(session: str) -> PermissionRequest:
        return PermissionRequest(session, "bash", "make test", "workhorse", "make", PermissionPreview("command"))

    for session in ("parent", "child", "grandchild", "sibling"):
        reply = await asyncio.wait_for(service.request(make_test(session)), BOUND)
        assert reply.allowed and reply.message == "allowed by the user, for this session"
    another = asyncio.create_task(service.request(make_test("another")))
    assert (await asyncio.wait_for(asked.get(), BOUND)).request.session_id == "another"
    another.cancel()


# -- plan mode ------------------------------------------------------------------------------


def plan_service(config: dict | None = None) -> PermissionService:
    return PermissionService(Config.model_validate(config or {}), Bus(), "headless-yes", AgentCatalog().rules())


@pytest.mark.parametrize("tool, subject", [
    ("edit", "a.py"), ("write", "new.txt"), ("multiedit", "a.py"), ("patch", "a.py"),
    ("delete", "tmp"), ("bash", "ls"), ("calc_add", "1 2"), ("task", "workhorse"),
])  # fmt: skip
def test_plan_mode_denies_every_change_whatever_the_rules_allow(tool, subject):
    service = plan_service({"agents": {"plan": {"permission": {"*": "allow", tool: "allow"}}}})
    decision = service.evaluate(tool, subject, "plan")
    assert (decision.action, decision.reason) == ("deny", PLAN_MODE)


@pytest.mark.parametrize("tool, subject", [("view", "a.py"), ("grep", "x"), ("ls", "."), ("task", "explorer")])
def test_plan_mode_reads_and_starts_the_explorer(tool, subject):
    assert plan_service().evaluate(tool, subject, "plan").action == "allow"


def test_plan_mode_holds_for_every_effect_and_in_the_explorer_it_starts():
    service = plan_service({"agents": {"explorer": {"permission": {"*": "allow"}}}})
    service.inherit("child", "parent", "plan", "look around")
    [judged] = service.judge("bash", [Effect("write", "out.txt")], "coder", session_id="child")
    assert judged.action == "deny" and PLAN_MODE in judged.reason
    decision = service.evaluate("bash", "rm -rf build", "explorer", session_id="child")
    assert decision.action == "deny" and decision.reason == f"{PLAN_MODE}, inherited by explorer"


async def test_plan_mode_in_a_turn_refuses_the_edit_and_leaves_the_file(make_runtime, workspace: Path):
    (workspace / "a.txt").write_text("one\n")
    runtime = make_runtime("headless-yes")
    edit = {"name": "edit", "arguments": {"filePath": "a.txt", "oldString": "one", "newString": "two"}}
    loop = loop_with(runtime, [{"steps": [
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "a.txt"}}]},
        {"toolCalls": [edit]},
        {"text": "I can only plan."},
    ]}])  # fmt: skip
    finished = runtime.bus.subscribe(ToolCallFinished)
    session = runtime.store.sessions.create(title="plan").id

    result = await loop.run(session, "change it", model=MODEL, agent="plan")

    assert result.reason == "stop" and result.files_changed == []
    [refused] = [event for event in finished.drain() if event.tool == "edit"]
    assert refused.error and PLAN_MODE in refused.output
    assert (workspace / "a.txt").read_text() == "one\n"


async def test_allowing_a_task_for_the_session_holds_for_that_prompt_only(make_runtime, permission_answers):
    """With task on ask, the question shows the prompt: allowed for the session, the same
    sub-agent with the same prompt starts unasked, with another prompt it asks."""
    runtime = make_runtime("interactive", {"permission": {"rules": {"task": "ask"}}})
    answers = permission_answers(runtime, PermissionReply("allow_session"), PermissionReply("deny"))

    def task(prompt: str) -> dict:
        return {"toolCalls": [{"name": "task", "arguments": {"description": "look", "prompt": prompt}}]}

    loop = loop_with(runtime, [
        {"match": "^PARENT", "steps": [
            task("CHILD: list the files"), task("CHILD: list the files"), task("CHILD: read ~/.ssh"), {"text": "done"},
        ]},
        {"match": "^CHILD", "steps": [{"text": "child done"}]},
    ])  # fmt: skip
    parent = runtime.store.sessions.create(title="p").id

    await loop.run(parent, "PARENT: go", model=MODEL)

    assert [request.preview.text for request in answers.requests] == ["CHILD: list the files", "CHILD: read ~/.ssh"]
    assert len(runtime.store.sessions.children(parent)) == 2


async def test_a_sub_agents_answer_for_two_files_holds_for_each_in_its_parent_and_no_further(
    make_runtime, workspace: Path, permission_answers
):
    """The workhorse's patch of a.txt and b.txt is allowed for the session: the coder's
    later patch of b.txt alone is not asked, its patch of c.txt is, and a second
    conversation is asked about b.txt again."""
    runtime = make_runtime("interactive")
    answers = permission_answers(runtime, PermissionReply("allow_session"), PermissionReply("deny"), PermissionReply("deny"))

    def patch(body: str) -> dict:
        return {"toolCalls": [{"name": "patch", "arguments": {"patch": f"*** Begin Patch\n{body}*** End Patch\n"}}]}

    loop = loop_with(runtime, [
        {"match": "^PARENT", "steps": [
            {"toolCalls": [{"name": "task", "arguments": {"description": "add", "prompt": "CHILD: add", "subagent_type": "workhorse"}}]},
            patch("*** Update File: b.txt\n@@\n-b\n+b2\n"),
            patch("*** Add File: c.txt\n+c\n"),
            {"text": "parent done"},
        ]},
        {"match": "^CHILD", "steps": [patch("*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n"), {"text": "child done"}]},
        {"match": "^OTHER", "steps": [patch("*** Update File: b.txt\n@@\n-b2\n+b3\n"), {"text": "other done"}]},
    ])  # fmt: skip
    await loop.run(runtime.store.sessions.create(title="p").id, "PARENT: go", model=MODEL)
    await loop.run(runtime.store.sessions.create(title="o").id, "OTHER: go", model=MODEL)

    assert [request.subject for request in answers.requests] == ["a.txt", "c.txt", "b.txt"]
    assert (workspace / "b.txt").read_text() == "b2\n" and not (workspace / "c.txt").exists()
