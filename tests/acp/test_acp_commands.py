"""Slash commands and @ mentions over the real ACP wire: what the editor is offered, and
what each kind of command does when a prompt starts with it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.acp.test_acp import diffs_by_call, text
from tests.llm.fake_openai import Text, ToolCall
from tests.waiting import eventually


async def test_commands_are_advertised_and_run(workspace: Path, fake_llm, acp_agent):
    (workspace / ".opencode" / "commands").mkdir(parents=True)
    (workspace / ".opencode" / "commands" / "hello.md").write_text("---\ndescription: Greet\n---\nSay hello to $ARGUMENTS")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n")
    (workspace.parent / "outside.txt").write_text("private\n")
    fake_llm.reply(Text("Hello, world!"))
    fake_llm.reply(Text("Read it."))
    fake_llm.reply(Text("Summary of the talk."))
    async with acp_agent(workspace, fake_llm, ["reject_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        await eventually(lambda: client.updates(sid, "available_commands_update"))
        offered = client.updates(sid, "available_commands_update")[0]["availableCommands"]
        assert [command["name"] for command in offered] == [
            "changes", "undo", "redo", "rewind", "compact", "context", "jobs", "export", "init", "hooks", "skills",
            "steer", "hello",
        ]  # fmt: skip
        assert offered[-1] == {"name": "hello", "description": "Greet", "input": {"hint": "[arguments]"}}

        async def prompt(words: str) -> str:
            before = len(client.updates(sid, "agent_message_chunk"))
            response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text(words)), 60)
            assert response.stop_reason == "end_turn"
            chunks = client.updates(sid, "agent_message_chunk")[before:]
            return "".join(chunk["content"]["text"] for chunk in chunks)

        assert await prompt("/hello world") == "Hello, world!"
        assert fake_llm.requests[0]["messages"][-1] == {"role": "user", "content": "Say hello to world"}

        said = await prompt("look at @src/app.py and @../outside.txt")  # asked about, as view asks: refused
        assert said.startswith("@../outside.txt was not attached: The user denied this external_directory")
        assert said.endswith("\n\nRead it.") and len(client.permission_requests) == 1
        sent = fake_llm.requests[1]["messages"][-1]["content"]
        assert '<attached file="src/app.py">\n     1\tx = 1\n</attached>' in sent and "private" not in sent

        assert await prompt("/theme dark") == "/theme works in the TUI only, not in ACP editors"
        assert await prompt("/hellp") == "unknown command /hellp: did you mean /hello?"
        assert await prompt("/compact") == "Session compacted: the next request starts from the summary"
        assert "look at @src/app.py" in json.dumps(fake_llm.requests[2]["messages"])
        assert len(fake_llm.requests) == 3


async def test_a_command_file_added_since_is_offered_to_the_next_session(workspace: Path, fake_llm, acp_agent):
    async with acp_agent(workspace, fake_llm) as client:
        first = (await client.connection.new_session(cwd=str(workspace))).session_id
        await eventually(lambda: client.updates(first, "available_commands_update"))
        (workspace / ".opencode" / "commands").mkdir(parents=True)
        (workspace / ".opencode" / "commands" / "later.md").write_text("Added later")
        second = (await client.connection.new_session(cwd=str(workspace))).session_id
        await eventually(lambda: client.updates(second, "available_commands_update"))
        names = [c["name"] for c in client.updates(second, "available_commands_update")[0]["availableCommands"]]
        assert "later" in names


async def test_undo_redo_and_export_over_acp(workspace: Path, fake_llm, acp_agent):
    fake_llm.reply(ToolCall("write", json.dumps({"filePath": "b.py", "content": "b = 2\n"}), id="call_1"))
    fake_llm.reply(Text("Wrote b.py."))
    async with acp_agent(workspace, fake_llm, answers=["allow_once"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id

        async def prompt(words: str) -> str:
            before = len(client.updates(sid, "agent_message_chunk"))
            response = await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text(words)), 60)
            assert response.stop_reason == "end_turn"
            return "".join(chunk["content"]["text"] for chunk in client.updates(sid, "agent_message_chunk")[before:])

        await prompt("write b")
        assert (workspace / "b.py").read_text() == "b = 2\n"
        assert await prompt("/undo") == "Undid the turn: write b\n  removed b.py"
        assert not (workspace / "b.py").exists()
        assert await prompt("/changes") == "No files changed in this session."  # created, then removed
        assert await prompt("/redo") == "Redid the turn: write b\n  restored b.py"
        assert (workspace / "b.py").read_text() == "b = 2\n"
        assert (await prompt("/rewind")).splitlines()[1:] == ["   1. write b"]
        assert await prompt("/rewind 1") == "Rewound 1 turn (files and conversation), from: write b\n  removed b.py"
        assert await prompt("/redo") == "Redid the turn: write b\n  restored b.py"
        assert await prompt("/changes") == "changed b.py"
        assert await prompt("/export json") == f"Session exported to opencode-session-{sid}.json"
        exported = json.loads((workspace / f"opencode-session-{sid}.json").read_text())
        assert [m["text"] for m in exported["messages"] if m["role"] == "user"] == ["write b"]
        assert await prompt("/export pdf") == "/export takes md or json, not 'pdf': for example /export json"
        assert len(fake_llm.requests) == 2  # none of these reached the model


async def test_a_reloaded_session_shows_each_call_s_own_diff_after_an_undo(workspace: Path, fake_llm, acp_agent):
    """History holds the undo's versions and the undone turn's too: session/load pairs each
    replayed call with the versions its own turn wrote, not the next ones in the file's list."""
    for n in ("1", "2", "3"):
        fake_llm.reply(ToolCall("write", json.dumps({"filePath": "n.txt", "content": f"{n}\n"}), id=f"w{n}"))
        fake_llm.reply(Text(f"wrote {n}"))
    async with acp_agent(workspace, fake_llm, answers=["allow_always"]) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        for words in ("write 1", "write 2", "/undo", "write 3"):
            await asyncio.wait_for(client.connection.prompt(session_id=sid, prompt=text(words)), 60)
        assert (workspace / "n.txt").read_text() == "3\n"
    async with acp_agent(workspace, fake_llm) as client:
        await client.connection.load_session(cwd=str(workspace), session_id=sid)
        await eventually(lambda: client.updates(sid, "available_commands_update"))
        replayed = diffs_by_call(client, sid)
    assert replayed == {"w1": [("n.txt", None, "1\n", None)], "w3": [("n.txt", "1\n", "3\n", None)]}
