"""`opencode acp` over the real wire: frames as the editor receives them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp.schema import TextContentBlock

from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

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


async def test_a_prompt_edits_patches_with_a_move_and_deletes_a_directory(workspace, fake_llm, acp_agent):
    seed(workspace)
    script_changes(fake_llm)
    async with acp_agent(workspace, fake_llm, ["allow_once", "allow_once", "allow_once", "reject_once"]) as client:
        session = await client.connection.new_session(cwd=str(workspace))
        sid = session.session_id
        assert session.modes.current_mode_id == "coder"
        assert [m.id for m in session.modes.available_modes] == ["coder", "workhorse"]
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


async def test_cancel_while_a_permission_question_is_open(workspace, fake_llm, acp_agent):
    (workspace / "a.txt").write_text("a\n")
    fake_llm.reply(ToolCall("delete", json.dumps({"path": "a.txt"}), id="d1"))
    async with acp_agent(workspace, fake_llm, ["cancel"]) as client:
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
        for _ in range(500):
            if client.updates(sid, "agent_message_chunk"):
                break
            await asyncio.sleep(0.02)
        assert client.updates(sid, "agent_message_chunk"), client.frames
        await client.connection.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, 30)
        assert response.stop_reason == "cancelled"
