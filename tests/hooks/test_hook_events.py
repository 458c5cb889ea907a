"""The other events: SessionStart's context, SubagentStop, PreCompact before a summary,
Notification when a turn finishes, SessionEnd at close, and a PreToolUse "ask" that asks
where the rules allow; each with a real hook script logging what it read."""

from __future__ import annotations

import asyncio
import json

from app.permission import PermissionReply, PermissionRequested
from tests.hooks.conftest import call, logged, script, settings, write_json
from tests.llm.fake_openai import Text
from tests.waiting import eventually


async def test_sessionstart_context_is_sent_with_the_first_prompt_only(harness, workspace, home):
    write_json(home / ".claude" / "settings.json", settings("SessionStart", "echo 'Branch: main, 3 files dirty'", "startup"))
    h = harness()
    h.fake.reply(Text("one"))
    h.fake.reply(Text("two"))

    await h.run("first")
    await h.run("second")

    first, second = (json.dumps(request["messages"]) for request in h.fake.requests)
    assert "Branch: main, 3 files dirty" in first
    assert second.count("Branch: main, 3 files dirty") == 1  # the first prompt's, not a second one


async def test_subagentstop_precompact_notification_and_sessionend_hooks_run(harness, workspace, home):
    log = workspace.parent / "events.jsonl"
    record = script("record_event.py", str(log))
    hooks = {
        event: [{"hooks": [{"type": "command", "command": record}]}]
        for event in ("SubagentStop", "PreCompact", "Notification", "SessionEnd")
    }
    write_json(home / ".claude" / "settings.json", {"hooks": hooks})
    h = harness()
    h.fake.reply(call("task", description="look", prompt="look around", subagent_type="explorer"))
    h.fake.reply(Text("nothing here"))  # the sub-agent's answer
    h.fake.reply(Text("done"))
    h.fake.reply(Text("the summary"))

    await h.run("explore")
    await eventually(lambda: any(e["hook_event_name"] == "Notification" for e in logged(log)), what="the Notification hook")
    await h.loop.compact(h.session_id, model=h.fake.model)
    await h.loop.aclose()

    events = {event["hook_event_name"]: event for event in logged(log)}
    assert events["SubagentStop"]["stop_hook_active"] is False
    assert events["SubagentStop"]["session_id"] != h.session_id  # the child's session
    assert events["Notification"]["notification_type"] == "idle_prompt"
    assert events["PreCompact"]["trigger"] == "manual"
    assert events["SessionEnd"]["session_id"] == h.session_id


async def test_a_pretooluse_ask_asks_where_the_rules_allow(harness, workspace, home):
    ask = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}})
    write_json(home / ".claude" / "settings.json", settings("PreToolUse", f"echo '{ask}'", "Write"))
    h = harness(policy="interactive", config={"permission": {"rules": {"write": "allow"}}})
    h.fake.reply(call("write", filePath="notes.txt", content="hi\n"))
    h.fake.reply(Text("done"))
    questions = h.runtime.bus.subscribe(PermissionRequested)

    async def answer() -> None:
        asked = await asyncio.wait_for(questions.get(), 60)  # a deadline only a failure reaches
        h.runtime.permissions.reply(asked.request_id, PermissionReply("deny"))

    answering = asyncio.create_task(answer())
    await asyncio.wait_for(h.run("write notes"), 120)
    await answering

    assert not (workspace / "notes.txt").exists()
