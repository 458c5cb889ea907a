"""Instructions files that lead outside the workspace (a symlinked AGENTS.md, contextPaths
with `..`, an absolute path, a symlinked folder, a link inside a context folder): their
text reaches the model only when external_directory allows the path, and never when the
project's own .opencode.json names them. Checked in what the fake OpenAI server received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import load_config
from app.permission import PermissionReply
from tests.llm.fake_openai import FakeOpenAI, Text
from tests.llm.test_agent import Harness

SECRET = "BEGIN OPENSSH PRIVATE KEY not-for-the-model"
INSIDE = "Run the tests with make test."
ALLOW_OUTSIDE = {"permission": {"rules": {"external_directory": "allow"}}}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace holding a secret, as ~/.ssh would."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_text(SECRET + "\n")
    return folder


def write_config(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data))


async def system_sent(make_runtime, fake: FakeOpenAI, workspace: Path, home: Path, policy: str = "headless") -> str:
    """The system message of the first request of a one-step turn, with the config loaded
    as the CLI loads it: the global file in ``home``, then the project's."""
    config = load_config(workspace, env={"HOME": str(home)})
    h = Harness(make_runtime(policy=policy, config=config), fake)
    fake.reply(Text("ok"))
    await h.run("hi")
    (request,) = fake.requests
    return request["messages"][0]["content"]


async def test_a_symlinked_agents_md_is_not_read_when_outside_reads_are_not_allowed(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path
) -> None:
    (workspace / "AGENTS.md").symlink_to(outside / "id_rsa")
    (workspace / "CLAUDE.md").write_text(INSIDE)
    system = await system_sent(make_runtime, fake_llm, workspace, home)
    assert SECRET not in json.dumps(fake_llm.requests)
    assert INSIDE in system
    assert "- AGENTS.md was not read: it leads outside the workspace, and external_directory does not allow" in system


async def test_a_symlinked_agents_md_is_read_where_the_users_rules_allow_it(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path
) -> None:
    (workspace / "AGENTS.md").symlink_to(outside / "id_rsa")
    write_config(home / ".opencode.json", {"permission": {"rules": {"external_directory": {f"{outside}/*": "allow"}}}})
    assert SECRET in await system_sent(make_runtime, fake_llm, workspace, home)


@pytest.mark.parametrize("entry", ["../outside/id_rsa", "{outside}/id_rsa", "linked/id_rsa", "linked"])
async def test_the_project_config_cannot_add_files_from_outside(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path, entry: str
) -> None:
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    entry = entry.format(outside=outside)
    write_config(workspace / ".opencode.json", {"contextPaths": [entry], **ALLOW_OUTSIDE})
    system = await system_sent(make_runtime, fake_llm, workspace, home, policy="headless-yes")
    assert SECRET not in json.dumps(fake_llm.requests)
    assert "the project's .opencode.json lists it, and a project cannot add files from outside" in system


async def test_the_users_global_config_may_list_an_outside_file_that_the_rules_allow(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path
) -> None:
    write_config(home / ".opencode.json", {"contextPaths": [f"{outside}/id_rsa"], **ALLOW_OUTSIDE})
    assert SECRET in await system_sent(make_runtime, fake_llm, workspace, home)


async def test_a_link_to_outside_inside_a_context_folder_is_judged_like_any_outside_file(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path
) -> None:
    rules = workspace / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text(INSIDE)
    (rules / "key.md").symlink_to(outside / "id_rsa")
    write_config(home / ".opencode.json", {"contextPaths": [".cursor/rules"]})
    system = await system_sent(make_runtime, fake_llm, workspace, home)
    assert SECRET not in json.dumps(fake_llm.requests)
    assert INSIDE in system and "- .cursor/rules/key.md was not read" in system


@pytest.mark.parametrize(("reply", "read"), [("allow_once", True), ("deny", False)])
async def test_a_person_is_asked_about_an_outside_file_once_per_turn(
    make_runtime, fake_llm, workspace: Path, home: Path, outside: Path, permission_answers, reply: str, read: bool
) -> None:
    (workspace / "AGENTS.md").symlink_to(outside / "id_rsa")
    config = load_config(workspace, env={"HOME": str(home)})
    h = Harness(make_runtime(policy="interactive", config=config), fake_llm)
    answers = permission_answers(h.runtime, PermissionReply(reply))
    fake_llm.reply(Text("ok"))
    await h.run("hi")
    ((request,), (asked,)) = fake_llm.requests, answers.requests
    assert (asked.tool, asked.subject) == ("external_directory", (outside / "id_rsa").resolve().as_posix())
    assert (SECRET in request["messages"][0]["content"]) is read
