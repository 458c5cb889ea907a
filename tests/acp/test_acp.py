"""`opencode acp` over the real wire: frames as the editor receives them."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

from app.llm.agent import DEFAULT_MAX_STEPS
from tests.acp.conftest import REPO
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.waiting import eventually

PATCH = """*** Begin Patch
*** Update File: docs/old.md
*** Move to: docs/new.md
@@
-old
+new
*** Delete File: notes.txt
*** End Patch"""


def seed(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src/app.py").write_text("x = 1\n")
    (workspace / "docs").mkdir()
    (workspace / "docs/old.md").write_text("old\n")
    (workspace / "notes.txt").write_text("gone\n")
    (workspace / "build").mkdir()
    (workspace / "build/a.txt").write_text("a\n")
    (workspace / "build/b.txt").write_text("b\nb\n")


def script_changes(fake: FakeOpenAI) -> None:
    views = [ToolCall("view", json.dumps({"filePath": p}), id=f"v{i}") for i, p in
             enumerate(["src/app.py", "docs/old.md", "notes.txt"])]  # fmt: skip
    fake.reply(Text("Looking."), *views)
    fake.reply(ToolCall("edit", json.dumps({"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 2"}), id="e1"))
    fake.reply(ToolCall("patch", json.dumps({"patch": PATCH, "allow_delete": True}), id="p1"))
    fake.reply(ToolCall("delete", json.dumps({"path": "build"}), id="d1"))
    fake.reply(ToolCall("write", json.dumps({"filePath": "secret.txt", "content": "no\n"}), id="w1"))
    fake.reply(Text("Done."), usage=(40, 3))


def text(prompt: str) -> list[TextContentBlock]:
    return [TextContentBlock(type="text", text=prompt)]


def final_updates(client, session_id: str) -> dict[str, dict]:
    """call id -> its last tool_call_update."""
    return {u["toolCallId"]: u for u in client.updates(session_id, "tool_call_update") if "content" in u}


def diffs_by_call(client, session_id: str) -> dict[str, list[tuple]]:
    """call id -> its diffs as (file name, oldText or None, newText, deleted flag or None)."""
    return {
        call_id: [
            (Path(d["path"]).name, d.get("oldText"), d["newText"], d.get("deleted"))
            for d in update["content"] if d["type"] == "diff"
        ]
        for call_id, update in final_updates(client, session_id).items()
    }  # fmt: skip


def is_commands_update(frame: dict) -> bool:
    return frame.get("method") == "session/update" and "availableCommands" in frame["params"]["update"]


def position(client, predicate: Callable[[dict], bool]) -> int:
    """Where the first frame matching ``predicate`` is among the frames received."""
    return next(i for i, frame in enumerate(client.frames) if predicate(frame))


async def test_a_prompt_edits_patches_with_a_move_and_deletes_a_directory(workspace, fake_llm, acp_agent):
    seed(workspace)
    script_changes(fake_llm)
    async with acp_agent(workspace, fake_llm, ["allow_once", "allow_once", "allow_once", "reject_once"]) as client:
        session = await client.connection.new_session(cwd=str(workspace))
        sid = session.session_id
        assert session.modes.current_mode_id == "coder"
        assert [m.id for m in session.modes.available_modes] == ["coder", "plan"]
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("tidy up")), 60)

        assert response.stop_reason == "end_turn"
        starts = {u["toolCallId"]: u for u in client.updates(sid, "tool_call")}
        assert {cid: u["kind"] for cid, u in starts.items()} == {
            "v0": "read", "v1": "read", "v2": "read", "e1": "edit", "p1": "edit", "d1": "delete", "w1": "edit",
        }  # fmt: skip
        assert starts["e1"]["status"] == "pending" and starts["v0"]["status"] == "in_progress"
        assert starts["e1"]["locations"] == [{"path": str(workspace / "src/app.py")}]
        assert starts["e1"]["rawInput"]["oldString"] == "x = 1"
        assert starts["e1"]["title"] == "edit src/app.py"

        done = final_updates(client, sid)
        assert done["e1"]["status"] == "completed"
        assert done["e1"]["content"][0] == {
            "type": "diff", "path": str(workspace / "src/app.py"), "oldText": "x = 1\n", "newText": "x = 2\n",
        }  # fmt: skip
        patch_diffs = {d["path"]: d for d in done["p1"]["content"] if d["type"] == "diff"}
        moved_from = patch_diffs[str(workspace / "docs/old.md")]
        assert moved_from["deleted"] is True and moved_from["_meta"] == {"opencode": {"deleted": True}}
        assert (moved_from["oldText"], moved_from["newText"]) == ("old\n", "")
        assert patch_diffs[str(workspace / "docs/new.md")]["newText"] == "new\n"
        assert "deleted" not in patch_diffs[str(workspace / "docs/new.md")]
        assert patch_diffs[str(workspace / "notes.txt")]["deleted"] is True
        build = {d["path"]: (d["oldText"], d["newText"], d["deleted"]) for d in done["d1"]["content"] if d["type"] == "diff"}
        assert build == {
            str(workspace / "build/a.txt"): ("a\n", "", True), str(workspace / "build/b.txt"): ("b\nb\n", "", True),
        }  # fmt: skip
        assert done["w1"]["status"] == "failed"
        assert not (workspace / "secret.txt").exists() and not (workspace / "build").exists()
        assert (workspace / "docs/new.md").read_text() == "new\n"

        asked = client.permission_requests
        assert [r["toolCall"]["toolCallId"] for r in asked] == ["e1", "p1", "d1", "w1"]
        assert [(o["optionId"], o["kind"]) for o in asked[0]["options"]] == [
            ("allow_once", "allow_once"), ("allow_always", "allow_always"),
            ("reject_once", "reject_once"), ("reject_always", "reject_always"),
        ]  # fmt: skip
        chunks = "".join(u["content"]["text"] for u in client.updates(sid, "agent_message_chunk"))
        assert chunks == "Looking.Done."
        assert client.updates(sid, "usage_update")[-1]["used"] == 43

        # session/load in a new server replays the same story from the store
    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid)
        replayed = client.updates(sid)
        await eventually(lambda: client.updates(sid, "available_commands_update"))
        load_response_at = position(client, lambda frame: "modes" in (frame.get("result") or {}))
        assert position(client, is_commands_update) > load_response_at  # the replay precedes it, the commands follow
        assert replayed[0] == {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "tidy up"}}
        assert {u["toolCallId"]: u["kind"] for u in client.updates(sid, "tool_call")} == {
            cid: u["kind"] for cid, u in starts.items()
        }
        again = final_updates(client, sid)
        assert again["e1"]["content"][0] == done["e1"]["content"][0]
        assert [d for d in again["d1"]["content"] if d["type"] == "diff"] == [
            d for d in done["d1"]["content"] if d["type"] == "diff"
        ]
        assert sorted(d["path"] for d in again["p1"]["content"] if d.get("deleted")) == [
            str(workspace / "docs/old.md"), str(workspace / "notes.txt"),
        ]  # fmt: skip
        assert again["w1"]["status"] == "failed"


@pytest.mark.parametrize("answer", ["cancel", "cancel-silently"])
async def test_cancel_while_a_permission_question_is_open(workspace, fake_llm, acp_agent, answer):
    """The editor cancels the prompt, then answers the question as cancelled, or never
    answers it: either way the turn ends as cancelled and nothing is deleted."""
    (workspace / "a.txt").write_text("a\n")
    fake_llm.reply(ToolCall("delete", json.dumps({"path": "a.txt"}), id="d1"))
    async with acp_agent(workspace, fake_llm, [answer]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("rm a")), 60)
        assert response.stop_reason == "cancelled"
        assert (workspace / "a.txt").read_text() == "a\n"
        assert final_updates(client, sid)["d1"]["status"] == "failed"


async def test_cancel_mid_stream_stops_the_turn(workspace, fake_llm, acp_agent):
    fake_llm.reply(Text("one "), Text("two "), Text("three"), hang_after=3)
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        prompt = asyncio.create_task(client.connection.prompt(session_id=sid, prompt=text("talk")))
        await eventually(lambda: client.updates(sid, "agent_message_chunk"), what="the first message chunk")
        await client.connection.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 30)
        assert response.stop_reason == "cancelled"


async def test_session_answers_hold_for_the_session(workspace, fake_llm, acp_agent):
    """allow_always lets the same tool on the same file through without asking again,
    reject_always refuses it without asking. The commands are announced once the editor
    knows the session, after its response."""
    for call_id, path, content in [("w1", "b.txt", "b\n"), ("w2", "b.txt", "c\n"), ("w3", "c.txt", "c\n"), ("w4", "c.txt", "d\n")]:
        fake_llm.reply(ToolCall("write", json.dumps({"filePath": path, "content": content}), id=call_id))
    fake_llm.reply(Text("Done."))
    async with acp_agent(workspace, fake_llm, ["allow_always", "reject_always"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        await eventually(lambda: client.updates(sid, "available_commands_update"))
        response_at = position(client, lambda frame: (frame.get("result") or {}).get("sessionId") == sid)
        assert position(client, is_commands_update) > response_at
        assert client.updates(sid, "available_commands_update")[0]["availableCommands"][0]["name"] == "changes"

        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("write")), 60)

        assert response.stop_reason == "end_turn"
        assert [r["toolCall"]["toolCallId"] for r in client.permission_requests] == ["w1", "w3"]
        statuses = {call_id: u["status"] for call_id, u in final_updates(client, sid).items()}
        assert statuses == {"w1": "completed", "w2": "completed", "w3": "failed", "w4": "failed"}
        # w2, allowed by the earlier answer without a question, is shown running before it ends.
        w2 = [u.get("status") for u in client.updates(sid) if u.get("toolCallId") == "w2" and u.get("status")]
        assert w2 == ["pending", "in_progress", "completed"]
        assert (workspace / "b.txt").read_text() == "c\n" and not (workspace / "c.txt").exists()


async def test_the_mode_picks_the_primary_agent_and_plan_mode_changes_nothing(workspace, fake_llm, acp_agent):
    """Modes are the primary agents (coder, plan, the custom ones of .opencode/agents);
    workhorse is a sub-agent, not a mode. In plan mode a write is refused, unasked."""
    agents = workspace / ".opencode" / "agents"
    agents.mkdir(parents=True)
    (agents / "architect.md").write_text("---\nmode: primary\ndescription: Designs\n---\nYou design.\n")
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "b.txt", "content": "b\n"}), id="w1"))
    fake_llm.reply(Text("Here is the plan."))
    async with acp_agent(workspace, fake_llm, []) as client:
        session = await client.connection.new_session(cwd=str(workspace))
        sid = session.session_id
        assert [(m.id, m.description) for m in session.modes.available_modes][1:] == [
            ("plan", "Reads, searches and plans; changes nothing"), ("architect", "Designs"),
        ]  # fmt: skip
        with pytest.raises(RequestError) as refused:
            await client.connection.set_session_mode(session_id=sid, mode_id="workhorse")
        assert refused.value.data == {"message": "unknown mode 'workhorse': use one of coder, plan, architect"}
        await client.connection.set_session_mode(session_id=sid, mode_id="plan")
        assert client.updates(sid, "current_mode_update") == [
            {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
        ]
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("write")), 60)

        assert response.stop_reason == "end_turn" and client.permission_requests == []
        done = final_updates(client, sid)["w1"]
        assert done["status"] == "failed" and "plan mode" in done["rawOutput"]["output"]
        assert not (workspace / "b.txt").exists()
        assert fake_llm.requests[0]["messages"][0]["content"].startswith("You are opencode in plan mode")


async def test_a_sub_agent_s_calls_and_questions_reach_the_editor_as_the_session_s(workspace, fake_llm, acp_agent):
    """A workhorse's edit arrives as a tool_call of the editor's session, titled with the
    sub-agent's name, with its diff (a deletion flagged); its question names the sub-agent
    and its task."""
    (workspace / "src").mkdir()
    (workspace / "src/app.py").write_text("x = 1\n")
    (workspace / "old.txt").write_text("old\n")
    work = {"description": "fix app", "prompt": "set x to 2, remove old.txt", "subagent_type": "workhorse"}
    fake_llm.reply(ToolCall("task", json.dumps(work), id="t1"))
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "src/app.py"}), id="c1"))
    fake_llm.reply(ToolCall("edit", json.dumps({"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 2"}), id="c2"))
    fake_llm.reply(ToolCall("delete", json.dumps({"path": "old.txt"}), id="c3"))
    fake_llm.reply(Text("x is 2; old.txt is gone."))
    fake_llm.reply(Text("The workhorse fixed it."))
    async with acp_agent(workspace, fake_llm, ["allow_once", "allow_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("fix it")), 60)

        assert response.stop_reason == "end_turn"
        starts = {u["toolCallId"]: u for u in client.updates(sid, "tool_call")}
        children = {cid: u for cid, u in starts.items() if cid != "t1"}
        assert sorted((u["title"], u["kind"]) for u in children.values()) == [
            ("workhorse: delete old.txt", "delete"), ("workhorse: edit src/app.py", "edit"),
            ("workhorse: view src/app.py", "read"),
        ]  # fmt: skip
        assert starts["t1"]["kind"] == "think"
        edit_id = next(cid for cid, u in children.items() if u["title"] == "workhorse: edit src/app.py")
        delete_id = next(cid for cid, u in children.items() if u["title"] == "workhorse: delete old.txt")
        assert edit_id.endswith("/c2")
        titles = [request["toolCall"]["title"] for request in client.permission_requests]
        assert titles == ["workhorse · fix app: Edit src/app.py", "workhorse · fix app: Delete old.txt (1 line)"]
        assert [request["toolCall"]["toolCallId"] for request in client.permission_requests] == [edit_id, delete_id]
        diffs = diffs_by_call(client, sid)
        assert diffs[edit_id] == [("app.py", "x = 1\n", "x = 2\n", None)]
        assert diffs[delete_id] == [("old.txt", "old\n", "", True)]
        assert diffs["t1"] == []
        # The child's text stays in its session; the editor's session shows the parent's.
        said = "".join(u["content"]["text"] for u in client.updates(sid, "agent_message_chunk"))
        assert said == "The workhorse fixed it."


async def test_allow_always_on_a_patch_holds_for_each_file_and_an_option_not_offered_denies(
    workspace, fake_llm, acp_agent
):
    """allow_always on a patch of a.txt and b.txt lets a later patch of b.txt alone through
    unasked; a patch adding c.txt asks, and the editor's answer with an option id the
    question did not offer denies it and is remembered as nothing (c.txt asks again)."""

    def patch(call_id: str, body: str) -> ToolCall:
        return ToolCall("patch", json.dumps({"patch": f"*** Begin Patch\n{body}*** End Patch"}), id=call_id)

    fake_llm.reply(patch("p1", "*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n"))
    fake_llm.reply(patch("p2", "*** Update File: b.txt\n@@\n-b\n+b2\n"))
    fake_llm.reply(patch("p3", "*** Add File: c.txt\n+c\n"))
    fake_llm.reply(patch("p4", "*** Add File: c.txt\n+c\n"))
    fake_llm.reply(Text("Done."))
    async with acp_agent(workspace, fake_llm, ["allow_always", "allow_forever", "reject_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("patch")), 60)

        assert response.stop_reason == "end_turn"
        assert [r["toolCall"]["toolCallId"] for r in client.permission_requests] == ["p1", "p3", "p4"]
        covers = client.permission_requests[0]["toolCall"]["content"][-1]["content"]["text"]
        assert covers == (
            "Allow for this session covers what this patch does to a.txt, b.txt; other paths and other changes still ask."
        )
        statuses = {call_id: u["status"] for call_id, u in final_updates(client, sid).items()}
        assert statuses == {"p1": "completed", "p2": "completed", "p3": "failed", "p4": "failed"}
        assert (workspace / "b.txt").read_text() == "b2\n" and not (workspace / "c.txt").exists()


async def test_a_question_the_editor_fails_to_answer_is_a_denial(workspace, fake_llm, acp_agent):
    """An error instead of an answer must not leave the call waiting forever."""
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "b.txt", "content": "b\n"}), id="w1"))
    fake_llm.reply(Text("Understood."))
    async with acp_agent(workspace, fake_llm, ["error"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("write")), 60)

        assert response.stop_reason == "end_turn"
        assert final_updates(client, sid)["w1"]["status"] == "failed"
        assert not (workspace / "b.txt").exists()
        assert "could not answer" in fake_llm.requests[1]["messages"][-1]["content"]


MOVE = """*** Begin Patch
*** Update File: a.txt
*** Move to: b.txt
@@
-a
+b
*** End Patch"""


async def test_new_files_have_no_old_text_and_each_change_replays_with_its_own_call(workspace, fake_llm, acp_agent):
    """ACP's diff for a new file has no oldText (an emptied file has ""). On session/load,
    a dry run claims no version and a move's source is not counted twice, so the later
    calls that touch those paths keep their own diffs."""
    (workspace / "a.txt").write_text("a\n")
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "a.txt"}), id="v1"))
    fake_llm.reply(ToolCall("patch", json.dumps({"patch": MOVE}), id="p1"))
    dry = "*** Begin Patch\n*** Add File: c.txt\n+dry\n*** End Patch"
    fake_llm.reply(ToolCall("patch", json.dumps({"patch": dry, "dry_run": True}), id="p2"))
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "a.txt", "content": "again\n"}), id="w1"))
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "c.txt", "content": "real\n"}), id="w2"))
    fake_llm.reply(ToolCall("edit", json.dumps({"filePath": "d.txt", "oldString": "", "newString": "d\n"}), id="e1"))
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "d.txt", "content": ""}), id="w3"))
    fake_llm.reply(Text("Done."))
    expected = {
        "v1": [],
        "p1": [("a.txt", "a\n", "", True), ("b.txt", None, "b\n", None)],
        "p2": [],
        "w1": [("a.txt", None, "again\n", None)],
        "w2": [("c.txt", None, "real\n", None)],
        "e1": [("d.txt", None, "d\n", None)],
        "w3": [("d.txt", "d\n", "", None)],
    }
    async with acp_agent(workspace, fake_llm, ["allow_once"] * 6) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("go")), 60)
        assert response.stop_reason == "end_turn"
        assert diffs_by_call(client, sid) == expected
    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid)
        assert diffs_by_call(client, sid) == expected


async def test_stop_reasons_for_a_refusal_and_the_step_limit(workspace, fake_llm, acp_agent, tmp_path):
    """Also: 51 model calls leave no log line on stderr (the acp_agent fixture keeps it)."""
    fake_llm.reply(Text("I can't help with that."), finish_reason="content_filter")
    for step in range(DEFAULT_MAX_STEPS):
        fake_llm.reply(ToolCall("ls", "{}", id=f"l{step}"))
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        refused = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("bad")), 60)
        looped = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("loop")), 120)

    assert refused.stop_reason == "refusal"
    assert looped.stop_reason == "max_turn_requests"
    assert fake_llm.pending == 0
    assert "LiteLLM" not in (tmp_path / "acp-stderr.txt").read_text()


def test_a_missing_workspace_is_refused_before_serving(tmp_path: Path):
    missing = tmp_path / "missing"
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "acp", "-C", str(missing)],
        cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert "not a directory" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not missing.exists()


async def test_a_read_outside_the_workspace_asks_about_its_own_call(workspace, fake_llm, acp_agent):
    """Two views run together; the one outside the workspace asks (as external_directory):
    the question names that view's call, with its kind, not a call the editor never saw."""
    (workspace / "a.txt").write_text("inside\n")
    outside = workspace.parent / "outside.txt"
    outside.write_text("outside\n")
    fake_llm.reply(
        ToolCall("view", json.dumps({"filePath": "a.txt"}), id="v1"),
        ToolCall("view", json.dumps({"filePath": str(outside)}), id="v2"),
    )
    fake_llm.reply(Text("Read both."))
    async with acp_agent(workspace, fake_llm, ["allow_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("read")), 60)

        assert response.stop_reason == "end_turn"
        [asked] = client.permission_requests
        assert (asked["toolCall"]["toolCallId"], asked["toolCall"]["kind"]) == ("v2", "read")
        assert str(outside) in asked["toolCall"]["title"]
        done = final_updates(client, sid)
        assert done["v2"]["status"] == "completed" and "outside" in done["v2"]["content"][0]["content"]["text"]
        assert {"toolCallId": "v2", "status": "in_progress", "sessionUpdate": "tool_call_update"} in client.updates(sid)


async def test_a_refused_patch_reads_as_its_reason_in_the_editor_not_the_tools_json(workspace, fake_llm, acp_agent):
    """The patch tool answers the model in spec 002's JSON; the editor shows what it says,
    live and on session/load. raw_output keeps the tool's own answer."""
    add = "*** Begin Patch\n*** Add File: n.txt\n+n\n*** End Patch"
    fake_llm.reply(ToolCall("patch", json.dumps({"patch": add}), id="p1"))
    fake_llm.reply(Text("Understood."))
    async with acp_agent(workspace, fake_llm, ["reject_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("add")), 60)
        await eventually(lambda: "p1" in final_updates(client, sid))
        [shown] = [c["content"]["text"] for c in final_updates(client, sid)["p1"]["content"]]
        assert shown.startswith("The user denied this patch") and '"ok"' not in shown
        assert final_updates(client, sid)["p1"]["rawOutput"]["output"].startswith('{"ok": false')
    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid)
        assert [c["content"]["text"] for c in final_updates(client, sid)["p1"]["content"]] == [shown]


async def test_view_of_an_image_reaches_the_editor_as_image_content(workspace, fake_llm, acp_agent):
    """A vision model (the config says so) views a png: the editor gets the image once, as
    ACP image content; rawOutput keeps the metadata without the base64."""
    data = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
    )
    (workspace / "logo.png").write_bytes(data)
    config = {"providers": {"openai": {"models": {"fake-model": {"vision": True}}}}}
    (workspace / ".opencode.json").write_text(json.dumps(config))
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "logo.png"}), id="v1"))
    fake_llm.reply(Text("A white pixel."))
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("look")), 60)

        assert response.stop_reason == "end_turn"
        done = final_updates(client, sid)["v1"]
        image = done["content"][-1]["content"]
        assert image == {"type": "image", "mimeType": "image/png", "data": base64.b64encode(data).decode()}
        assert "data" not in done["rawOutput"]["metadata"]["image"]


async def test_the_todo_list_reaches_the_editor_as_plans_and_a_fetch_question_names_its_call(
    workspace, fake_llm, acp_agent
):
    """Each todowrite sends the whole list as a `plan` update (a cancelled item as
    completed, saying so), with no question; session/load sends the stored list once more,
    after the replay. A webfetch asks under its permission key, fetch, yet the editor's
    question names the webfetch call, with the URL; allowed, the loopback address is then
    refused (a project cannot set tools.webfetch.allowPrivate), in one line."""
    first = [{"id": "a", "content": "Read the code", "status": "in_progress", "priority": "high"},
             {"id": "b", "content": "Write the fix", "status": "pending"}]  # fmt: skip
    second = [{**first[0], "status": "completed"}, {**first[1], "status": "cancelled"}]
    fake_llm.reply(ToolCall("todowrite", json.dumps({"todos": first}), id="t1"))
    fake_llm.reply(ToolCall("todowrite", json.dumps({"todos": second}), id="t2"))
    fake_llm.reply(Text("Planned."))
    fake_llm.reply(ToolCall("webfetch", json.dumps({"url": "http://127.0.0.1:9/docs"}), id="f1"))
    fake_llm.reply(Text("Could not read it."))
    expected_last = [
        {"content": "Read the code", "priority": "high", "status": "completed", "_meta": {"opencode": {"id": "a"}}},
        {"content": "Cancelled: Write the fix", "priority": "medium", "status": "completed",
         "_meta": {"opencode": {"status": "cancelled", "id": "b"}}},
    ]  # fmt: skip
    async with acp_agent(workspace, fake_llm, ["allow_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("plan it")), 60)
        assert response.stop_reason == "end_turn"
        plans = [update["entries"] for update in client.updates(sid, "plan")]
        assert [[entry["status"] for entry in plan] for plan in plans] == [["in_progress", "pending"], ["completed", "completed"]]
        assert plans[-1] == expected_last
        assert client.permission_requests == []  # todowrite changes no file: nobody is asked

        response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text("read the docs")), 60)
        assert response.stop_reason == "end_turn"
        assert client.permission_requests == []  # a loopback address is refused without a question
        started = [update for update in client.updates(sid, "tool_call") if update["toolCallId"] == "f1"]
        assert [(update["kind"], update["title"]) for update in started] == [("fetch", "webfetch http://127.0.0.1:9/docs")]
        done = final_updates(client, sid)["f1"]
        assert done["status"] == "failed"
        assert "127.0.0.1 is a loopback address" in done["rawOutput"]["output"]
    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid)
        replayed = [update for update in client.updates(sid) if update["sessionUpdate"] != "available_commands_update"]
        assert replayed[-1] == {"sessionUpdate": "plan", "entries": expected_last}
        assert len(client.updates(sid, "plan")) == 1
