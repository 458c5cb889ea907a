"""`opencode export` (app/prompt/export.py, docs/export.md) on a session the real loop made
through the fake OpenAI server: real tools, real files, real SQLite, the real CLI."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.headless.run import run_headless
from app.headless.run_request import HeadlessRequest
from app.prompt.turn_undo import undo_turn
from tests.llm.fake_openai import Text
from tests.llm.test_turn_undo import Chat, call


@pytest.fixture
async def chat(make_runtime, fake_llm, workspace: Path) -> Chat:
    chat = Chat(make_runtime(), fake_llm, workspace)
    await chat.big_turn()  # view a.py; then edit a.py, write b.py, delete c.py
    return chat


def export(capsys, workspace: Path, *arguments: str) -> tuple[int, str, str]:
    code = main(["export", "-C", str(workspace), *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_markdown_has_the_prompts_answers_tool_calls_and_a_diff_of_each_change(chat: Chat, capsys):
    code, out, err = export(capsys, chat.root, "--last", "--format", "md")

    assert (code, err) == (0, "")
    assert out.startswith("# test\n")
    assert "## User\n\nchange the three files\n" in out
    assert "answered change the three files" in out
    assert "**Tool call: edit**" in out and '"oldString": "a = 1"' in out
    assert "**Tool call: write**" in out and "**Tool call: delete**" in out
    assert "-\ufeffa = 1\r\n+\ufeffa = 2\r\n" in out  # the edit's diff, its BOM and CRLF as in the file
    assert "model openai/fake-model" in out
    assert "+b = 2" in out and "-c = 3" in out  # the created and the deleted file
    assert "### b.py (created) +1 -0" in out and "### c.py (deleted) +0 -1" in out


async def test_json_parses_and_has_the_documented_shape(chat: Chat, capsys):
    code, out, _ = export(capsys, chat.root, "--format", "json")

    document = json.loads(out)
    assert code == 0
    assert (document["format"], document["version"]) == ("opencode.transcript", 1)
    assert set(document) == {"format", "version", "exported_at", "session", "messages", "files"}
    assert set(document["session"]) == {"id", "title", "created_at", "model", "prompt_tokens", "completion_tokens", "cost"}
    assert document["session"]["id"] == chat.session_id
    user = [m["text"] for m in document["messages"] if m["role"] == "user"]
    assert user == ["look at a", "change the three files"]
    calls = [c for m in document["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    assert [c["name"] for c in calls] == ["view", "edit", "write", "delete"]
    edit = calls[1]
    assert set(edit) == {"id", "name", "arguments", "result", "diff", "subagent"}
    assert edit["arguments"] == {"filePath": "a.py", "oldString": "a = 1", "newString": "a = 2"}
    assert edit["result"]["error"] is False and edit["result"]["output"]
    assert "+\ufeffa = 2" in edit["diff"] and calls[0]["diff"] is None
    files = {f["path"]: f for f in document["files"]}
    assert set(files) == {"a.py", "b.py", "c.py"}
    assert files["b.py"]["created"] and files["c.py"]["deleted"] and "-c = 3" in files["c.py"]["diff"]


async def test_an_undone_turn_is_not_exported(chat: Chat, capsys):
    await undo_turn(chat.runtime, chat.session_id)
    _, out, _ = export(capsys, chat.root, "--session", chat.session_id, "--format", "json")
    document = json.loads(out)
    assert [m["text"] for m in document["messages"] if m["role"] == "user"] == ["look at a"]
    assert document["files"] == []


async def test_output_file_is_never_overwritten_without_force(chat: Chat, capsys, tmp_path: Path):
    target = tmp_path / "out.md"
    assert export(capsys, chat.root, "-o", str(target)) == (0, "", f"exported session {chat.session_id} to {target}\n")
    assert "change the three files" in target.read_text()

    target.write_text("keep me\n")
    code, out, err = export(capsys, chat.root, "-o", str(target))
    assert (code, out) == (2, "")
    assert err == f"opencode: error: {target} already exists: pass --force to replace it, or choose another -o path\n"
    assert target.read_text() == "keep me\n"

    assert export(capsys, chat.root, "-o", str(target), "--force", "--format", "json")[0] == 0
    assert json.loads(target.read_text())["session"]["id"] == chat.session_id


async def test_force_never_writes_through_a_planted_link(chat: Chat, capsys, tmp_path: Path):
    """Links planted beside the target (at the name a temporary file once had) and at the
    target itself: the outside files keep their content, the target is a new file."""
    outside, folder = tmp_path / "outside", tmp_path / "exports"
    outside.mkdir()
    folder.mkdir()
    victims = [outside / "precious.txt", outside / "other.txt"]
    for victim in victims:
        victim.write_text("do not touch\n")
    target = folder / "out.md"
    target.write_text("old export\n")
    (folder / ".out.md.opencode-export").symlink_to(victims[0])
    assert export(capsys, chat.root, "-o", str(target), "--force")[0] == 0
    linked = folder / "linked.md"
    linked.symlink_to(victims[1])
    assert export(capsys, chat.root, "-o", str(linked), "--force")[0] == 0

    assert [victim.read_text() for victim in victims] == ["do not touch\n"] * 2
    assert "change the three files" in target.read_text() and not linked.is_symlink()
    assert sorted(path.name for path in folder.iterdir()) == [".out.md.opencode-export", "linked.md", "out.md"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--session", "nope"], "no session nope in this workspace: check the id"),
        (["-o", "/nonexistent-folder/x.md"], "cannot write /nonexistent-folder/x.md: No such file or directory; choose another -o path"),
        (["--force"], "--force only applies with -o FILE"),
    ],
)
async def test_errors_are_one_line_with_the_fix_and_exit_2(chat: Chat, capsys, arguments, message):
    code, out, err = export(capsys, chat.root, *arguments)
    assert (code, out) == (2, "")
    assert err.startswith(f"opencode: error: {message}") and err.count("\n") == 1


def test_no_conversation_yet_is_one_line(capsys, workspace: Path):
    code, out, err = export(capsys, workspace, "--last")
    assert (code, out) == (2, "")
    assert err == "opencode: error: no conversation to export in this workspace yet: start one with opencode or opencode -p\n"


async def test_a_bad_format_is_refused_by_the_parser(chat: Chat, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export", "-C", str(chat.root), "--format", "pdf"])
    assert exited.value.code == 2
    assert "invalid choice: 'pdf'" in capsys.readouterr().err


async def test_the_command_imports_neither_textual_nor_litellm(chat: Chat):
    """Run as a process of its own: the export command stays a light one-shot command."""
    check = (
        "import sys\n"
        "from app.cli import main\n"
        f"code = main(['export', '-C', {str(chat.root)!r}, '--format', 'json'])\n"
        "assert code == 0\n"
        "print(sorted(name for name in ('textual', 'litellm') if name in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session"]["id"] == chat.session_id
    assert done.stderr == "[]\n"


async def test_headless_export_command_writes_in_the_workspace(chat: Chat):
    out, err = io.StringIO(), io.StringIO()
    env = chat.fake.env
    code = await asyncio.to_thread(  # run_headless runs its own event loop
        run_headless, chat.root, HeadlessRequest("/export", continue_last=True, model=chat.fake.model),
        env=env, stdout=out, stderr=err,
    )
    assert (code, out.getvalue()) == (0, f"Session exported to opencode-session-{chat.session_id}.md\n")
    assert "## User\n\nchange the three files\n" in (chat.root / f"opencode-session-{chat.session_id}.md").read_text()


async def test_a_sub_agents_transcript_is_exported_under_its_task_call(make_runtime, fake_llm, workspace, capsys):
    chat = Chat(make_runtime(), fake_llm, workspace)
    await chat.run(
        "delegate",
        [call("task", description="make d", prompt="create d.py", subagent_type="workhorse")],
        [call("write", filePath="d.py", content="d = 1\n")],
        [Text("child made d.py")],
    )
    _, out, _ = export(capsys, workspace, "--format", "json")
    document = json.loads(out)
    [task] = [c for m in document["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    child = task["subagent"]
    assert child["title"] and child["messages"][0] == {**child["messages"][0], "role": "user", "text": "create d.py"}
    [write] = [c for m in child["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    assert write["arguments"] == {"filePath": "d.py", "content": "d = 1\n"} and "+d = 1" in write["diff"]
    assert [f["path"] for f in document["files"]] == ["d.py"]  # the sub-agent's change counts as the session's
    _, md, _ = export(capsys, workspace)
    assert "Sub-agent session" in md and "### User\n\ncreate d.py" in md
