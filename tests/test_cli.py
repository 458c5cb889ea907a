"""The command line as a user runs it: real subprocesses of `python -m app.cli`. A table of
cases for one command runs its first case in a subprocess and the rest through
``app.cli.main`` in this process (``checked``): the same parser and code, without a
start-up per case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app import cli

REPO = Path(__file__).resolve().parents[1]


def opencode(*args: str, cwd: Path | None = None, stdin: str | None = None, home: Path | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    if home is not None:
        env["HOME"] = str(home)
        env.pop("XDG_CONFIG_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd or REPO,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path
) -> Callable[..., tuple[int, str, str]]:
    """``run(*args)``: (exit code, stdout, stderr) of ``cli.main(args)`` in this process,
    in the environment ``opencode`` gives a subprocess (HOME set, no XDG_CONFIG_HOME or
    OPENCODE_* variable)."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in [name for name in os.environ if name.startswith("OPENCODE_")]:
        monkeypatch.delenv(name)
    capsys.readouterr()

    def run(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path, *cases: list[str]
) -> list[tuple[int, str]]:
    """(exit code, first line of stdout) of ``opencode permission check *case`` for each
    case: the first in a subprocess, the others ``in_process``."""
    first = opencode("permission", "check", *cases[0], home=home)
    results = [(first.returncode, first.stdout.splitlines()[0] if first.stdout else first.stderr)]
    run = in_process(monkeypatch, capsys, home)
    for case in cases[1:]:
        code, out, err = run("permission", "check", *case)
        results.append((code, out.splitlines()[0] if out else err))
    return results


def test_version_prints_the_package_version():
    from app import __version__

    result = opencode("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"opencode {__version__}"


def test_help_lists_every_subcommand_with_a_description():
    result = opencode("--help")
    assert result.returncode == 0
    described = {
        "schema": "print the JSON Schema",
        "permission": "inspect permission rules",
        "tool": "run one tool call",
        "changes": "list the files a session changed",
    }
    text = " ".join(result.stdout.split())
    for command, description in described.items():
        assert f"{command} {description}" in text


def test_schema_prints_the_committed_schema_file():
    result = opencode("schema")
    assert result.returncode == 0
    assert result.stdout == (REPO / "opencode-schema.json").read_text()


def test_bad_config_is_one_line_naming_file_and_position_with_exit_2(tmp_path):
    (tmp_path / ".opencode.json").write_text('{\n  "debug": true,\n  "tui": {"theme": }\n}\n')
    result = opencode("permission", "check", "delete", "main.go", "-C", str(tmp_path), home=tmp_path / "home")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{tmp_path / '.opencode.json'}:3:" in lines[0]
    assert "Traceback" not in result.stderr


def test_unknown_action_names_the_key_path(tmp_path):
    (tmp_path / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"delete": {"*.go": "nope"}}}}))
    result = opencode("permission", "check", "delete", "main.go", "-C", str(tmp_path), home=tmp_path / "home")
    assert result.returncode == 2
    assert "permission.rules.delete" in result.stderr and '"nope"' in result.stderr


def test_permission_check_reports_the_deciding_rule(tmp_path, monkeypatch, capsys):
    rules = {"*": "ask", "tmp/*": "allow", "*.go": "deny"}
    (tmp_path / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"delete": rules}}}))
    home = tmp_path / "home"
    expected = {
        "tmp/a.txt": 'allow (delete rule "tmp/*")',
        "main.go": 'deny  (delete rule "*.go")',
        "./tmp/../main.go": 'deny  (delete rule "*.go")',
        "README.md": 'ask   (delete rule "*")',
    }
    cases = [["delete", subject, "-C", str(tmp_path)] for subject in expected]
    assert checked(monkeypatch, capsys, home, *cases) == [(0, line) for line in expected.values()]


def test_permission_check_judges_a_command_as_the_bash_tool_does(tmp_path, monkeypatch, capsys):
    """Part by part: a rule allowing the whole string decides nothing (`git *` matches
    `git status; rm -rf x`), and what a wrapper runs is a part too."""
    rules = {"bash": {"git *": "allow", "ls *": "allow", "rm *": "deny"}, "external_directory": {"/etc/*": "deny"}}
    (tmp_path / ".opencode.json").write_text(json.dumps({"permission": {"rules": rules}}))
    expected = {
        "git status; rm -rf x": 'deny  (part "rm -rf x": global rule "rm *")',
        "nohup rm -rf x": 'deny  (part "rm -rf x": global rule "rm *")',
        "curl https://example.com": "deny  (curl is banned (tools.bash.bannedCommands))",
        "ls /etc/passwd": 'deny  (/etc/passwd, outside the workspace: external_directory, global rule "/etc/*")',
        "git status && ls -la": 'allow (every part allowed: global rule "git *"; global rule "ls *")',
        "ls $(whoami)": 'ask   ("whoami": default for bash)',
    }
    cases = [["bash", command, "-C", str(tmp_path)] for command in expected]
    assert checked(monkeypatch, capsys, tmp_path / "home", *cases) == [(0, line) for line in expected.values()]


def test_permission_check_judges_a_url_as_webfetch_spells_it(tmp_path, monkeypatch, capsys):
    """The rules see the URL webfetch would fetch: scheme and host in lower case, no
    default port, no fragment, escaped letters decoded; a URL it refuses is one line."""
    rules = {"fetch": {"https://example.com/api*": "deny", "https://docs.python.org/*": "allow"}}
    (tmp_path / ".opencode.json").write_text(json.dumps({"permission": {"rules": rules}}))
    expected = {
        "HTTPS://Example.COM:443/%61pi/v1#top": 'deny  (global rule "https://example.com/api*")',
        "https://docs.python.org/3/": 'allow (global rule "https://docs.python.org/*")',
        "https://example.org/": "ask   (default for fetch)",
    }
    cases = [["fetch", url, "-C", str(tmp_path)] for url in expected]
    assert checked(monkeypatch, capsys, tmp_path / "home", *cases) == [(0, line) for line in expected.values()]
    spelled = opencode("permission", "check", "fetch", "HTTP://0x7f.1:80/x#y", "-C", str(tmp_path), home=tmp_path / "home")
    assert spelled.stdout.splitlines()[1] == "  fetch http://127.0.0.1/x"
    refused = opencode("permission", "check", "fetch", "file:///etc/passwd", "-C", str(tmp_path), home=tmp_path / "home")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "opencode: error: webfetch: file:///etc/passwd is a URL of scheme file: only http and https URLs are fetched"
    )


def test_unknown_subcommand_is_a_usage_error():
    result = opencode("frobnicate")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_tool_command_rejects_unknown_tools_and_bad_json_with_exit_2(tmp_path):
    home = tmp_path / "home"
    unknown = opencode("tool", "nosuchtool", "{}", "-C", str(tmp_path), home=home)
    assert unknown.returncode == 2
    assert "unknown tool 'nosuchtool'" in unknown.stderr


def test_changes_without_any_session_is_a_clear_usage_error(tmp_path):
    result = opencode("changes", "-C", str(tmp_path), home=tmp_path / "home")
    assert result.returncode == 2
    assert result.stderr.strip() == "opencode: error: no session in this workspace yet"


def test_a_headless_turn_with_a_change_left_unapproved_exits_3(tmp_path):
    script = tmp_path / "script.json"
    write = {"name": "write", "arguments": {"filePath": "notes.txt", "content": "x\n"}}
    script.write_text(json.dumps({"turns": [{"steps": [{"toolCalls": [write]}, {"text": "Could not."}]}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()

    refused = opencode(
        "-p", "take a note", "--model", f"scripted/{script}", "-C", str(workspace), home=tmp_path
    )
    allowed = opencode(
        "-p", "take a note", "--model", f"scripted/{script}", "-C", str(workspace), "--yes", home=tmp_path
    )

    assert (refused.returncode, refused.stdout) == (3, "Could not.\n")
    assert refused.stderr.splitlines()[-1].startswith(
        "opencode: error: 1 call needed approval and was refused"
    )
    assert (allowed.returncode, (workspace / "notes.txt").read_text()) == (0, "x\n")


def opencode_without_keys(*args: str, home: Path) -> subprocess.CompletedProcess:
    """`opencode ARGS` with no provider key or server in its environment, reporting its
    imports on stderr (-X importtime), so a test can see whether litellm was loaded."""
    from app.llm.api_keys import key_variables

    unset = {variable for variables in key_variables().values() for variable in variables}
    env = {k: v for k, v in os.environ.items() if k not in unset and not k.startswith("OPENCODE_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local"))
    env = {k: v for k, v in env.items() if not k.endswith(("_API_BASE", "_BASE_URL"))}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "app.cli", *args],
        cwd=home, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def said(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if not line.startswith("import time:")]


def loaded_litellm(result: subprocess.CompletedProcess) -> bool:
    return any(line.startswith("import time:") and "litellm" in line for line in result.stderr.splitlines())


def test_a_missing_api_key_is_one_line_naming_the_variable_before_any_request(tmp_path):
    for model, variable, provider in [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY", "openai"),
        ("anthropic/claude-foo", "ANTHROPIC_API_KEY", "anthropic"),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY", "gemini"),
    ]:
        result = opencode_without_keys("-p", "hi", "--model", model, home=tmp_path)

        assert result.returncode == 2, result.stderr
        assert said(result) == [
            f"opencode: error: no API key for {model}: set {variable} in the environment "
            f"or providers.{provider}.apiKey in .opencode.json"
        ]
        assert not loaded_litellm(result)  # nothing was sent, so nothing was retried


def test_an_unknown_model_fails_before_litellm_loads_with_close_matches(tmp_path):
    unknown = opencode_without_keys("-p", "hi", "--model", "nosuchmodel", home=tmp_path)
    misspelt = opencode_without_keys("-p", "hi", "--model", "claude-sonet-4-5", home=tmp_path)

    assert (unknown.returncode, misspelt.returncode) == (2, 2)
    assert said(unknown) == [
        "opencode: error: unknown model nosuchmodel: litellm does not know it; "
        "name it as provider/model, e.g. anthropic/claude-sonnet-4-5 or openai/gpt-5"
    ]
    assert len(said(misspelt)) == 1 and "did you mean anthropic/claude-sonnet-4-5" in said(misspelt)[0]
    assert not loaded_litellm(unknown) and not loaded_litellm(misspelt)


def test_a_tool_call_does_not_become_the_last_session(tmp_path, monkeypatch, capsys):
    """The two turns run as processes; the tool call and the listings run ``in_process``."""
    script = tmp_path / "script.json"
    write = {"name": "write", "arguments": {"filePath": "notes.txt", "content": "x\n"}}
    script.write_text(json.dumps({"turns": [{"steps": [{"toolCalls": [write]}, {"text": "Noted."}]}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = ["--model", f"scripted/{script}", "-C", str(workspace)]

    chat = json.loads(opencode("-p", "take a note", "--yes", "-f", "json", *model, home=tmp_path).stdout)
    run = in_process(monkeypatch, capsys, tmp_path)
    tool = json.loads(run("tool", "view", '{"filePath": "notes.txt"}', "-C", str(workspace))[1])
    last = json.loads(run("changes", "--last", "--json", "-C", str(workspace))[1])
    asked = json.loads(run("changes", "--last", "--include-tool", "--json", "-C", str(workspace))[1])
    resumed = json.loads(
        opencode("-p", "take a note", "--continue", "--yes", "-f", "json", *model, home=tmp_path).stdout
    )

    assert tool["ok"] and tool["session_id"] != chat["session_id"]
    assert (last["session_id"], [f["path"] for f in last["files"]]) == (chat["session_id"], ["notes.txt"])
    assert asked["session_id"] == tool["session_id"]
    assert asked["title"] == "opencode tool view"
    assert resumed["session_id"] == chat["session_id"]


def test_changes_with_only_tool_sessions_says_how_to_see_them(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    assert (
        opencode("tool", "view", '{"filePath": "a.txt"}', "-C", str(tmp_path), home=tmp_path).returncode == 0
    )

    result = opencode("changes", "-C", str(tmp_path), home=tmp_path)

    assert result.returncode == 2
    assert result.stderr == (
        "opencode: error: no conversation in this workspace yet, only `opencode tool` calls: "
        "add --include-tool to see theirs\n"
    )


def test_the_tui_with_an_unknown_model_fails_before_it_starts(tmp_path):
    result = opencode_without_keys("--model", "claude-sonet-4-5", "-C", str(tmp_path), home=tmp_path)  # no -p: the TUI

    assert result.returncode == 2
    assert said(result)[0].startswith("opencode: error: unknown model claude-sonet-4-5: did you mean anthropic/")
    assert len(said(result)) == 1
    assert not any("textual" in line for line in result.stderr.splitlines() if line.startswith("import time:"))


def test_p_dash_reads_the_prompt_from_standard_input(tmp_path):
    from app.bus import Bus
    from app.store import open_store

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"steps": [{"text": "Read it."}]}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ran = opencode("-p", "-", "--model", f"scripted/{script}", "-C", str(workspace), "-f", "json", "--no-attach",
                   stdin="explain this diff\n+ a line\n", home=tmp_path)
    empty = opencode("-p", "-", "--model", f"scripted/{script}", "-C", str(workspace), "--no-attach",
                     stdin="  \n", home=tmp_path)

    assert ran.returncode == 0, ran.stderr
    session_id = json.loads(ran.stdout)["session_id"]
    store = open_store(workspace / ".opencode" / "opencode.db", Bus())
    try:
        prompt = store.messages.list(session_id)[0]
        assert [part.get("text") for part in prompt.parts] == ["explain this diff\n+ a line\n"]
    finally:
        store.close()
    assert empty.returncode == 2
    assert empty.stderr == "opencode: error: -p -: standard input was empty: pipe the prompt in, or give it as -p TEXT\n"


def test_an_export_names_the_model_of_the_latest_answer_and_a_p_session_its_model(tmp_path):
    from app.bus import Bus
    from app.prompt.export import transcript
    from app.store import open_store

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"steps": [{"text": "Hi."}]}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = f"scripted/{script}"
    ran = opencode("-p", "hello", "--model", model, "-C", str(workspace), "-f", "json", "--no-attach", home=tmp_path)
    assert ran.returncode == 0, ran.stderr
    store = open_store(workspace / ".opencode" / "opencode.db", Bus())
    try:
        session_id = json.loads(ran.stdout)["session_id"]
        assert store.sessions.get(session_id).model == model  # known before any answer
        switched = store.sessions.create(title="switched", model="openai/gpt-old")
        store.messages.add(switched.id, "user", [{"type": "text", "text": "hi"}])
        store.messages.add(switched.id, "assistant", [{"type": "text", "text": "hello"}], model="openai/gpt-new")
        assert transcript(store, switched.id)["session"]["model"] == "openai/gpt-new"
    finally:
        store.close()
