"""``/worktree NAME`` in the real app under Pilot, in a real git repository: the worktree
is made on its branch and the app exits asking ``run_tui`` to start again there; a bad
name, no name or a workspace outside git is one line in the chat and the app goes on.
The restart's command line is checked as built (nothing is exec'd here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.worktrees.restart import WorktreeRestart
from tests.tui.conftest import wait_until

GIT_IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_IDENTITY, "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repository(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_text("main\n")
    (workspace / ".gitignore").write_text(".opencode/\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "start")
    return workspace


def notices(app) -> list[str]:
    return [str(notice.text) for notice in app.chat.query("ChatNotice")]


async def test_worktree_makes_the_worktree_and_exits_to_restart_in_it(repository: Path, make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        await pilot.press(*"/worktree feat", "enter")
        await wait_until(pilot, lambda: app.return_value is not None)
    assert app.return_value == WorktreeRestart(repository.resolve(), "feat")
    tree = repository / ".opencode" / "worktrees" / "feat"
    assert f"worktree {tree.resolve()}\n" in git(repository, "worktree", "list", "--porcelain")
    assert git(tree, "branch", "--show-current").strip() == "feat"
    assert (tree / "a.txt").read_text() == "main\n"


@pytest.mark.parametrize(
    ("typed", "line"),
    [
        ("/worktree", "usage: /worktree NAME"),
        ("/worktree bad..name", "'bad..name' cannot name a worktree"),
    ],
)
async def test_a_missing_or_bad_name_is_one_line_and_the_app_goes_on(repository: Path, make_app, typed: str, line: str):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        await pilot.press(*typed, "enter")
        await wait_until(pilot, lambda: any(line in notice for notice in notices(app)))
        assert app.is_running and app.return_value is None
    assert git(repository, "worktree", "list", "--porcelain").count("worktree ") == 1


async def test_outside_a_git_repository_it_says_so(workspace: Path, make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        await pilot.press(*"/worktree feat", "enter")
        await wait_until(pilot, lambda: any("not in a git repository" in notice for notice in notices(app)))
        assert app.is_running and app.return_value is None
    assert not (workspace / ".opencode" / "worktrees").exists()


def test_the_restart_runs_opencode_with_worktree_from_the_main_workspace(tmp_path: Path):
    restart = WorktreeRestart(tmp_path / "project" / "src", "feat/login")
    assert restart.argv("/usr/bin/python3") == [
        "/usr/bin/python3", "-m", "app.cli", "-C", str(tmp_path / "project" / "src"), "--worktree", "feat/login",
    ]


def test_from_a_worktrees_session_the_restart_starts_from_the_main_checkout(repository: Path):
    from app.worktrees.restart import prepare_restart

    (repository / "src").mkdir()
    first = prepare_restart(repository / "src", "feat")
    assert first == WorktreeRestart((repository / "src").resolve(), "feat")
    inside = repository / ".opencode" / "worktrees" / "feat" / "src"
    inside.mkdir()
    assert prepare_restart(inside, " other ") == WorktreeRestart((repository / "src").resolve(), "other")
    assert (repository / ".opencode" / "worktrees" / "other").is_dir()
