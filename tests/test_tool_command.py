"""`opencode tool` and `opencode changes` as a script runs them: real subprocesses on a
real workspace, checked by exit code, the printed JSON and the files on disk."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def opencode(
    workspace: Path, *args: str, stdin: str | None = None, variables: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")} | (variables or {})
    env["HOME"] = str(workspace.parent / "home")  # no global config of the machine's user
    env.pop("XDG_CONFIG_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), *args],
        cwd=REPO, input=stdin, capture_output=True, text=True, env=env, timeout=60,
    )


def tool(workspace: Path, name: str, arguments: dict | str, *options: str) -> tuple[int, dict]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    done = opencode(workspace, "tool", name, raw, *options)
    return done.returncode, json.loads(done.stdout) if done.stdout else {"stderr": done.stderr}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "old").mkdir()
    (root / "old" / "notes.txt").write_text("keep me in history\n")
    return root


def test_another_tools_opencode_variable_is_one_warning_line_not_an_error(project: Path) -> None:
    """sst/opencode's users have OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_CONFIG... set."""
    done = opencode(project, "tool", "view", '{"filePath": "src/app.py"}', variables={"OPENCODE_DISABLE_AUTOUPDATE": "1"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert done.stderr.splitlines() == [
        "opencode: warning: environment variable OPENCODE_DISABLE_AUTOUPDATE is not an opencode setting: ignored"
    ]


def test_view_then_edit_in_one_session(project: Path) -> None:
    code, viewed = tool(project, "view", {"filePath": "src/app.py"})
    assert code == 0
    edit = {"filePath": "src/app.py", "oldString": "return 1", "newString": "return 2"}
    code, edited = tool(project, "edit", edit, "--session", viewed["session_id"], "--yes")
    assert code == 0 and edited["ok"] is True
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 2\n"


def test_view_then_edit_creating_a_file_in_one_session(project: Path) -> None:
    code, viewed = tool(project, "view", {"filePath": "src/app.py"})
    assert code == 0
    assert set(viewed) == {"ok", "output", "metadata", "session_id"}
    assert viewed["ok"] is True and "return 1" in viewed["output"]

    edit = {"filePath": "src/new.py", "oldString": "", "newString": "x = 1\n"}
    code, edited = tool(project, "edit", edit, "--session", viewed["session_id"], "--yes")
    assert code == 0 and edited["ok"] is True
    assert edited["session_id"] == viewed["session_id"]
    assert edited["metadata"]["additions"] == 1 and edited["metadata"]["deletions"] == 0
    assert (project / "src" / "new.py").read_text() == "x = 1\n"


def test_a_failing_edit_exits_1_and_changes_nothing(project: Path) -> None:
    code, failed = tool(project, "edit", {"filePath": "src/app.py", "oldString": "1", "newString": "2"})
    assert code == 1
    assert failed["ok"] is False and failed["metadata"] == {}
    assert len(failed["output"].splitlines()) == 1 and "view" in failed["output"]
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (("view", '{"filePath": '), None, "not valid JSON"),
        (("view", '["src/app.py"]'), None, "one JSON object"),
        (("nosuch", "{}"), None, "unknown tool 'nosuch'"),
        (("view", "-"), "", "standard input held no tool arguments"),
        pytest.param(
            ("view", "-"), '{"filePath": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels",
            id="100,000 levels",
        ),
        pytest.param(
            ("view", '{"filePath": "a", "limit": ' + "9" * 5_000 + "}"), None, "integer of 5,000 digits",
            id="5,000 digits",
        ),
        pytest.param(
            ("view", "-"), '{"filePath": "' + "a" * 11 * 1024 * 1024 + '"}', "over the limit of 10,485,760 (10 MB)", id="11 MB"
        ),
        (("view", '{"filePath": "src/app.py"}', "--session", "nope"), None, "no session nope"),
    ],
)
def test_usage_errors_exit_2_with_one_line_and_leave_no_session(
    project: Path, args: tuple[str, ...], stdin: str | None, expected: str
) -> None:
    done = opencode(project, "tool", *args, stdin=stdin)
    assert done.returncode == 2 and done.stdout == ""
    assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "no session in this workspace yet" in opencode(project, "changes", "--last").stderr


def test_unknown_parameters_are_a_usage_error(project: Path) -> None:
    code, failed = tool(project, "view", {"filePath": "src/app.py", "lines": 3})
    assert code == 2
    assert failed["ok"] is False and "lines" in failed["output"]
    assert failed["session_id"] is None  # nothing ran: no session was made for it
    assert "no session in this workspace yet" in opencode(project, "changes", "--last").stderr


def test_a_store_failure_while_the_tool_runs_is_a_tool_error(project: Path) -> None:
    """Another process holding the database makes the edit fail (after the store's 5 s
    wait): exit 1 with the JSON answer, not a usage error, and the file is untouched."""
    code, viewed = tool(project, "view", {"filePath": "src/app.py"})
    assert code == 0
    holder = sqlite3.connect(project / ".opencode" / "opencode.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        edit = {"filePath": "src/app.py", "oldString": "return 1", "newString": "return 2"}
        code, failed = tool(project, "edit", edit, "--session", viewed["session_id"], "--yes")
    finally:
        holder.close()
    assert code == 1
    assert failed["ok"] is False and "database is locked" in failed["output"]
    assert failed["session_id"] == viewed["session_id"]
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"


def test_arguments_can_come_on_stdin(project: Path) -> None:
    done = opencode(project, "tool", "view", "-", stdin=json.dumps({"filePath": "src/app.py"}))
    assert done.returncode == 0 and "def main" in json.loads(done.stdout)["output"]


def test_a_delete_that_asks_is_denied_headless_without_yes(project: Path) -> None:
    code, denied = tool(project, "delete", {"path": "old"})
    assert code == 1 and denied["ok"] is False
    assert "--yes" in denied["output"]
    assert (project / "old" / "notes.txt").read_text() == "keep me in history\n"


def test_a_delete_with_yes_is_done_and_listed_by_changes(project: Path) -> None:
    code, deleted = tool(project, "delete", {"path": "old"}, "--yes")
    assert code == 0 and deleted["ok"] is True
    assert not (project / "old").exists()

    done = opencode(project, "changes", "--session", deleted["session_id"], "--json")
    assert done.returncode == 0
    listing = json.loads(done.stdout)
    assert listing["session_id"] == deleted["session_id"]
    assert listing["files"] == [
        {"path": "old/notes.txt", "versions": ["initial", "v1"], "additions": 0, "deletions": 1, "deleted": True}
    ]


def test_changes_lists_each_version_of_a_file_in_the_session(project: Path) -> None:
    code, created = tool(project, "edit", {"filePath": "doc.md", "oldString": "", "newString": "one\n"}, "--yes")
    assert code == 0
    patch = "*** Begin Patch\n*** Update File: doc.md\n@@\n-one\n+two\n+three\n*** End Patch\n"
    code, _ = tool(project, "patch", {"patch": patch}, "--session", created["session_id"], "--yes")
    assert code == 0
    done = opencode(project, "changes", "--session", created["session_id"], "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["files"] == [
        {"path": "doc.md", "versions": ["initial", "v1", "v2"], "additions": 2, "deletions": 0, "deleted": False}
    ]


def test_changes_leaves_out_a_file_created_then_deleted(project: Path) -> None:
    """Net, nothing changed: as the TUI's sidebar, `changes` (text and --json) does not list it."""
    code, created = tool(project, "write", {"filePath": "scratch.txt", "content": "temporary\n"}, "--yes")
    assert code == 0
    session = created["session_id"]
    code, _ = tool(project, "write", {"filePath": "kept.txt", "content": "kept\n"}, "--session", session, "--yes")
    assert code == 0
    code, _ = tool(project, "delete", {"path": "scratch.txt"}, "--session", session, "--yes")
    assert code == 0

    listed = json.loads(opencode(project, "changes", "--session", session, "--json").stdout)["files"]
    text = opencode(project, "changes", "--session", session).stdout
    code, _ = tool(project, "delete", {"path": "kept.txt"}, "--session", session, "--yes")
    assert code == 0
    nothing = opencode(project, "changes", "--session", session)

    assert [row["path"] for row in listed] == ["kept.txt"]
    assert "kept.txt" in text and "scratch.txt" not in text
    assert nothing.stdout == f"session {session}: no files changed\n"

def loaded_modules(workspace: Path, *args: str) -> set[str]:
    """The modules a real `opencode ARGS...` process has imported when it is done."""
    probe = (
        "import json, sys\n"
        "from app.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "-C", str(workspace), *args],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


# What `opencode tool` and `opencode changes` never need: front-ends, the provider, the
# watching, MCP and language-server machinery, turns (undo), and other tools. Their
# whole-process time depends on leaving these out.
NOT_FOR_HEADLESS_COMMANDS = {
    "textual", "litellm", "watchfiles", "mcp", "lsprotocol",
    "app.tui", "app.llm", "app.acp", "app.mcp", "app.workspace.watch", "app.config.save", "app.store.turns",
    "app.tools.bash", "app.tools.view", "app.tools.grep",
}


def test_tool_command_loads_only_what_the_tool_needs(project: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch\n"
    loaded = loaded_modules(project, "tool", "patch", json.dumps({"patch": patch}), "--yes")
    assert (project / "new.txt").read_text() == "hello\n"
    assert "app.tools.patch" in loaded
    assert loaded & NOT_FOR_HEADLESS_COMMANDS == set()


def test_viewing_a_file_that_exists_loads_no_fuzzy_matcher_and_no_image_code(project: Path) -> None:
    """Near-miss names (rapidfuzz) serve a missing path, images a model that takes them:
    reading a text file pays for neither."""
    loaded = loaded_modules(project, "tool", "view", json.dumps({"filePath": "src/app.py"}))
    assert "app.tools.view" in loaded
    assert "rapidfuzz" not in loaded and "app.core.images" not in loaded
    code, missing = tool(project, "view", {"filePath": "src/ap.py"})
    assert code == 1
    assert "src/app.py" in missing["output"]  # the near miss is still suggested


def test_ending_a_tool_calls_event_loop_never_formats_its_result(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A patch's result holds the diff of every file it changed: ending the event loop
    must not format it (asyncio.run's ^C handler holds the main task, result included)."""
    from app.cli import main
    from app.tools.base import ToolResult

    formatted: list[int] = []
    monkeypatch.setattr(ToolResult, "__repr__", lambda self: formatted.append(1) or "ToolResult(...)")
    monkeypatch.setenv("HOME", str(project.parent / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-    return 1\n+    return 2\n*** End Patch\n"
    code = main(["-C", str(project), "tool", "patch", json.dumps({"patch": patch}), "--yes"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert formatted == []


def test_changes_command_loads_no_tool_and_no_language_server_client(project: Path) -> None:
    code, _ = tool(project, "edit", {"filePath": "doc.md", "oldString": "", "newString": "one\n"}, "--yes")
    assert code == 0
    loaded = loaded_modules(project, "changes", "--json", "--include-tool")
    assert loaded & (NOT_FOR_HEADLESS_COMMANDS | {"app.tools.edit", "app.lsp.manager"}) == set()


def test_commands_a_tool_runs_see_the_users_environment(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """opencode's own start-up sets nothing in the environment of the commands it runs."""
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    command = {"command": "echo plugins=${PYDANTIC_DISABLE_PLUGINS-unset}"}
    code, ran = tool(project, "bash", command, "--yes")
    assert code == 0, ran
    assert "plugins=unset" in ran["output"]


def test_the_data_folder_stays_out_of_the_users_git_status(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    before = subprocess.run(["git", "-C", str(project), "status", "--porcelain"], capture_output=True, text=True)
    code, _ = tool(project, "view", {"filePath": "src/app.py"})
    assert code == 0
    assert (project / ".opencode" / ".gitignore").read_text() == "*\n"
    after = subprocess.run(["git", "-C", str(project), "status", "--porcelain"], capture_output=True, text=True)
    assert after.stdout == before.stdout


def test_a_data_folder_made_first_ignores_only_opencodes_own_files(project: Path) -> None:
    """`.opencode/` made by the user for commands and agents: the first run's database,
    lock and logs stay out of `git status`, the user's files stay in git."""
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    (project / ".opencode" / "commands").mkdir(parents=True)
    (project / ".opencode" / "commands" / "hello.md").write_text("Say hello\n")
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"],
                   check=True, timeout=60)
    code, _ = tool(project, "bash", {"command": "echo ran"}, "--yes")
    assert code == 0
    assert (project / ".opencode" / "opencode.db").is_file()
    (project / ".opencode" / "logs").mkdir(exist_ok=True)
    (project / ".opencode" / "logs" / "acp.log").write_text("x\n")
    (project / ".opencode" / "last-model").write_text("openai/gpt\n")
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True)
    assert status.stdout == ""
    (project / ".opencode" / "commands" / "bye.md").write_text("Say bye\n")
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain"], capture_output=True, text=True)
    assert "?? .opencode/commands/bye.md" in status.stdout


def test_a_removed_gitignore_stays_removed(project: Path) -> None:
    """A user who removed the .gitignore after a run (to commit the folder) keeps it removed."""
    assert tool(project, "view", {"filePath": "src/app.py"})[0] == 0
    (project / ".opencode" / ".gitignore").unlink()
    assert tool(project, "view", {"filePath": "src/app.py"})[0] == 0
    assert not (project / ".opencode" / ".gitignore").exists()


def test_edit_patch_is_the_patch_tool_and_its_last_deleted_file_takes_the_folder(project: Path) -> None:
    """`edit.patch` (the spec's name) runs the patch tool; a patch that deletes the last
    file of a folder removes the folder too, as git would leave none behind."""
    (project / "old" / "deeper").mkdir()
    (project / "old" / "deeper" / "more.txt").write_text("x\n")
    patch = "*** Begin Patch\n*** Delete File: old/notes.txt\n*** Delete File: old/deeper/more.txt\n*** End Patch"
    code, ran = tool(project, "edit.patch", {"patch": patch, "allow_delete": True}, "--yes")
    assert code == 0, ran
    assert not (project / "old").exists()
    assert (project / "src" / "app.py").is_file()
    patch = "*** Begin Patch\n*** Update File: src/app.py\n*** Move to: lib/app.py\n@@\n-    return 1\n+    return 2\n*** End Patch"
    code, ran = tool(project, "patch", {"patch": patch, "allow_move": True}, "--yes")
    assert code == 0, ran
    assert not (project / "src").exists() and (project / "lib" / "app.py").is_file()
