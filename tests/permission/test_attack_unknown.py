"""Programs and scripts a command runs that its words do not show: a shell fed a script
on its input or from a file, `source`, a program run by its path. Where the script can
be read (a here-string, a here-document, `echo ... | sh`, a file on disk, a link to a
system program, a `#!` line), its lines are judged as parts of the command, so a deny
holds; where it cannot (a name computed at run time, a file the command itself writes),
only a person may approve it while a deny rule could apply: --yes does not run it. The
bash tool runs real shells here: the files on disk show what ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import Config
from app.permission.shell.judge import explain_command
from tests.permission.attack import ATTACK_RULES, REPO, attack_config, call, opencode_tool, plant, snapshot

SCRIPTS = {
    "rm.sh": "echo cleaning\nrm main.go\n",
    "shebang.sh": "#!/bin/sh\nrm main.go\n",
    "plain": "rm main.go\n",
    "env-split": "#!/usr/bin/env -S rm -f main.go\n",
    "writes.sh": "echo pwned > secrets/key.txt\n",
}


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    plant(workspace, {"x": "keep\n", "secrets/key.txt": "s3cr3t\n", "main.go": "package main\n", **SCRIPTS})
    for name in ("shebang.sh", "plain", "env-split"):
        (workspace / name).chmod(0o755)
    (workspace / "rmlink").symlink_to(shutil.which("rm") or "/bin/rm")
    return make_runtime("headless-yes", attack_config())


READ_FROM_THE_COMMAND = {
    "a here-string to bash": "bash <<< 'rm main.go'",
    "a here-string to sh -s": "sh -s <<< 'rm main.go'",
    "a here-document": "bash <<EOF\nrm main.go\nEOF",
    "a quoted here-document": "sh <<'EOF'\nrm main.go\nEOF",
    "a here-document to a wrapped shell": "nohup bash <<EOF\nrm main.go\nEOF",
    "echo into sh": "echo 'rm main.go' | sh",
    "echo -e into bash": "echo -e 'true\\nrm main.go' | bash",
    "printf into bash": "printf '%s\\n' 'rm main.go' | bash",
    "source of the input": "source /dev/stdin <<< 'rm main.go'",
}
READ_FROM_DISK = {
    "bash FILE": "bash rm.sh",
    "sh < FILE": "sh < rm.sh",
    "source FILE": "source rm.sh",
    ". ./FILE": ". ./rm.sh",
    "a script after cd": "mkdir -p d && cd d && bash ../rm.sh",
    "a script run by path": "./shebang.sh",
    "a text file run by path": "./plain",
    "a #! line holding the command": "./env-split",
    "a link to rm": "./rmlink main.go",
    "a link to rm found through PATH": "PATH=.:$PATH rmlink main.go",
    "a script in a shell's script": "bash -c 'bash rm.sh'",
}


@pytest.mark.parametrize("command", READ_FROM_THE_COMMAND.values(), ids=READ_FROM_THE_COMMAND.keys())
async def test_a_script_fed_to_a_shell_in_the_command_is_judged(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: the permission rules forbid"), output
    assert 'global rule "rm *"' in output and "nothing was run" in output
    assert snapshot(workspace) == before


@pytest.mark.parametrize("command", READ_FROM_DISK.values(), ids=READ_FROM_DISK.keys())
async def test_a_script_or_program_run_from_a_file_is_judged_by_what_it_runs(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: the permission rules forbid"), output
    assert 'global rule "rm *"' in output and "nothing was run" in output
    assert snapshot(workspace) == before and not (workspace / "d").exists()


async def test_a_write_in_a_script_meets_the_edit_rules(runtime, workspace):
    for command in ["bash writes.sh", "bash <<< 'echo pwned > secrets/key.txt'"]:
        output = await call(runtime, "bash", {"command": command})
        assert 'write secrets/key.txt is forbidden (edit rule "secrets/*")' in output, output
    assert (workspace / "secrets/key.txt").read_text() == "s3cr3t\n"


UNKNOWN = {
    "a substitution as the program": "$(echo rm) main.go",
    "backquotes as the program": "`echo rm` main.go",
    "a variable as the program": "x=rm; $x main.go",
    "a braced variable as the program": "x=rm; ${x} main.go",
    "eval of a variable": "x='rm main.go'; eval \"$x\"",
    "a copy of rm run by path": "cp /bin/rm ./x; ./x main.go",
    "a link made and run": "ln -s /bin/rm y; ./y main.go",
    "a copy of rm found through PATH": "cp /bin/rm rmm; PATH=.:$PATH rmm main.go",
    "a script written then sourced": "echo 'rm main.go' > s.sh; . ./s.sh",
    "a script written then run": "printf 'rm main.go' > s.sh; bash s.sh",
    "a script written then run by path": "echo 'rm main.go' > s.sh && chmod +x s.sh && ./s.sh",
    "BASH_ENV naming a script": "echo 'rm main.go' > f; BASH_ENV=f bash -c true",
    "a file fed to sh through cat": "echo 'rm main.go' > f; cat f | sh",
    "a here-document with expansions": "x=rm; sh <<EOF\n$x main.go\nEOF",
    "a script that does not exist yet": "bash later.sh",
    "a write to a variable's path": "f=secrets/key.txt; echo pwned > $f",
    "a write in a loop over the folder": "for f in secrets/*; do echo pwned > $f; done",
    "a write to a computed path": 'echo pwned > "$(pwd)/secrets/key.txt"',
    "a write after a cd to a computed folder": "cd $(echo secrets) && echo pwned > key.txt",
    "a write after cd -": "cd secrets; cd -; cd -; echo pwned > key.txt",
    "a removal of a computed path": "f=main.go; unlink $f",
    "arithmetic on a variable holding a substitution": "y='a[$(rm main.go)]'; (( y ))",
    "xargs handing sh -c its script": "printf 'rm main.go' | xargs -0 sh -c",
    "xargs handing bash a script to run": "echo rm.sh | xargs bash",
    "find -exec with {} inside a shell's script": "find . -name rm.sh -exec sh -c 'sh {}' \\;",
}


@pytest.mark.parametrize("command", UNKNOWN.values(), ids=UNKNOWN.keys())
async def test_what_cannot_be_known_is_not_run_by_yes_while_a_deny_could_apply(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert "only a person can approve this" in output and "--yes does not cover it" in output, output
    assert 'the deny rules under "bash" and "edit" and "delete" forbid' in output
    assert snapshot(workspace) == before


async def test_a_copy_of_rm_made_earlier_is_not_run_by_yes(runtime, workspace):
    """A program outside the system's folders is a binary whose effects cannot be known."""
    (workspace / "x").unlink()
    shutil.copy(shutil.which("rm") or "/bin/rm", workspace / "x")
    output = await call(runtime, "bash", {"command": "./x main.go"})
    assert "it runs ./x, a program outside the system's folders" in output, output
    assert "only a person can approve this" in output and (workspace / "main.go").exists()


async def test_without_a_deny_yes_still_runs_what_cannot_be_known(make_runtime, workspace):
    """The choice where nothing could be forbidden: --yes approves what would be asked."""
    runtime = make_runtime("headless-yes", attack_config({"bash": {"*": "ask"}, "edit": {"*": "allow"}}))
    output = await call(runtime, "bash", {"command": "x=echo; $x hi > out.txt"})
    assert "Exit code: 0" in output, output
    assert (workspace / "out.txt").read_text() == "hi\n"


async def test_a_person_may_still_approve_what_cannot_be_known(make_runtime, permission_answers, workspace):
    from app.permission import PermissionReply

    runtime = make_runtime("interactive", attack_config())
    answers = permission_answers(runtime, PermissionReply("allow_once"))
    output = await call(runtime, "bash", {"command": "x=echo; $x hi > out.txt"})
    assert "Exit code: 0" in output, output
    assert len(answers.requests) == 1 and answers.requests[0].person_only
    assert (workspace / "out.txt").read_text() == "hi\n"


def test_permission_check_says_only_a_person_may_approve(workspace):
    config = Config.model_validate(attack_config())
    line = explain_command(config, workspace, "$(echo rm) main.go", "coder")
    assert line.startswith("ask   (what it runs cannot be known: its program is named by $(echo rm), known only at run time, and it may do what the deny rules")
    assert "only a person may approve it, --yes does not" in line


def test_opencode_tool_and_p_yes_run_no_unknown_program_in_a_real_process(workspace, tmp_path):
    """The attack as a script plays it: `opencode tool bash --yes`, then `opencode -p --yes`
    with a scripted model that writes a script and sources it."""
    plant(workspace)
    (workspace / ".opencode.json").write_text(json.dumps(attack_config(ATTACK_RULES)))
    answer = opencode_tool(workspace, "bash", {"command": "x=rm; $x main.go"})
    assert answer["ok"] is False and "only a person can approve this" in answer["output"], answer
    steps = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo 'rm main.go' > s.sh; . ./s.sh"}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "bash <<< 'rm main.go'"}}]},
        {"text": "done"},
    ]
    script = tmp_path / "attack.json"
    script.write_text(json.dumps({"turns": [{"steps": steps}]}))
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "delete main.go", "--yes", "-f", "json",
         "--model", f"scripted/{script}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    assert (workspace / "main.go").read_text() == "package main\n", done.stdout
    assert not (workspace / "s.sh").exists()


INLINE_CODE = {
    "python -c": "python3 -c 'import os; os.remove(\"main.go\")'",
    "python -Bc": "python3 -Bc 'import os; os.remove(\"main.go\")'",
    "python on its input": "python3 - <<< 'import os; os.remove(\"main.go\")'",
    "python from a here-document": "python3 <<EOF\nimport os\nos.remove('main.go')\nEOF",
    "a python script the command writes": "echo 'import os; os.remove(\"main.go\")' > t.py; python3 t.py",
    "perl -e": "perl -e 'unlink \"main.go\"'",
    "perl -ne": "echo | perl -ne 'unlink \"main.go\"'",
    "node -e": "node -e 'require(\"fs\").unlinkSync(\"main.go\")'",
    "awk's system": "awk 'BEGIN { system(\"rm main.go\") }'",
    "awk printing to sh": "awk 'BEGIN { print \"rm main.go\" | \"sh\" }'",
    "sed's s///e": "echo x | sed 's/x/rm main.go/e'",
    "tclsh on its input": "tclsh <<< 'file delete main.go'",
    "make from its input": "make -f - <<< $'all:\\n\\trm main.go'",
    "a Makefile the command writes": "printf 'all:\\n\\trm main.go\\n' > Makefile; make",
    "gdb's commands": "gdb -batch -ex 'call (int)unlink(\"main.go\")' /bin/true",
    "vim's commands": "vim -es -c 'call delete(\"main.go\")' -c q",
    "python through env in git's pager": "git -c core.pager='env python3 -c \"import os; os.remove(1)\"' log",
    "sqlite3's .shell": "sqlite3 x.db '.shell rm main.go'",
    "sqlite3's .system on its input": "sqlite3 x.db <<< '.system rm main.go'",
    "sqlite3 attaching a file": "sqlite3 x.db \"ATTACH 'secrets/key.txt' AS k; CREATE TABLE k.t(x);\"",
    "ed's ! on its input": "ed -s x <<< $'!rm main.go\\nq'",
    "ex's ! on its input": "ex -s x <<< $'!rm main.go\\nq'",
    "vim -es on its input": "vim -es x <<< $'!rm main.go\\nq'",
}


@pytest.mark.parametrize("command", INLINE_CODE.values(), ids=INLINE_CODE.keys())
async def test_code_in_another_language_is_not_run_by_yes_while_a_deny_could_apply(runtime, workspace, command):
    """`python -c` and the like run code whose effects cannot be known: asked, even under a
    rule allowing every command, and only a person may approve it while a deny could apply."""
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert "only a person can approve this" in output and "--yes does not cover it" in output, output
    assert snapshot(workspace) == before and not (workspace / "t.py").exists()


async def test_inline_code_asks_under_a_rule_allowing_every_command(make_runtime, workspace):
    plant(workspace, {"main.go": "package main\n"})
    runtime = make_runtime("headless", attack_config({"bash": {"*": "allow"}}))
    output = await call(runtime, "bash", {"command": "python3 -c 'open(\"out.txt\", \"w\")'"})
    assert "needs approval" in output and not (workspace / "out.txt").exists(), output
    output = await call(runtime, "bash", {"command": "python3 -c 'print(6 * 7)'"})
    assert "needs approval" in output, output


COMMAND_OPTIONS = {
    "tar --to-command": "tar -cf a.tar x && tar -xf a.tar --to-command='rm main.go'",
    "tar --checkpoint-action": "tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec='rm main.go'",
    "sed's e command": "echo x | sed '1e rm main.go'",
    "gdb's shell": "gdb -batch -ex 'shell rm main.go'",
    "vim's !": "vim -es -c '!rm main.go' -c q",
    "less's !": "less '+!rm main.go' x",
    "man's pager": "man -P 'rm main.go' ls",
    "zip's test command": "zip -q a.zip x -T -TT 'rm main.go'",
    "a wrapper: fakeroot": "fakeroot rm main.go",
    "a wrapper: setpriv": "setpriv --reuid 0 rm main.go",
    "a wrapper: setarch": "setarch x86_64 rm main.go",
    "a wrapper: valgrind": "valgrind -q rm main.go",
    "git grep's pager": "git grep --no-index -O'rm main.go' package",
}


@pytest.mark.parametrize("command", COMMAND_OPTIONS.values(), ids=COMMAND_OPTIONS.keys())
async def test_a_command_line_another_program_runs_is_judged(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: the permission rules forbid"), output
    assert 'global rule "rm *"' in output and snapshot(workspace) == before


def test_awk_and_sed_that_only_read_still_run(make_runtime, workspace):
    """Reading programs are not code of unknown effect: no question under an allow."""
    plant(workspace, {"x": "a b\n"})
    (workspace / ".opencode.json").write_text(json.dumps(attack_config({"bash": {"*": "allow", "rm *": "deny"}})))
    for command in ["awk '{print $2}' x > out1", "awk '$1 > 0 { n++ } END { print n }' x", "sed -n 's/a/b/p' x"]:
        answer = opencode_tool(workspace, "bash", {"command": command})
        assert answer["ok"] is True and "Exit code: 0" in answer["output"], (command, answer)


@pytest.mark.parametrize(
    ("command", "first_line"),
    [
        ("dc -e '!rm main.go'", 'deny  (part "rm main.go": global rule "rm *")'),
        ("at now <<< 'rm main.go'", 'deny  (part "rm main.go": global rule "rm *")'),
        ("git ls-remote 'ext::sh -c rm% main.go'", 'deny  (part "rm main.go": global rule "rm *")'),
        ("busybox ash -c 'rm main.go'", 'deny  (part "rm main.go": global rule "rm *")'),
        ("git send-email --sendmail-cmd='rm main.go' x.patch", 'deny  (part "rm main.go": global rule "rm *")'),
        ("tmux new-session -d 'rm main.go'", "ask   (what it runs cannot be known: tmux runs a shell command"),
        ("screen -dm rm main.go", "ask   (what it runs cannot be known: screen runs a command"),
        ("crontab <<< '* * * * * rm main.go'", "ask   (what it runs cannot be known: crontab schedules commands"),
        ("mysql -e 'system rm main.go'", "ask   (what it runs cannot be known: mysql runs commands that may reach"),
        ("psql -c '\\! rm main.go'", "ask   (what it runs cannot be known: psql runs commands that may reach"),
    ],
)
def test_programs_that_run_commands_are_judged_whether_installed_or_not(workspace, command, first_line):
    """What these programs would run, as `permission check` shows it (not all of them are
    on every machine, and tmux or crontab would outlive the test)."""
    line = explain_command(Config.model_validate(attack_config()), workspace, command, "coder")
    assert line.startswith(first_line), line
    if first_line.startswith("ask"):
        assert "only a person may approve it, --yes does not" in line.splitlines()[0], line


async def test_a_folder_made_before_make_runs_is_no_written_makefile(runtime, workspace):
    """`mkdir -p build && cd build && make` writes the folder, not a Makefile in it: make
    runs as its bash rule says (--yes), not as code the command wrote."""
    output = await call(runtime, "bash", {"command": "mkdir -p build && cd build && make -v"})
    assert "Exit code: 0" in output, output
