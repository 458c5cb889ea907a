"""The bash tool, end to end: real shells in the workspace, real process groups (checked
in /proc), the permission rules applied to every part of a compound command."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core import child_environment
from app.core.errors import PermissionDeniedError, ToolError
from app.permission import PermissionReply
from app.store.location import DATA_DIRECTORY_VARIABLE
from app.tools.bash import BashTool, OutputCapture
from tests.sandbox.conftest import skip_unless_available
from tests.waiting import eventually

COMPOUND_RULES = {"permission": {"rules": {"bash": {"git status": "allow", "ls *": "allow", "rm *": "deny"}}}}
DENY = PermissionReply("deny")
ALLOW_ONCE = PermissionReply("allow_once")


@pytest.fixture
def bash() -> BashTool:
    return BashTool()


def live_members(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are still running (zombies are dead)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, _ppid, pgrp = text[text.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            members.append(int(stat.parent.name))
    return members


def is_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def interactive(make_runtime, config=None):
    runtime = make_runtime(policy="interactive", config=config)
    return runtime, runtime.context(runtime.store.sessions.create().id)


# --- running ---------------------------------------------------------------------------


async def test_output_of_both_streams_and_the_exit_code(bash, ctx):
    result = await bash.call({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert result.output.splitlines() == ["out", "err", "", "Exit code: 3"]
    assert result.metadata["exit_code"] == 3
    assert result.metadata["timed_out"] is False


async def test_a_variable_opencode_set_for_itself_reaches_the_command_as_the_user_had_it(bash, ctx, monkeypatch):
    """`--worktree` points opencode's data folder elsewhere for itself: the command sees
    the user's value; a variable the user never had is left out."""
    monkeypatch.setattr(child_environment, "_USER_VALUES", {})
    monkeypatch.setenv(DATA_DIRECTORY_VARIABLE, "/the/users/data")
    monkeypatch.setenv("OPENCODE_TEST_OWN_SWITCH", "")  # recorded, so the teardown removes what set_own sets
    monkeypatch.delenv("OPENCODE_TEST_OWN_SWITCH")
    child_environment.set_own(DATA_DIRECTORY_VARIABLE, "/opencode/worktree/data")
    child_environment.set_own("OPENCODE_TEST_OWN_SWITCH", "on")

    result = await bash.call({"command": f"echo ${DATA_DIRECTORY_VARIABLE}; echo ${{OPENCODE_TEST_OWN_SWITCH-unset}}"}, ctx)

    assert result.output.splitlines()[:2] == ["/the/users/data", "unset"]
    assert os.environ[DATA_DIRECTORY_VARIABLE] == "/opencode/worktree/data"  # opencode itself still uses its own


async def test_runs_in_the_workspace_root(bash, ctx, workspace):
    result = await bash.call({"command": "pwd; echo made > made.txt", "description": "where am I"}, ctx)
    assert result.output.splitlines()[0] == str(workspace.resolve())
    assert (workspace / "made.txt").read_text() == "made\n"
    assert result.title == "where am I"


async def test_standard_input_is_closed_so_reading_it_ends_at_once(bash, ctx):
    result = await bash.call({"command": "cat; read line; echo read:$?"}, ctx)
    assert "read:1" in result.output
    assert result.metadata["exit_code"] == 0


async def test_no_output_is_said_plainly(bash, ctx):
    result = await bash.call({"command": "true"}, ctx)
    assert result.output == "(no output)\n\nExit code: 0"


async def test_a_shell_killed_by_a_signal_says_which(bash, ctx):
    result = await bash.call({"command": "kill -9 $$"}, ctx)
    assert result.metadata["exit_code"] == -9
    assert "Killed by signal SIGKILL" in result.output


async def test_the_configured_shell_and_its_arguments_are_used(bash, make_runtime, workspace):
    script = workspace / "fake-shell"
    script.write_text('#!/bin/sh\necho "args: $*"\n')
    script.chmod(0o755)
    runtime = make_runtime(config={"shell": {"path": str(script), "args": ["-l"]}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    result = await bash.call({"command": "echo hi"}, ctx)
    first = result.output.splitlines()[0]
    assert first.startswith("args: -l /") and first.endswith(".sh")  # the command's file, removed since
    assert not Path(first.split()[-1]).exists()


async def test_a_shell_that_cannot_start_is_a_tool_error(bash, make_runtime):
    runtime = make_runtime(config={"shell": {"path": "/no/such/shell"}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(ToolError, match=r"could not start the shell /no/such/shell.*shell\.path"):
        await bash.call({"command": "echo hi"}, ctx)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"command": "   "}, "command is empty"),
        ({"command": ""}, "command"),
        ({}, "command is required"),
        ({"command": "ls", "timeout": 0}, "timeout"),
        ({"command": "ls", "timeout": "soon"}, "timeout"),
        ('{"command": "echo \\ud800"}', "command contains an unpaired surrogate"),
        ({"command": "echo a\0b"}, "NUL character"),
    ],
)
async def test_bad_arguments_are_refused(bash, ctx, args, message):
    with pytest.raises(ToolError, match=message):
        await bash.call(args, ctx)


# --- timeout, cancel, background -----------------------------------------------------------


async def test_timeout_kills_the_whole_process_group_and_keeps_the_output(bash, ctx, workspace):
    command = "echo before; echo $$ > shell.pid; sleep 600 & echo $! > child.pid; wait"
    async with asyncio.timeout(60):  # a guard against hanging if the kill misses, not a speed check
        result = await bash.call({"command": command, "timeout": 1000}, ctx)
    assert result.metadata["timed_out"] is True
    assert result.metadata["exit_code"] is None
    assert result.output.startswith("before\n")
    assert "Timed out after 1000 ms" in result.output
    child = int((workspace / "child.pid").read_text())
    group = int((workspace / "shell.pid").read_text())
    await eventually(lambda: not is_running(child))
    await eventually(lambda: live_members(group) == [])


async def test_a_timeout_above_the_maximum_is_lowered_to_it(bash, make_runtime):
    runtime = make_runtime(config={"tools": {"bash": {"maxTimeoutMs": 300}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    result = await bash.call({"command": "sleep 30", "timeout": 10_000_000}, ctx)
    assert result.metadata["timeout_ms"] == 300
    assert result.metadata["timed_out"] is True


async def test_the_default_timeout_comes_from_the_config(bash, make_runtime):
    runtime = make_runtime(config={"tools": {"bash": {"defaultTimeoutMs": 300}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    result = await bash.call({"command": "sleep 30"}, ctx)
    assert (result.metadata["timeout_ms"], result.metadata["timed_out"]) == (300, True)


async def test_cancelling_the_call_kills_the_whole_process_group(bash, ctx, workspace):
    command = "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; wait"
    task = asyncio.create_task(bash.call({"command": command}, ctx))
    child_file, shell_file = workspace / "child.pid", workspace / "shell.pid"
    await eventually(lambda: child_file.exists() and child_file.read_text().strip() != "")
    group, child = int(shell_file.read_text()), int(child_file.read_text())
    assert is_running(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await eventually(lambda: live_members(group) == [])
    assert not is_running(child)


@pytest.mark.usefixtures("interruptible")
@pytest.mark.parametrize("mechanism", ["off", "landlock"])
@pytest.mark.parametrize(("stop", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
async def test_interrupting_opencode_tool_kills_grandchildren_and_exits_quietly(workspace, tmp_path, stop, exit_code, mechanism):
    """^C or SIGTERM on `opencode tool bash` (a real process): the shell, its child and the
    child's own child die, and nothing but the interruption is reported; also for a
    command the Landlock fork server started (not bwrap: `$$` inside its own process ids
    is no pid of this machine)."""
    if mechanism == "landlock":
        skip_unless_available("landlock")
    (workspace / "run").mkdir()  # Landlock makes no new entry at the root, which holds carve-outs
    command = 'echo $$ > run/shell.pid; bash -c "sleep 300 & echo \\$! > run/grandchild.pid; wait" & wait'
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")} | {"HOME": str(tmp_path)}
    env["OPENCODE_SANDBOX__MECHANISM"] = mechanism
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "tool", "bash", "-", "--yes", "-C", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )  # fmt: skip
    process.stdin.write(json.dumps({"command": command}))
    process.stdin.close()
    grandchild_file = workspace / "run/grandchild.pid"
    try:
        await eventually(lambda: grandchild_file.exists() and grandchild_file.read_text().strip() != "")
        group, grandchild = int((workspace / "run/shell.pid").read_text()), int(grandchild_file.read_text())
        process.send_signal(stop)
        stderr = await asyncio.to_thread(process.stderr.read)
        assert await asyncio.to_thread(process.wait, 30) == exit_code
    finally:
        process.kill()
    await eventually(lambda: live_members(group) == [])
    assert not is_running(grandchild)
    assert "is closed" not in stderr and "Traceback" not in stderr, stderr


async def test_a_background_process_holding_the_output_does_not_hold_the_call(bash, ctx):
    result = await bash.call({"command": "sleep 30 & echo $!", "timeout": 20_000}, ctx)
    child = int(result.output.splitlines()[0])
    try:
        assert result.metadata["timed_out"] is False
        assert result.metadata["exit_code"] == 0
        assert "a background process still holds the output" in result.output
    finally:
        os.kill(child, signal.SIGKILL)


# --- output cap ------------------------------------------------------------------------


async def test_long_output_keeps_the_head_and_the_tail(bash, ctx):
    command = (
        "head -c 20000 /dev/zero | tr '\\0' a; head -c 30000 /dev/zero | tr '\\0' m; "
        "head -c 20000 /dev/zero | tr '\\0' z"
    )
    result = await bash.call({"command": command}, ctx)
    head, note, tail = result.output.split("\n\n")[:3]
    assert head == "a" * 15_000
    assert note == "... 40000 characters omitted ..."
    assert tail == "z" * 15_000
    assert (result.metadata["truncated"], result.metadata["omitted_chars"]) == (True, 40_000)


def test_capture_counts_characters_split_across_chunks():
    capture = OutputCapture(limit=4)
    data = "é€xyz✓".encode()
    for i in range(len(data)):
        capture.feed(data[i : i + 1])
    capture.feed(b"", final=True)
    assert capture.text() == "é€\n\n... 2 characters omitted ...\n\nz✓"
    assert capture.omitted == 2


def test_capture_below_the_limit_is_whole():
    capture = OutputCapture(limit=100)
    capture.feed(b"short\n", final=True)
    assert (capture.text(), capture.omitted) == ("short\n", 0)


# --- banned commands -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "curl http://example.com",
        "echo x | curl -d @- http://example.com",
        "touch ran.txt && sudo wget q",
        "bash -c 'nc -l 9'",
        "touch ran.txt; echo `echo \\`curl -s x\\``",
    ],
)
async def test_banned_commands_are_refused_before_any_question(bash, make_runtime, permission_answers, workspace, command):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, ALLOW_ONCE)
    with pytest.raises(PermissionDeniedError, match=r"is banned \(tools\.bash\.bannedCommands\).*\.opencode\.json"):
        await bash.call({"command": command}, ctx)
    assert answers.requests == []
    assert not (workspace / "ran.txt").exists()


async def test_the_banned_list_comes_from_the_config(bash, make_runtime):
    runtime = make_runtime(config={"tools": {"bash": {"bannedCommands": ["whoami"]}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(PermissionDeniedError, match="whoami is banned"):
        await bash.call({"command": "echo $(FOO=1 env whoami)"}, ctx)
    result = await bash.call({"command": "echo curl is allowed here"}, ctx)
    assert result.metadata["exit_code"] == 0


# --- permission: every part judged ---------------------------------------------------------


async def test_a_compound_of_allowed_parts_runs_without_asking(bash, make_runtime, permission_answers, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    runtime, ctx = interactive(make_runtime, COMPOUND_RULES)
    answers = permission_answers(runtime, DENY)
    result = await bash.call({"command": "git status && ls -la"}, ctx)
    assert answers.requests == []
    assert result.metadata["exit_code"] == 0
    assert "On branch" in result.output
    assert any(line.startswith("total ") for line in result.output.splitlines())  # ls -la ran too


async def test_a_denied_part_refuses_the_whole_command_and_names_it(bash, make_runtime, permission_answers, workspace):
    (workspace / "x").mkdir()
    runtime, ctx = interactive(make_runtime, COMPOUND_RULES)
    answers = permission_answers(runtime, ALLOW_ONCE)
    with pytest.raises(PermissionDeniedError, match=r'forbid "rm -rf x" \(global rule "rm \*"\)'):
        await bash.call({"command": "git status; rm -rf x"}, ctx)
    assert (workspace / "x").is_dir()
    assert answers.requests == []


async def test_a_part_in_a_substitution_that_is_not_allowed_asks_once(bash, make_runtime, permission_answers):
    runtime, ctx = interactive(make_runtime, COMPOUND_RULES)
    answers = permission_answers(runtime, ALLOW_ONCE)
    result = await bash.call({"command": "ls $(whoami)", "description": "list"}, ctx)
    assert len(answers.requests) == 1
    request = answers.requests[0]
    assert (request.tool, request.subject, request.title) == ("bash", "ls $(whoami)", "list")
    assert (request.preview.kind, request.preview.text) == ("command", "ls $(whoami)")
    assert "Exit code" in result.output


async def test_an_unparsable_command_asks(bash, make_runtime, permission_answers, workspace):
    runtime, ctx = interactive(make_runtime, {"permission": {"rules": {"bash": {"echo *": "allow"}}}})
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": 'echo "unbalanced > out.txt'}, ctx)
    assert [r.subject for r in answers.requests] == ['echo "unbalanced > out.txt']
    assert not (workspace / "out.txt").exists()


async def test_a_rule_matching_the_whole_string_does_not_skip_the_question(bash, make_runtime, permission_answers, workspace):
    runtime, ctx = interactive(make_runtime, {"permission": {"rules": {"bash": {"git *": "allow"}}}})
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError):
        await bash.call({"command": "git status; touch pwned"}, ctx)
    assert len(answers.requests) == 1
    assert not (workspace / "pwned").exists()


@pytest.mark.parametrize("command", ["echo `echo \\`touch pwned\\``", "echo `id -u` `touch pwned`"])
async def test_backquotes_the_grammar_misreads_are_asked_about(bash, make_runtime, permission_answers, workspace, command):
    rules = {"permission": {"rules": {"bash": {"echo *": "allow", "id *": "allow"}}}}
    runtime, ctx = interactive(make_runtime, rules)
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError):
        await bash.call({"command": command}, ctx)
    assert len(answers.requests) == 1
    assert not (workspace / "pwned").exists()


async def test_headless_runs_refuse_what_would_be_asked(bash, make_runtime, workspace):
    runtime = make_runtime(policy="headless", config=COMPOUND_RULES)
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(PermissionDeniedError, match="needs approval: run with --yes"):
        await bash.call({"command": "ls $(whoami) > seen.txt"}, ctx)
    assert not (workspace / "seen.txt").exists()
    result = await bash.call({"command": "ls -la"}, ctx)
    assert result.metadata["exit_code"] == 0


async def test_a_session_answer_for_the_whole_command_is_remembered(bash, make_runtime, permission_answers):
    runtime, ctx = interactive(make_runtime, COMPOUND_RULES)
    answers = permission_answers(runtime, PermissionReply("allow_session"), DENY)
    await bash.call({"command": "whoami; ls -la"}, ctx)
    await bash.call({"command": "whoami; ls -la"}, ctx)
    assert len(answers.requests) == 1


async def test_a_comment_alone_is_asked_about_not_allowed(bash, make_runtime, permission_answers):
    runtime, ctx = interactive(make_runtime, {"permission": {"rules": {"bash": {"ls *": "allow"}}}})
    answers = permission_answers(runtime, ALLOW_ONCE)
    await bash.call({"command": "# nothing"}, ctx)
    assert len(answers.requests) == 1


# --- cases from OpenCode's/Crush's suites ----------------------------------------------
# OpenCode's bash permission and truncation tests and Crush's wrapper/chaining tests, run
# end to end with our own data.

ALLOW_ALL_BUT_RM = {"permission": {"rules": {"bash": {"*": "allow", "rm *": "deny"}}}}


@pytest.mark.parametrize(
    "command",
    [
        "nohup rm -rf keep",
        "timeout 5 rm -rf keep",
        "sudo -n rm -rf keep",
        "env -S 'rm -rf keep'",
        "sh -c 'rm -rf keep'",
        "eval 'rm -rf keep'",
        "trap 'rm -rf keep' EXIT",
        "find . -name keep -exec rm -rf {} +",
        "echo keep | xargs rm -rf",
    ],
)
async def test_a_denied_command_behind_a_wrapper_is_refused(bash, make_runtime, permission_answers, workspace, command):
    (workspace / "keep").mkdir()
    runtime, ctx = interactive(make_runtime, ALLOW_ALL_BUT_RM)
    answers = permission_answers(runtime, ALLOW_ONCE)
    with pytest.raises(PermissionDeniedError, match=r'forbid "rm .*" \(global rule "rm \*"\)'):
        await bash.call({"command": command}, ctx)
    assert (workspace / "keep").is_dir()
    assert answers.requests == []


async def test_a_deny_written_with_arguments_stops_the_bare_command(bash, make_runtime, workspace):
    runtime = make_runtime(policy="headless-yes", config={"permission": {"rules": {"bash": {"git init *": "deny"}}}})
    ctx = runtime.context(runtime.store.sessions.create().id)
    with pytest.raises(PermissionDeniedError, match='forbid "git init"'):
        await bash.call({"command": "git init"}, ctx)
    assert not (workspace / ".git").exists()


async def test_a_program_named_by_a_variable_is_asked_about_even_when_all_is_allowed(
    bash, make_runtime, permission_answers, workspace
):
    runtime, ctx = interactive(make_runtime, ALLOW_ALL_BUT_RM)
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": "X=touch; $X made"}, ctx)
    assert [r.subject for r in answers.requests] == ["X=touch; $X made"]
    assert not (workspace / "made").exists()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, with a file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("s3cret\n")
    return folder


def read_rules(external: dict | None = None) -> dict:
    rules = {"bash": {"cat *": "allow", "ls *": "allow", "cd *": "allow", "echo *": "allow"}}
    return {"permission": {"rules": rules | ({"external_directory": external} if external else {})}}


async def test_a_file_outside_the_workspace_is_asked_about_though_the_command_is_allowed(
    bash, make_runtime, permission_answers, outside
):
    """OpenCode asks `external_directory` for `cat /outside/file`; so do we, in the one
    question about the command."""
    runtime, ctx = interactive(make_runtime, read_rules())
    answers = permission_answers(runtime, DENY)
    command = f"cat {outside}/secret.txt"
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": command}, ctx)
    assert [r.subject for r in answers.requests] == [command]


@pytest.mark.parametrize("template", ["cat {out}/secret.txt", "ls {out}", "cd {out} && cat secret.txt", "echo x > {out}/new"])
async def test_an_external_directory_deny_refuses_the_command(bash, make_runtime, permission_answers, outside, template):
    runtime, ctx = interactive(make_runtime, read_rules({f"{outside}/*": "deny"}))
    answers = permission_answers(runtime, ALLOW_ONCE)
    with pytest.raises(PermissionDeniedError, match=rf"forbid touching {outside}.*external_directory"):
        await bash.call({"command": template.format(out=outside)}, ctx)
    assert answers.requests == []
    assert not (outside / "new").exists()


async def test_an_external_directory_allow_lets_the_command_run(bash, make_runtime, permission_answers, outside):
    runtime, ctx = interactive(make_runtime, read_rules({f"{outside}/*": "allow"}))
    answers = permission_answers(runtime, DENY)
    result = await bash.call({"command": f"cat {outside}/secret.txt"}, ctx)
    assert result.output.startswith("s3cret\n")
    assert answers.requests == []


async def test_a_cd_out_of_the_workspace_is_asked_about_even_when_allowed(bash, make_runtime, permission_answers, outside):
    """After `cd` elsewhere, relative paths cannot be judged from the workspace root."""
    runtime, ctx = interactive(make_runtime, read_rules({f"{outside}/*": "allow"}))
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError):
        await bash.call({"command": f"cd {outside} && cat secret.txt"}, ctx)
    assert len(answers.requests) == 1


@pytest.mark.parametrize(
    "command", ["cat $HOME/.opencode-test-none", 'ls "$HOME"', "echo x > $OPENCODE_TEST_UNSET_VARIABLE"]
)
async def test_a_path_known_only_at_run_time_is_asked_about(bash, make_runtime, permission_answers, command):
    """`$HOME/...` may lead anywhere, outside the workspace too: the command is asked about
    though `cat *`, `ls *` and `echo *` are allowed."""
    runtime, ctx = interactive(make_runtime, read_rules())
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": command}, ctx)
    assert [r.subject for r in answers.requests] == [command]


@pytest.mark.parametrize(
    "command", ["cat notes.txt > copy.txt", "cd sub && ls", "ls -la 2>/dev/null", "cat notes.txt /dev/null"]
)
async def test_paths_inside_the_workspace_need_no_question(bash, make_runtime, permission_answers, workspace, command):
    (workspace / "sub").mkdir()
    (workspace / "notes.txt").write_text("n\n")
    runtime, ctx = interactive(make_runtime, read_rules())
    answers = permission_answers(runtime, DENY)
    result = await bash.call({"command": command}, ctx)
    assert (result.metadata["exit_code"], answers.requests) == (0, [])


async def test_a_symlink_leading_outside_counts_as_outside(bash, make_runtime, permission_answers, workspace, outside):
    (workspace / "link").symlink_to(outside)
    runtime, ctx = interactive(make_runtime, read_rules({f"{outside}/*": "deny"}))
    permission_answers(runtime, ALLOW_ONCE)
    with pytest.raises(PermissionDeniedError, match=f"forbid touching {outside}/secret.txt"):
        await bash.call({"command": "cat link/secret.txt"}, ctx)


async def test_a_chained_command_asks_once_and_a_refusal_runs_none_of_it(bash, make_runtime, permission_answers, workspace):
    """Crush: `ls && rm -rf /` asks, and when the user says no nothing runs."""
    (workspace / "x").mkdir()
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, DENY)
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": "ls && rm -rf x"}, ctx)
    assert len(answers.requests) == 1
    assert (workspace / "x").is_dir()


async def test_many_lines_are_cut_keeping_the_first_and_the_last(bash, ctx):
    """OpenCode cuts `seq` output past its line limit; we cut by characters, head and tail kept."""
    result = await bash.call({"command": "seq 1 20000"}, ctx)
    lines = result.output.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-3:] == ["20000", "", "Exit code: 0"]
    assert result.metadata["truncated"] is True
    assert result.metadata["omitted_chars"] == len("\n".join(map(str, range(1, 20001)))) + 1 - 30_000


async def test_wide_characters_are_cut_on_character_boundaries(bash, ctx):
    result = await bash.call({"command": "for i in $(seq 1 10000); do printf '漢字かな'; done"}, ctx)
    assert result.metadata["omitted_chars"] == 40_000 - 30_000  # characters, not bytes (120,000)
    assert result.output.startswith("漢字かな" * 3)
    assert "\ufffd" not in result.output


@pytest.mark.parametrize("template", ["grep -rn s3cret {out}", "sed -i s/s3cret/x/ {out}/secret.txt", "find {out} -delete"])
async def test_file_reading_and_writing_programs_are_judged_on_their_outside_paths(
    bash, make_runtime, permission_answers, outside, template
):
    runtime, ctx = interactive(
        make_runtime, {"permission": {"rules": {"bash": {"grep *": "allow", "sed *": "allow", "find *": "allow"}}}}
    )
    answers = permission_answers(runtime, DENY)
    command = template.format(out=outside)
    with pytest.raises(PermissionDeniedError, match="The user denied"):
        await bash.call({"command": command}, ctx)
    assert [r.subject for r in answers.requests] == [command]
    assert (outside / "secret.txt").read_text() == "s3cret\n"
