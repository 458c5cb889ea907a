"""`git *: allow` is not a license to run anything: what git runs for a command is judged
as a command of its own, what git deletes or overwrites by the delete and edit rules, and
what cannot be judged asks. A real repository and real git processes show what ran."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.permission.attack import ATTACK_RULES, attack_config, call, permission_check, plant, snapshot


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The repository, made once: each test gets a copy (git runs five times to make it)."""
    root = tmp_path_factory.mktemp("repo")
    plant(root, {"a": "keep\n", "secrets/key.txt": "s3cr3t\n", "main.go": "package main\n", "notes.txt": "n\n"})
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", "a", "secrets", "notes.txt")
    git(root, "commit", "-qm", "init")
    (root / "secrets" / "key.txt").write_text("uncommitted work\n")  # git checkout would lose it
    return root


@pytest.fixture
def repo(workspace: Path, template: Path) -> Path:
    shutil.copytree(template, workspace, symlinks=True, dirs_exist_ok=True)
    return workspace


@pytest.fixture
def runtime(make_runtime, repo):
    return make_runtime("headless-yes", attack_config())


RUNS_RM = {
    "a -c alias": "git -c alias.x='!rm a' x",
    "a -c alias through sh": "git -c alias.x='!sh -c \"rm a\"' x",
    "core.fsmonitor": "git -c core.fsmonitor='rm a' status",
    "core.pager": "git -c core.pager='rm a' -p log",
    "pager.log": "git -c pager.log='rm a' log",
    "diff.external": "git -c diff.external='rm a' diff",
    "GIT_EXTERNAL_DIFF": "GIT_EXTERNAL_DIFF='rm a' git diff",
    "GIT_PAGER exported": "export GIT_PAGER='rm a'; git -p log",
    "GIT_PAGER through env": "env GIT_PAGER='rm a' git -p log",
    "core.sshCommand": "git -c core.sshCommand='rm a' fetch ssh://h/r",
    "core.editor": "git -c core.editor='rm a' commit --allow-empty",
    "--upload-pack": "git ls-remote --upload-pack='rm a' .",
    "--upload-pack as a word": "git fetch --upload-pack 'rm a' .",
    "a textconv driver": "git -c diff.x.textconv='rm a' diff",
    "a filter driver": "git -c filter.x.smudge='rm a' checkout .",
    "a credential helper": "git -c credential.helper='!rm a' fetch",
    "git config then the alias": "git config alias.zz '!rm a' && git zz",
    "rebase --exec": "git rebase --exec 'rm a' HEAD",
    "submodule foreach": "git submodule foreach rm a",
    "bisect run": "git bisect run rm a",
    "--config-env then the alias is unknown, the -c one is not": "git --config-env=alias.y=X -c alias.x='!rm a' x",
    "--config-env from a variable set before": "EVIL='!rm a' git --config-env=alias.x=EVIL x",
    "--config-env from an exported variable": "export EVIL='!rm a'; git --config-env=alias.x=EVIL x",
    "GIT_CONFIG_COUNT": "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm a' git x",
    "GIT_CONFIG_PARAMETERS": "GIT_CONFIG_PARAMETERS=\"'alias.x'='!rm a'\" git x",
}


@pytest.mark.parametrize("command", RUNS_RM.values(), ids=RUNS_RM.keys())
async def test_a_command_git_would_run_meets_the_rm_deny(runtime, repo, command):
    config = (repo / ".git" / "config").read_bytes()
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: the permission rules forbid"), output
    assert '"rm a"' in output and 'global rule "rm *"' in output
    assert (repo / "a").read_text() == "keep\n" and (repo / ".git" / "config").read_bytes() == config


CHANGES = {
    "git rm": ("git rm --force main.go notes.txt", 'delete main.go is forbidden (delete rule "*.go")'),
    "git rm -r of the tree": ("git rm -rq --force .", "is forbidden"),
    "git clean -fdx": ("git clean -fdx", "is forbidden"),
    "git clean -f of a path": ("git clean -f main.go", 'delete main.go is forbidden (delete rule "*.go")'),
    "git checkout -- PATH": ("git checkout -- secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git checkout PATH": ("git checkout secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git checkout -C": ("git -C secrets checkout key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git checkout after cd": ("cd secrets && git checkout .", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git restore": ("git restore secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git restore of the tree": ("git restore .", "is forbidden"),
    "git reset --hard": ("git reset --hard", "is forbidden"),
    "git stash": ("git stash", "is forbidden"),
    "git stash drop": ("git stash drop", "is forbidden"),
    "git show into it": ("git show HEAD:a > secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git mv a .go file away": ("git mv -k main.go x.txt", 'delete main.go is forbidden (delete rule "*.go")'),
    "git config writes .git/config": ("git config user.name someone", "write .git/config is forbidden (protected: "),
    "git config --file .git/config": ("git config --file .git/config core.fsmonitor true", "write .git/config is forbidden"),
    "git merge-file into it": ("git merge-file secrets/key.txt a notes.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git checkout-index of it": ("git checkout-index -f secrets/key.txt", 'write secrets/key.txt is forbidden (edit rule "secrets/*")'),
    "git checkout-index -a": ("git checkout-index -f -a", "is forbidden"),
    "git read-tree -u": ("git read-tree -u --reset HEAD", "is forbidden"),
    "git sparse-checkout": ("git sparse-checkout set nothing", "is forbidden"),
}  # fmt: skip


@pytest.mark.parametrize(("command", "message"), CHANGES.values(), ids=CHANGES.keys())
async def test_what_git_deletes_or_overwrites_meets_the_delete_and_edit_rules(runtime, repo, command, message):
    status = git(repo, "status", "--porcelain")  # first: it refreshes the index of the copy
    before = snapshot(repo)
    output = await call(runtime, "bash", {"command": command})
    assert output.startswith("ERROR: bash: ") and "nothing was run" in output, output
    assert message in output, output
    assert snapshot(repo) == before and git(repo, "status", "--porcelain") == status
    assert git(repo, "stash", "list") == ""


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.hooksPath=hooks commit --allow-empty -m x",
        "git zz",  # a ! alias may be defined in a config the command does not show
        "git --git-dir=../other/.git status",
        "GIT_CONFIG_GLOBAL=../x git status",
        "git -c include.path=../x status",
    ],
)
async def test_what_cannot_be_judged_asks(make_runtime, repo, command):
    """Asked of a person: with deny rules in force, --yes does not run it either."""
    runtime = make_runtime("headless-yes", attack_config())
    config = (repo / ".git" / "config").read_bytes()
    output = await call(runtime, "bash", {"command": command})
    assert "only a person can approve this" in output and "--yes does not cover it" in output, output
    assert (repo / ".git" / "config").read_bytes() == config and git(repo, "log", "--format=%s") == "init\n"


async def test_git_config_global_is_a_protected_write(runtime, repo, tmp_path, monkeypatch):
    """git's global configuration can make any later git command run a program."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    output = await call(runtime, "bash", {"command": "git config --global core.fsmonitor 'touch x'"})
    assert f"write {home}/.gitconfig is forbidden (protected: " in output, output
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "made"),
    [
        ("git worktree add -q ../wt", "wt"),
        ("git clone -q . ../copy", "copy"),
        ("git init -q ../fresh", "fresh"),
        ("git -C .. init -q fresh", "fresh"),
        ("cd .. && git init -q fresh", "fresh"),
    ],
)
async def test_a_folder_git_makes_outside_the_workspace_is_asked_about(make_runtime, repo, command, made):
    """`git *` allows git, not a new repository or work tree outside the workspace: the
    `external_directory` rules judge it, as they judge `cp` there (headless: refused)."""
    runtime = make_runtime("headless", attack_config())
    output = await call(runtime, "bash", {"command": command})
    assert "needs approval" in output, output
    assert not (repo.parent / made).exists() and git(repo, "worktree", "list").count("\n") == 1


@pytest.mark.parametrize("command", ["git status --short", "git log --oneline", "git diff --stat", "git stash list"])
async def test_plain_git_still_runs_unasked(make_runtime, repo, command):
    runtime = make_runtime("headless", attack_config())
    output = await call(runtime, "bash", {"command": command})
    assert "Exit code: 0" in output, output


def test_permission_check_names_the_part_git_runs_and_its_rule(repo):
    (repo / ".opencode.json").write_text(json.dumps(attack_config()))
    printed = permission_check(repo, "bash", "git -c alias.x='!rm a' x")
    assert printed.splitlines() == [
        'deny  (part "rm a": global rule "rm *")',
        "  execute git -c alias.x='!rm a' x: allow (global rule \"git *\")",
        '  execute rm a: deny (global rule "rm *")',
    ]
    printed = permission_check(repo, "write", "secrets/key.txt")
    assert 'deny (edit rule "secrets/*")' in printed and printed.startswith("deny ")


@pytest.mark.parametrize(
    "command",
    ["HOME=. git status", "export HOME=$PWD; git status", "XDG_CONFIG_HOME=. git status", "env HOME=. git log"],
)
async def test_git_pointed_at_a_config_in_the_workspace_is_not_run_by_yes(runtime, repo, command):
    """A home folder moved into the workspace makes git read a .gitconfig the agent may
    have written: its core.fsmonitor would run. Only a person approves that."""
    (repo / ".gitconfig").write_text("[core]\n\tfsmonitor = rm a\n")
    (repo / "git").mkdir()
    (repo / "git" / "config").write_text("[core]\n\tfsmonitor = rm a\n")
    output = await call(runtime, "bash", {"command": command})
    assert "only a person can approve this" in output, output
    assert (repo / "a").read_text() == "keep\n"


async def test_a_git_trace_into_a_denied_file_is_refused(runtime, repo):
    for command in ["GIT_TRACE=$PWD/secrets/key.txt git status", f"GIT_TRACE2={repo}/secrets/key.txt git log"]:
        output = await call(runtime, "bash", {"command": command})
        assert 'write secrets/key.txt is forbidden (edit rule "secrets/*")' in output, output
    assert (repo / "secrets" / "key.txt").read_text() == "uncommitted work\n"


async def test_a_repository_outside_the_workspace_is_protected_too(make_runtime, repo, tmp_path):
    """`git -C /tmp/x status` runs /tmp/x's core.fsmonitor: writing that config is refused
    even with every outside path allowed."""
    outside = tmp_path / "evil"
    runtime = make_runtime("headless-yes", attack_config({**ATTACK_RULES, "external_directory": "allow"}))
    command = f"mkdir -p {outside}/.git && printf '[core]\\n\\tfsmonitor = rm a\\n' > {outside}/.git/config"
    output = await call(runtime, "bash", {"command": command})
    assert f"write {outside}/.git/config is forbidden (protected: " in output, output
    assert not outside.exists()
