"""The attack suite, the agent changing its own rules through git: a folder that is itself
a repository's (`HEAD`, `objects/`, `refs/`, `config`) is no protected name, so the agent
may write one anywhere; git finds it when it runs there, and would run the
`core.fsmonitor` or a remote's `uploadpack` of its config. With `git *` allowed and
--yes, none of them runs."""

from __future__ import annotations

import json

import pytest

from tests.permission.attack import attack_config, call, opencode_tool, plant

CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n"
    '\tfsmonitor = "touch pwned; false"\n'
    '[remote "origin"]\n\turl = /nonexistent\n\tuploadpack = "touch pwned; false"\n'
)


def write_repository_folder(root, folder: str = "evil") -> None:
    plant(root, {f"{folder}/HEAD": "ref: refs/heads/main\n", f"{folder}/config": CONFIG,
                 f"{folder}/objects/.keep": "", f"{folder}/refs/.keep": ""})  # fmt: skip


@pytest.fixture
def runtime(make_runtime, workspace):
    plant(workspace, {"x": "keep\n"})
    return make_runtime("headless-yes", attack_config())


@pytest.mark.parametrize(
    "command", ["git -C evil status", "cd evil && git status", "cd evil/refs && git status", "git -C evil fetch origin"]
)
async def test_git_run_in_a_repository_folder_the_agent_wrote_is_left_to_a_person(runtime, workspace, command):
    write_repository_folder(workspace)
    output = await call(runtime, "bash", {"command": command})
    assert "git would read its settings from evil, a repository folder the agent may have written" in output, output
    assert "only a person can approve this" in output and not (workspace / "pwned").exists()


async def test_a_repository_folder_made_by_the_command_itself_is_left_to_a_person(runtime, workspace):
    command = (
        "mkdir -p e/objects e/refs && echo 'ref: refs/heads/main' > e/HEAD"
        " && printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = \"touch pwned; false\"\\n' > e/config"
        " && git -C e status"
    )
    output = await call(runtime, "bash", {"command": command})
    assert "git runs after the command writes e/" in output and "only a person can approve" in output, output
    assert not (workspace / "pwned").exists()


async def test_git_in_an_ordinary_repository_still_runs(runtime, workspace):
    output = await call(runtime, "bash", {"command": "git init -q && git status --short && git -C . log -1 || true"})
    assert "Exit code: 0" in output and "?? x" in output, output


def test_written_by_the_write_tool_then_run_by_git_in_real_processes(workspace):
    plant(workspace, {"x": "keep\n"})
    (workspace / ".opencode.json").write_text(json.dumps(attack_config()))
    for path, content in [("evil/HEAD", "ref: refs/heads/main\n"), ("evil/config", CONFIG),
                          ("evil/objects/.keep", ""), ("evil/refs/.keep", "")]:  # fmt: skip
        assert opencode_tool(workspace, "write", {"filePath": path, "content": content})["ok"] is True
    answer = opencode_tool(workspace, "bash", {"command": "git -C evil status"})
    assert answer["ok"] is False and "only a person can approve" in answer["output"], answer
    assert not (workspace / "pwned").exists()
