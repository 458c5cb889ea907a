"""Programs by what runs: with `rm *` denied, no spelling of rm runs, under --yes too, and
files written or deleted through other programs meet the edit and delete rules. The bash
tool runs real shells here: the files on disk show what ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.config import Config
from app.permission.shell.judge import explain_command
from tests.permission.attack import ATTACK_RULES, GUARDED, attack_config, call, opencode_tool, plant, snapshot

RM_SPELLINGS = [
    "\\rm x", "'rm' x", '"rm" x', "r''m x", "r\\m x", "rm\tx", "rm \t x", "/bin/rm x", "/usr/bin/rm x",
    "/usr/bin/../bin/rm x", "env -i /bin/rm x", "env -u HOME rm x", "bash -c '/bin/rm x'", "sh -c \"r''m x\"",
    "command -p rm x", "exec rm x", "nice -n 1 /bin/rm x", "busybox rm x", "$'\\x72m' x", "r$'\\155' x",
    "{rm,x}", "/bin/r? x", "/???/rm x", "echo x | xargs rm", "find . -name x -exec /bin/rm {} +",
    'f() { /bin/rm "$@"; }; f x', "shopt -s expand_aliases; alias r=rm; r x",
    "shopt -s expand_aliases\nalias r='/bin/rm -f'\nr x", "git -c alias.x='!rm x' x",
    "r\\\nm x", "printf -v 'a[$(rm x)]' %s 1", "read 'a[$(rm x)]' <<< 1", "let 'a[$(rm x)]=1'",
    "[ -v 'a[$(rm x)]' ]", "test -v 'a[$(rm x)]'", "declare -a 'y=($(rm x))'", "mapfile -C 'rm x' -c 1 y <<< 1",
    "PS4='$(rm x)'; set -x; true",
]  # fmt: skip


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    plant(workspace, {"x": "keep\n", **{"secrets/key.txt": "s3cr3t\n", "main.go": "package main\n"}})
    return make_runtime("headless-yes", attack_config())


@pytest.mark.parametrize("command", RM_SPELLINGS)
async def test_no_spelling_of_a_denied_program_runs(runtime, workspace, command):
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: the permission rules forbid"), output
    assert 'global rule "rm *"' in output and "nothing was run" in output
    assert (workspace / "x").read_text() == "keep\n"


WRITES = {
    "a redirection": "echo pwned > secrets/key.txt",
    "an appending redirection": "echo pwned >> secrets/key.txt",
    "a redirection alone": ": > secrets/key.txt",
    "a redirection spelled with dots": "echo pwned > ./secrets/../secrets//key.txt",
    "a redirection after cd": "cd secrets && echo pwned > key.txt",
    "a redirection after cd in a subshell": "(cd secrets; echo pwned > key.txt)",
    "a redirection through a glob": "echo pwned > secrets/k*.txt",
    "tee": "echo pwned | tee secrets/key.txt",
    "tee -a": "echo pwned | tee -a secrets/key.txt",
    "dd of=": "echo pwned | dd of=secrets/key.txt",
    "cp over it": "cp x secrets/key.txt",
    "cp into its folder": "cp x secrets/",
    "cp -t": "cp -t secrets x",
    "install": "install x secrets/key.txt",
    "sed -i": "sed -i s/s3cr3t/pwned/ secrets/key.txt",
    "sed -i through find -exec": "find secrets -type f -exec sed -i s/s3cr3t/pwned/ {} +",
    "truncate": "truncate -s 0 secrets/key.txt",
    "a symlink then a write through it": "ln -s secrets/key.txt l && echo pwned > l",
    "a hard link then a write through it": "ln secrets/key.txt l && echo pwned > l",
    "mv its folder away": "mv secrets public",
    "a write by a wrapped shell": "sh -c 'echo pwned > secrets/key.txt'",
    "a symlinked folder then a write through it": "ln -s secrets s && echo pwned > s/key.txt",
    "a redirection to $PWD": 'echo pwned > "$PWD/secrets/key.txt"',
    "a redirection to ${PWD} after cd": "cd secrets && echo pwned > ${PWD}/key.txt",
    "git config --file into it": "git config --file secrets/key.txt a.b c",
    "a folder's contents copied over it": "mkdir -p d && cp -a d/. secrets",
    "rsync of a folder's contents": "mkdir -p d && rsync -a d/ secrets",
    "an archive made over it": "tar -cf secrets/key.txt x",
    "perl -pi": "perl -pi -e 's/s3cr3t/pwned/' secrets/key.txt",
    "git log --output": "git log --output=secrets/key.txt",
    "history -w": "history -w secrets/key.txt",
    "uniq's output": "uniq x secrets/key.txt",
    "split's pieces": "split -b 1 x secrets/key.txt",
    "csplit's pieces": "csplit -s -f secrets/key.txt x 1",
    "iconv -o": "iconv -f utf-8 -t ascii x -o secrets/key.txt",
    "script's log": "script -q -c true secrets/key.txt",
    "a fifo in its folder": "mkfifo secrets/x",
    "a redirection to ~+": "echo pwned > ~+/secrets/key.txt",
    "find -exec cp into {}": "find secrets -name 'key.txt' -exec cp x {} \\;",
    "mktemp in its folder": "mktemp -p secrets",
    "mktemp by a template": "mktemp secrets/k.XXXXXX",
    "shuf -o": "shuf -o secrets/key.txt x",
    "xxd -r": "xxd x | xxd -r - secrets/key.txt",
    "openssl -out": "openssl rand -out secrets/key.txt 8",
    "strip in place": "strip secrets/key.txt",
    "gcc -o": "echo 'int main(){return 0;}' > m.c && gcc -o secrets/key.txt m.c",
}


@pytest.mark.parametrize("command", WRITES.values(), ids=WRITES.keys())
async def test_a_write_into_a_denied_path_by_any_program_is_refused(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: "), output
    assert re.search(r'secrets/\S+ is forbidden \(edit rule "secrets/\*"\)', output), output
    assert snapshot(workspace) == before and not (workspace / "l").exists() and not (workspace / "s").exists()
    assert not (workspace / "d").exists()


DELETES = {
    "unlink": "unlink main.go",
    "rmdir of a folder holding it": "mkdir -p d && mv main.go d/ && rmdir d",
    "mv it away": "mv main.go main.txt",
    "find -delete": "find . -name '*.go' -delete",
    "shred": "shred -u main.go",
    "gzip": "gzip main.go",
    "a brace expansion": "unlink main.{go,txt}",
    "a glob": "unlink *.go",
    "find -exec mv {} away": "find . -name main.go -exec mv {} main.txt \\;",
    "zip -m moving it into an archive": "zip -qm a.zip main.go",
}


@pytest.mark.parametrize("command", DELETES.values(), ids=DELETES.keys())
async def test_a_removal_of_a_denied_file_by_any_program_is_refused(runtime, workspace, command):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: "), output
    assert 'delete main.go is forbidden (delete rule "*.go")' in output, output
    assert snapshot(workspace) == before


async def test_a_write_after_cd_to_the_workspace_by_its_absolute_path_is_refused(runtime, workspace):
    for command in [f"cd {workspace}/secrets && echo pwned > key.txt", f"pushd {workspace}/secrets; cp ../x key.txt"]:
        output = await call(runtime, "bash", {"command": command})
        assert 'write secrets/key.txt is forbidden (edit rule "secrets/*")' in output, output
    assert (workspace / "secrets/key.txt").read_text() == "s3cr3t\n"


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("rename main main2 main.go", 'delete main.go: deny (delete rule "*.go")'),
        ("rename 's/go/txt/' *.go", 'delete main.go: deny (delete rule "*.go")'),
        ("gawk -i inplace '{print}' secrets/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("mknod secrets/key.txt p", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("cpio -idm < a.cpio", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("7z x a.7z -osecrets", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("7z a -sdel a.7z main.go", 'delete main.go: deny (delete rule "*.go")'),
        ("black secrets/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("prettier --write secrets/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("cat x | sponge secrets/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("pandoc x -o secrets/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("curl -o secrets/key.txt https://example.com/x", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
        ("wget -P secrets https://example.com/key.txt", 'write secrets/key.txt: deny (edit rule "secrets/*")'),
    ],
)
def test_programs_not_installed_here_are_judged_by_what_they_would_change(workspace, command, effect):
    """rename, gawk or a formatter is not on every machine, and curl would reach the
    network: `permission check` shows the judgement."""
    plant(workspace, {**GUARDED, "secrets/key.txt": "s3cr3t\n"})
    line = explain_command(Config.model_validate(attack_config()), workspace, command, "coder")
    assert line.startswith("deny ") and f"\n  {effect}" in line, line


@pytest.mark.parametrize("command", ["black .", "ruff check --fix .", "prettier --write .", "gofmt -w ."])
def test_a_formatter_over_the_tree_is_judged_by_the_files_it_rewrites(workspace, command):
    """A formatter given the whole tree rewrites its own kind of file: not secrets/key.txt,
    nor opencode's folder, so it is not refused for them."""
    plant(workspace, {**GUARDED, "app.py": "x = 1\n", ".opencode/opencode.db": ""})
    line = explain_command(Config.model_validate(attack_config()), workspace, command, "coder")
    assert line.startswith("ask   ") and "deny" not in line, line


@pytest.mark.parametrize(
    "command",
    ['f() { echo "$@"; }; f x', "shopt -s expand_aliases; alias e=echo; e x", "hash -p /bin/echo ls; ls x"],
)
async def test_a_script_that_renames_programs_asks_though_every_part_is_allowed(make_runtime, workspace, command):
    """Only a person may approve it while a deny rule could apply: --yes does not run it."""
    runtime = make_runtime("headless-yes", attack_config({"bash": {"*": "allow", "rm *": "deny"}}))
    output = await call(runtime, "bash", {"command": f"{command} > out.txt"})
    assert "only a person can approve this" in output and not (workspace / "out.txt").exists(), output
    line = explain_command(Config.model_validate(attack_config({"bash": {"*": "allow"}})), workspace, command, "coder")
    assert line.startswith("ask   (what it runs cannot be known: ") and "\n  execute " in line


def test_opencode_tool_bash_yes_runs_no_spelling_of_rm_in_a_real_process(workspace):
    plant(workspace, {"x": "keep\n"})
    (workspace / ".opencode.json").write_text(json.dumps(attack_config(ATTACK_RULES)))
    for command in ["\\rm x", "bash -c '/bin/rm x'"]:
        answer = opencode_tool(workspace, "bash", {"command": command})
        assert answer["ok"] is False and 'global rule "rm *"' in answer["output"], answer
    assert (workspace / "x").read_text() == "keep\n"


def test_what_is_allowed_still_runs(workspace):
    plant(workspace, {"x": "keep\n"})
    (workspace / ".opencode.json").write_text(json.dumps(attack_config({"bash": {"*": "allow", "rm *": "deny"}})))
    answer = opencode_tool(workspace, "bash", {"command": "cp x y && echo done > z"})
    assert answer["ok"] is True and (workspace / "y").read_text() == "keep\n" and (workspace / "z").exists()


async def test_a_program_that_only_shares_an_allowed_name_is_asked_about(make_runtime, workspace):
    """`git *` allows git, not a `./git` script the agent may have written: it asks (and
    headless refuses it); the real git, by any path to the system's folders, runs."""
    (workspace / "git").write_text("#!/bin/sh\ntouch pwned\n")
    (workspace / "git").chmod(0o755)
    runtime = make_runtime("headless", attack_config())
    for command in ["./git status", "PATH=.:$PATH git status", "export PATH=.:$PATH; git status"]:
        output = await call(runtime, "bash", {"command": command})
        assert "needs approval" in output and not (workspace / "pwned").exists(), command
    output = await call(runtime, "bash", {"command": "/usr/bin/git --version"})
    assert "Exit code: 0" in output, output


async def test_a_tilde_of_no_user_is_a_plain_name_as_the_shell_reads_it(runtime, workspace):
    """`~nosuchuser/x` stays as written in bash, a folder named so: judged and run, and
    the path tools say it does not exist (it failed with pathlib's "Could not determine
    home directory" before)."""
    (workspace / "~nosuchuser").mkdir()
    output = await call(runtime, "bash", {"command": "echo a > ~nosuchuser/x"})
    assert "Exit code: 0" in output and (workspace / "~nosuchuser/x").read_text() == "a\n", output
    output = await call(runtime, "view", {"filePath": "~nosuchuser/y"})
    assert "does not exist" in output and "unexpectedly" not in output, output
