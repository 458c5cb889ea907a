"""The assistant end to end: a headless run against the local fake OpenAI server through
the real litellm client, a real workspace and the real store, checked from the outside
(files on disk, `opencode changes`, the JSON printed)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from app.headless.run import EXIT_OK, run_headless
from app.headless.run_request import HeadlessRequest
from app.runtime import Runtime
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

REPO = Path(__file__).resolve().parents[2]


def script_write_then_edit(fake: FakeOpenAI) -> None:
    """The model creates a file, then edits it, then answers."""
    fake.reply(
        Text("Creating it."), ToolCall("write", json.dumps({"filePath": "src/app.py", "content": "x = 1\n"}))
    )
    fake.reply(
        ToolCall("edit", json.dumps({"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 2"}))
    )
    fake.reply(Text("src/app.py now sets x = 2."), usage=(50, 9))


def test_headless_run_changes_files_records_history_and_reports_json(workspace: Path, fake_llm: FakeOpenAI):
    script_write_then_edit(fake_llm)
    out, err = io.StringIO(), io.StringIO()

    request = HeadlessRequest("create src/app.py and set x to 2", output_format="json", yes=True)
    code = run_headless(workspace, request, env=fake_llm.env, stdout=out, stderr=err)

    assert code == EXIT_OK, err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["response"] == "src/app.py now sets x = 2."
    assert payload["files_changed"] == ["src/app.py"]
    assert payload["usage"] == {
        "prompt_tokens": 70, "completion_tokens": 19, "cache_read_tokens": 0, "cache_write_tokens": 0
    }
    assert fake_llm.requests[0]["model"] == "gpt-5"  # chosen from OPENAI_API_KEY in the environment
    assert (workspace / "src/app.py").read_text() == "x = 2\n"
    assert err.getvalue() == "→ write src/app.py\n→ edit src/app.py\n"
    runtime = Runtime.build(workspace, policy="headless")
    try:
        versions = runtime.store.history.versions(payload["session_id"], "src/app.py")
        assert [(v.version, v.content) for v in versions] == [
            ("initial", ""),
            ("v1", "x = 1\n"),
            ("v2", "x = 2\n"),
        ]
    finally:
        runtime.close()


def cli(workspace: Path, fake: FakeOpenAI, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **fake.env,
        "HOME": str(workspace.parent),
        "XDG_CONFIG_HOME": str(workspace.parent / "config"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), *args],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )  # fmt: skip


def test_cli_prompt_json_and_continue_as_real_processes(workspace: Path, fake_llm: FakeOpenAI):
    script_write_then_edit(fake_llm)
    fake_llm.reply(Text("Still x = 2."))

    first = cli(
        workspace,
        fake_llm,
        "-p",
        "create src/app.py and set x to 2",
        "-f",
        "json",
        "--yes",
        "--model",
        fake_llm.model,
    )
    assert first.returncode == 0, first.stderr
    payload = json.loads(first.stdout)
    assert payload["files_changed"] == ["src/app.py"] and payload["response"] == "src/app.py now sets x = 2."

    again = cli(workspace, fake_llm, "-p", "what is x?", "-f", "json", "-q", "--continue", "--model", fake_llm.model)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["session_id"] == payload["session_id"] and again.stderr == ""
    assert "create src/app.py" in json.dumps(fake_llm.requests[-1]["messages"])  # the history came along

    changes = cli(workspace, fake_llm, "changes", "--session", payload["session_id"], "--json")
    [change] = json.loads(changes.stdout)["files"]
    assert change["path"] == "src/app.py" and change["versions"] == ["initial", "v1", "v2"]


def test_cli_prompt_failure_exits_non_zero_with_one_line(workspace: Path, fake_llm: FakeOpenAI):
    fake_llm.fail(401, "invalid api key", type_="invalid_request_error")

    run = cli(workspace, fake_llm, "-p", "hello", "--model", fake_llm.model)

    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "rejected the API key" in run.stderr


def test_cli_mentions_and_custom_commands_as_real_processes(workspace: Path, fake_llm: FakeOpenAI):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    user_commands = workspace.parent / "config" / "opencode" / "commands"
    user_commands.mkdir(parents=True)
    (user_commands / "hello.md").write_text("Say hello to $ARGUMENTS")
    fake_llm.reply(Text("It prints hi."))
    fake_llm.reply(Text("Hello, world!"))

    explained = cli(workspace, fake_llm, "-p", "explain @src/app.py", "--model", fake_llm.model)
    greeted = cli(workspace, fake_llm, "-p", "/hello world", "--model", fake_llm.model)

    assert (explained.returncode, explained.stdout, explained.stderr) == (0, "It prints hi.\n", "")
    assert fake_llm.requests[0]["messages"][-1]["content"] == (
        'explain @src/app.py\n\n<attached file="src/app.py">\n     1\tprint(\'hi\')\n</attached>'
    )
    assert (greeted.returncode, greeted.stdout) == (0, "Hello, world!\n"), greeted.stderr
    assert fake_llm.requests[1]["messages"][-1]["content"] == "Say hello to world"
    assert len(fake_llm.requests) == 2
