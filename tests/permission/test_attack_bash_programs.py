"""The attack suite, bash: spellings and programs that could reach a denied effect under
--yes. The files on disk show that none of them ran."""

from __future__ import annotations

import json

import pytest

from app.config import Config
from app.permission.shell.judge import explain_command
from tests.permission.attack import attack_config, call, opencode_tool, plant, snapshot

FILES = {"x": "keep\n", "secrets/key.txt": "s3cr3t\n", "main.go": "package main\n"}


@pytest.fixture
def runtime(make_runtime, workspace):
    plant(workspace, FILES)
    return make_runtime("headless-yes", attack_config())


DENIED = {
    # A pattern naming the folder a copy lands in: the shell expands `secret?` to `secrets`,
    # cp then writes secrets/x, which no file matched yet.
    "cp into a folder named by ?": ("cp x secret?", 'write secrets/x is forbidden (edit rule "secrets/*")'),
    "cp into a folder named by *": ("cp x s*", 'write secrets/x is forbidden (edit rule "secrets/*")'),
    "mv into a folder named by [...]": ("mv x secre[t]s", 'write secrets/x is forbidden (edit rule "secrets/*")'),
    # The grammar splits a word at brackets: the program's pattern was not expanded.
    "a bracket pattern as rm's name": ("/bin/[r]m x", 'global rule "rm *"'),
    "a bracket pattern at the end": ("/usr/bin/r[m] x", 'global rule "rm *"'),
    "a quoted folder and a bracket pattern": ('"/bin/"[r]m x', 'global rule "rm *"'),
    # A wrapper's own folder change: the relative path is judged from there.
    "env -C then a shell's write": (
        "env -C secrets sh -c 'echo pwned > key.txt'", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'
    ),
    "env --chdir= then cp": ("env --chdir=secrets cp ../x key.txt", "write secrets/key.txt is forbidden"),
    "env -CDIR then cp": ("env -Csecrets cp ../x key.txt", "write secrets/key.txt is forbidden"),
    # /proc/self/cwd is the shell's folder, the workspace: the judge read it as its own.
    "a redirection through /proc/self/cwd": (
        "cat x > /proc/self/cwd/secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'
    ),
    "cd through /proc/self/cwd": ("cd /proc/self/cwd/secrets && echo pwned > key.txt", "write secrets/key.txt is forbidden"),
    # A folder's contents copied over it: -T, a cluster (-rf), `.` as the source, rsync.
    "cp -rT of a folder over it": (
        "mkdir -p d && echo pwned > d/key.txt && cp -rT d secrets", 'is forbidden (edit rule "secrets/*")'
    ),
    "cp -rf of . into it": (
        "mkdir -p d && echo pwned > d/key.txt && cd d && cp -rf . ../secrets", "write secrets/key.txt is forbidden"
    ),
    "rsync -r of . into it": (
        "mkdir -p d && echo pwned > d/key.txt && cd d && rsync -r . ../secrets", "write secrets/key.txt is forbidden"
    ),
    # A compressor keeping the file still writes its packed copy beside it.
    "gzip -k in a denied folder": ("gzip -k secrets/key.txt", "write secrets/key.txt.gz is forbidden"),
    "xz -dk into a denied folder": ("xz -dk secrets/key.txt.xz", "write secrets/key.txt is forbidden"),
    # The standard library's archive modules unpack as unzip and tar do.
    "python3 -m zipfile -e": ("python3 -m zipfile -e a.zip secrets", 'write secrets/key.txt is forbidden'),
    "python3 -m tarfile -e": ("python3 -m tarfile -e a.tar secrets", 'write secrets/key.txt is forbidden'),
    # git writes its index where GIT_INDEX_FILE says.
    "GIT_INDEX_FILE over a denied file": (
        "GIT_INDEX_FILE=secrets/key.txt git add x", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'
    ),
}


@pytest.mark.parametrize(("command", "message"), DENIED.values(), ids=DENIED.keys())
async def test_the_effect_is_denied_whatever_the_spelling(runtime, workspace, command, message):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash:") and message in output and "nothing was run" in output, output
    assert snapshot(workspace) == before


# Programs the judge has no table for: a wrapper it does not know, a command line given as
# an argument or an option's value, a file they are given. What they do cannot be known,
# and a deny covers one of their arguments: only a person may approve them.
OPAQUE = {
    "an unknown wrapper": ("ssh-agent rm x", 'ssh-agent may run "rm x", which global rule "rm *" forbids'),
    "a wrapper with a subcommand": ("perf stat -e cycles rm x", 'may run "rm x"'),
    "a wrapper's option the table misses": ("env -a foo rm x", 'may run "rm x"'),
    "a program named by an option": ("start-stop-daemon -S -x /bin/rm -- x", 'may run "rm -- x"'),
    "a program as an option's value": ("capsh --shell=/bin/rm -- x", 'may run "rm -- x"'),
    "a command line as an argument": ("sg root 'rm x'", 'sg may run "rm x"'),
    "a command line after -c": ("npx -c 'rm x'", 'npx may run "rm x"'),
    "a command line as --command=": ("script --command='rm x'", 'may run "rm x"'),
    "an editor's ! command": ("vimdiff -c '!rm x' x x", 'vimdiff may run "rm x"'),
    "a pager's +! command": ("more '+!rm x' x", 'more may run "rm x"'),
    "make's inline rules": ("make --eval='a:;rm x' a", 'make may run "rm x"'),
    "a file it may change": ("fallocate -p -o 0 -l 4 secrets/key.txt", 'may write secrets/key.txt, which edit rule'),
    "a file it may remove": ("cmake -E remove main.go", 'cmake may delete main.go, which delete rule "*.go" forbids'),
    "a link it may make in a denied folder": ("link x secrets/new", "link may write secrets/new"),
}


@pytest.mark.parametrize(("command", "why"), OPAQUE.values(), ids=OPAQUE.keys())
async def test_a_program_without_a_table_reaching_a_deny_is_left_to_a_person(runtime, workspace, command, why):
    before = snapshot(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert why in output and "only a person can approve this" in output, output
    assert snapshot(workspace) == before


async def test_a_program_without_a_table_runs_when_no_deny_covers_its_arguments(runtime, workspace):
    output = await call(runtime, "bash", {"command": "expr 1 + 2"})
    assert "Exit code: 0" in output and "3" in output, output
    output = await call(runtime, "bash", {"command": "env -C secrets ls"})
    assert "Exit code: 0" in output and "key.txt" in output, output


def test_opencode_tool_bash_yes_in_a_real_process(workspace):
    plant(workspace, FILES)
    (workspace / ".opencode.json").write_text(json.dumps(attack_config()))
    for command in ["cp x secret?", "/bin/[r]m x", "env -C secrets sh -c 'echo pwned > key.txt'", "ssh-agent rm x"]:
        answer = opencode_tool(workspace, "bash", {"command": command})
        assert answer["ok"] is False, (command, answer)
    assert not (workspace / "secrets" / "x").exists() and (workspace / "x").read_text() == "keep\n"
    assert (workspace / "secrets" / "key.txt").read_text() == "s3cr3t\n"


EVERYDAY = [
    "pytest -q", "npm run build", "go test ./...", "python3 -m pytest tests/", "docker build -t x .", "ruff check .",
    "gh pr create --title 'Fix rm bug' --body 'removes the rm call'", "jq .name package.json", "kill 1234",
    "head -n 5 secrets/key.txt", "diff secrets/key.txt x", "less secrets/key.txt", "grep -rn 'rm -rf' .",
    "git commit -m 'rm the old files'", "echo 'rm x'", "timeout 10 pytest", "python3 tool.py secrets/key.txt",
    "which rm", "man rm", "tar -tf a.tar", "watch -n 1 ls", "openssl rand -hex 16", "mkdir -p build/out",
]  # fmt: skip


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_are_not_left_to_a_person(workspace, command):
    """What programs without a table may run or change is read from their arguments: a
    word that only mentions rm, or a file they only read, does not make them unknowable."""
    plant(workspace, FILES)
    verdict = explain_command(Config.model_validate(attack_config()), workspace, command, "coder")
    assert "only a person" not in verdict.splitlines()[0], verdict


EVIL = 'import os\nos.remove("main.go")\n'


@pytest.mark.parametrize("command", ["python3 evil.py", "cd sub && python3 ../evil.py", "make -f evil.mk"])
async def test_code_the_agent_wrote_is_not_run_by_yes_while_a_deny_could_apply(runtime, workspace, command):
    """A script in the repository is judged by its program's rule; one the agent wrote
    (an earlier write, another session's included) is no more known than `python3 -c`."""
    (workspace / "sub").mkdir()
    assert "Created" in await call(runtime, "write", {"filePath": "evil.py", "content": EVIL})
    assert "Created" in await call(runtime, "write", {"filePath": "evil.mk", "content": "all:\n\trm -f main.go\n"})
    output = await call(runtime, "bash", {"command": command})
    assert "code the agent wrote, whose effects cannot be known" in output, output
    assert "only a person can approve this" in output and (workspace / "main.go").exists()


async def test_a_script_already_in_the_repository_still_runs(runtime, workspace):
    plant(workspace, {"tool.py": 'print("ran")\n'})
    output = await call(runtime, "bash", {"command": "python3 tool.py"})
    assert "ran" in output and "Exit code: 0" in output, output


def test_a_script_written_in_one_process_is_not_run_by_yes_in_another(workspace):
    plant(workspace, FILES)
    (workspace / ".opencode.json").write_text(json.dumps(attack_config()))
    assert opencode_tool(workspace, "write", {"filePath": "evil.py", "content": EVIL})["ok"] is True
    answer = opencode_tool(workspace, "bash", {"command": "python3 evil.py"})
    assert answer["ok"] is False and "code the agent wrote" in answer["output"], answer
    assert (workspace / "main.go").read_text() == "package main\n"
