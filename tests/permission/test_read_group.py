"""Reads judged as one group: with `{"view": {"secrets/*": "deny"}}` no tool and no
spelling of a bash command reads `secrets/key.txt`, under --yes too; the refusal names the
effect and the rule. The tools, bash and git run for real, in process or as `opencode tool`
and `opencode permission check` subprocesses; each case asserts the secret's text is not
in what came back."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from app.config import Config
from app.permission.events import PermissionRequested
from app.permission.request import PermissionReply
from app.permission.shell.judge import explain_command
from app.runtime import Runtime
from tests.permission.attack import attack_config, call, opencode_tool, permission_check, plant

SECRET = "s3cr3t-text"
# The view rules deny the secret; each tool's own key allows, bash allows `cat` outright and
# anything else on the --yes of the run: deny wins across keys whatever allows.
RULES = {
    "view": {"secrets/*": "deny"},
    "grep": "allow",
    "glob": {"*": "allow"},
    "ls": "allow",
    "diagnostics": "allow",
    "bash": {"cat *": "allow"},
}
DENIED = 'view rule "secrets/*"'


def outside_the_agent(workspace: Path, command: str) -> None:
    """Run ``command`` in the workspace as a person or a script would, not through the agent."""
    subprocess.run(["bash", "-c", command], cwd=workspace, check=True, capture_output=True, timeout=60)


def guarded(workspace: Path) -> None:
    """The secret (committed, then changed), files no rule guards, a git repository, and
    the rules in the workspace's config file (for the subprocesses)."""
    plant(workspace, {"secrets/key.txt": f"{SECRET}\n", "notes.txt": "notes\n", "src/app.py": "print('app')\n"})
    outside_the_agent(
        workspace,
        "git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm first"
        f" && echo {SECRET}-changed >> secrets/key.txt",
    )
    (workspace / ".opencode.json").write_text(json.dumps(attack_config(RULES)))


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    guarded(workspace)
    return make_runtime("headless-yes", attack_config(RULES))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One runtime for the bash spellings, each refused before it runs: nothing changes."""
    workspace = tmp_path_factory.mktemp("reads") / "ws"
    workspace.mkdir()
    guarded(workspace)
    runtime = Runtime.build(workspace, config=Config.model_validate(attack_config(RULES)), policy="headless-yes")
    yield runtime
    runtime.close()


def refused(output: str, path: str = "secrets/key.txt") -> bool:
    return SECRET not in output and output.startswith("ERROR: ") and path in output and DENIED in output


async def test_grep_of_the_tree_leaves_the_denied_file_out(runtime):
    output = await call(runtime, "grep", {"pattern": "s3cr3t|notes"})
    assert SECRET not in output and "key.txt" not in output and "notes.txt" in output, output


async def test_grep_of_the_denied_file_is_refused(runtime):
    output = await call(runtime, "grep", {"pattern": "s3cr3t", "path": "secrets/key.txt"})
    assert refused(output), output


async def test_glob_and_ls_leave_the_denied_file_out(runtime):
    output = await call(runtime, "glob", {"pattern": "secrets/*"})
    assert "key.txt" not in output, output
    output = await call(runtime, "ls", {"path": "secrets"})
    assert "key.txt" not in output, output


async def test_diagnostics_of_the_denied_file_is_refused(runtime):
    assert refused(await call(runtime, "diagnostics", {"path": "secrets/key.txt"}))


async def test_a_patch_does_not_read_the_denied_file(runtime, workspace):
    """A hunk that does not fit would say whether a line is there: refused before it is placed."""
    before = (workspace / "secrets/key.txt").read_bytes()
    patch = f"*** Begin Patch\n*** Update File: secrets/key.txt\n@@\n-{SECRET}\n+x\n*** End Patch"
    output = await call(runtime, "patch", {"patch": patch})
    error = json.loads(output.removeprefix("ERROR: "))["error"]
    assert SECRET not in output and DENIED in error and "secrets/key.txt" in error, output
    assert (workspace / "secrets/key.txt").read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        "cat secrets/key.txt",
        "/bin/cat secrets/key.txt",
        "\\cat secrets/key.txt",
        "'cat' secrets/key.txt",
        "c''at secrets/key.txt",
        'cat "secr"ets/key.txt',
        "cat $'secrets/key.txt'",
        "cat secrets/*",
        "cat sec*/key.txt",
        "cat */*",
        "cat secrets/{key,none}.txt",
        "cat < secrets/key.txt",
        "cat 0<secrets/key.txt",
        "cd secrets && cat key.txt",
        "cat /proc/self/cwd/secrets/key.txt",
        "cd secrets; cat /proc/self/cwd/key.txt",
        "head -n 5 secrets/key.txt",
        "tail secrets/key.txt",
        "more secrets/key.txt",
        "grep -r s3cr3t .",
        "grep -r s3cr3t",
        "grep s3cr3t secrets/key.txt",
        "egrep -e s3cr3t secrets/key.txt",
        "sed -n p secrets/key.txt",
        "awk '{print}' secrets/key.txt",
        "sort secrets/key.txt",
        "cut -c1-50 secrets/key.txt",
        "diff secrets/key.txt notes.txt",
        "od -c secrets/key.txt",
        "xxd secrets/key.txt",
        "base64 secrets/key.txt",
        "nl secrets/key.txt",
        "tac secrets/key.txt",
        "rev secrets/key.txt",
        "paste secrets/key.txt",
        "dd if=secrets/key.txt",
        "cp secrets/key.txt copy.txt && cat copy.txt",
        "ln secrets/key.txt hard && cat hard",
        "ln -s secrets/key.txt soft && cat soft",
        "tar -cf - secrets | tar -xOf -",
        "source secrets/key.txt",
        ". ./secrets/key.txt",
        "bash secrets/key.txt",
        "python3 secrets/key.txt",
        "env cat secrets/key.txt",
        "nice cat secrets/key.txt",
        "timeout 5 cat secrets/key.txt",
        "bash -c 'cat secrets/key.txt'",
        "sh -c \"/bin/cat secrets/key.txt\"",
        "echo secrets/key.txt | xargs cat",
        "find secrets -exec cat {} +",
        "echo \"$(< secrets/key.txt)\"",
        "while read -r line; do echo \"$line\"; done < secrets/key.txt",
        "grep -f secrets/key.txt notes.txt",
        "xargs -a secrets/key.txt echo",
        "cp -r secrets copy && cat copy/key.txt",
        "rsync -a secrets/ copy/",
        "zip -r out.zip secrets",
        "jq -R . secrets/key.txt",
        "python3 -m base64 secrets/key.txt",
        "openssl base64 -in secrets/key.txt",
        "bash -c 'cat \"$1\"' _ secrets/key.txt",
        "git show HEAD:secrets/key.txt",
        "git cat-file -p HEAD:secrets/key.txt",
        "git diff -- secrets/",
        "git diff",
        "git log -p",
        "git grep s3cr3t",
    ],
)
async def test_no_bash_spelling_reads_the_denied_file(shared, command):
    output = await call(shared, "bash", {"command": command})
    assert refused(output), output
    assert output.startswith("ERROR: bash: read secrets/key.txt is forbidden"), output


async def test_a_path_known_only_at_run_time_needs_a_person(runtime):
    output = await call(runtime, "bash", {"command": "F=secrets/key.txt; cat $F"})
    assert SECRET not in output and "only a person can approve this" in output and '"view"' in output, output


async def test_inline_code_needs_a_person_while_a_read_is_denied(runtime):
    output = await call(runtime, "bash", {"command": "python3 -c 'print(open(\"secrets/key.txt\").read())'"})
    assert SECRET not in output and "only a person can approve this" in output, output


@pytest.mark.parametrize("made", ["ln secrets/key.txt hard", "ln -s secrets/key.txt hard"])
async def test_another_name_made_outside_the_agent_is_denied_too(runtime, workspace, made):
    outside_the_agent(workspace, made)
    output = await call(runtime, "bash", {"command": "cat hard"})
    assert SECRET not in output and "secrets/key.txt" in output and DENIED in output, output


async def test_what_no_rule_denies_is_read(runtime):
    output = await call(runtime, "bash", {"command": "cat notes.txt && grep -r app src && git diff -- notes.txt"})
    assert "notes" in output and "print('app')" in output and "Exit code: 0" in output, output


def test_opencode_tool_refuses_the_read_under_yes(runtime, workspace):
    for tool, arguments in [
        ("bash", {"command": "cat secrets/key.txt"}),
        ("grep", {"pattern": "s3cr3t", "path": "secrets/key.txt"}),
    ]:
        answer = opencode_tool(workspace, tool, arguments)
        assert SECRET not in str(answer) and DENIED in str(answer), answer


def test_permission_check_prints_the_read_and_its_rule(runtime, workspace):
    lines = permission_check(workspace, "bash", "cat secrets/key.txt").splitlines()
    assert lines[0] == f"deny  (read secrets/key.txt: {DENIED})"
    assert f"  read secrets/key.txt: deny ({DENIED})" in lines
    lines = permission_check(workspace, "grep", "secrets/k").splitlines()
    assert lines == [f"deny  ({DENIED})", f"  read secrets/k: deny ({DENIED})"]


def test_proc_self_cwd_is_where_the_command_runs(workspace):
    """The judge's own process may run elsewhere (`opencode -C DIR`): `/proc/self/cwd` is
    judged as the folder the command runs in, for a delete as for a read."""
    plant(workspace, {"main.go": "package main\n"})
    config = Config.model_validate(attack_config({"delete": {"*.go": "deny"}, "bash": {"*": "allow"}}))
    first = explain_command(config, workspace, "rm /proc/self/cwd/main.go", "coder").splitlines()[0]
    assert first == 'deny  (delete main.go: delete rule "*.go")'


async def test_a_view_rule_s_question_for_the_session_holds_for_every_reading_tool(make_runtime, workspace):
    """A `view` rule that asks asks as a `view` question, whichever tool reads; answered
    for the session, grep, glob and view then read that file without a question."""
    plant(workspace, {"docs/a.md": "hello docs\n"})
    runtime = make_runtime("interactive", attack_config({"view": {"docs/*": "ask"}}))
    questions = runtime.bus.subscribe(PermissionRequested)
    ctx = runtime.context(runtime.store.sessions.create().id)
    grep = asyncio.create_task(runtime.tools["grep"].call({"pattern": "hello", "path": "docs/a.md"}, ctx))
    asked = await asyncio.wait_for(questions.get(), timeout=60)
    assert isinstance(asked, PermissionRequested)
    assert (asked.request.tool, asked.request.subject, asked.request.title) == ("view", "docs/a.md", "grep docs/a.md")
    runtime.permissions.reply(asked.request_id, PermissionReply("allow_session"))
    assert "hello docs" in (await asyncio.wait_for(grep, timeout=60)).output
    for tool, arguments in [("view", {"filePath": "docs/a.md"}), ("grep", {"pattern": "docs", "path": "docs/a.md"})]:
        assert "hello docs" in (await asyncio.wait_for(runtime.tools[tool].call(arguments, ctx), timeout=60)).output
    assert questions.drain() == []
