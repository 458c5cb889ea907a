"""Skills end to end: found in the project's and the user's folders, named in the system
prompt, loaded by the skill tool, their folder readable by view (and nothing beside it),
their allowed-tools a limit; the loop on the fake OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path

from app.skills.catalog import load_skills
from tests.hooks.conftest import call
from tests.llm.fake_openai import Text

BODY = "To fill a PDF form, run helper.py with the form's path."


def write_skill(folder: Path, front: str, body: str = BODY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\n\n{body}\n")
    return folder


def system_prompt(request: dict) -> str:
    return request["messages"][0]["content"]


async def test_a_skill_body_is_loaded_only_when_the_model_asks(harness, workspace, home):
    folder = write_skill(home / ".claude" / "skills" / "pdf-forms", "name: pdf-forms\ndescription: Fill in PDF forms.")
    (folder / "helper.py").write_text("print('filling')\n")
    (home / ".claude" / "secret.txt").write_text("SECRET-TOKEN\n")
    h = harness(policy="headless")  # a question would be refused: view of the skill's folder asks none
    h.fake.reply(call("skill", name="pdf-forms"))
    h.fake.reply(call("view", filePath=str(folder / "helper.py")))
    h.fake.reply(call("view", filePath=str(home / ".claude" / "secret.txt")))
    h.fake.reply(Text("done"))

    await h.run("fill in form.pdf")

    first = h.fake.requests[0]
    assert "- pdf-forms: Fill in PDF forms." in system_prompt(first)
    assert BODY not in json.dumps(first["messages"])
    assert "skill" in [tool["function"]["name"] for tool in first["tools"]]
    (loaded,) = h.tool_outputs(1)
    assert BODY in loaded and str(folder / "helper.py") in loaded
    helper = h.tool_outputs(2)[-1]
    assert "print('filling')" in helper
    secret = h.tool_outputs(3)[-1]
    assert "SECRET-TOKEN" not in secret and secret.startswith("external_directory")


async def test_allowed_tools_limit_the_turn(harness, workspace, home):
    write_skill(workspace / ".opencode" / "skills" / "reader", "name: reader\ndescription: Read only.\nallowed-tools: Read, Grep")
    (workspace / "a.txt").write_text("a\n")
    h = harness()
    h.fake.reply(call("skill", name="reader"))
    h.fake.reply(call("bash", command="touch b.txt"))
    h.fake.reply(call("view", filePath="a.txt"))
    h.fake.reply(Text("done"))

    await h.run("look around")

    assert not (workspace / "b.txt").exists()
    assert "The skill reader allows only these tools in this turn: view, grep, skill" in h.tool_outputs(2)[-1]
    assert "a" in h.tool_outputs(3)[-1]


def test_skill_folders_precedence_and_malformed_files(workspace, home):
    write_skill(workspace / ".opencode" / "skills" / "deploy", "name: deploy\ndescription: The project's deploy.")
    write_skill(home / ".claude" / "skills" / "deploy", "name: deploy\ndescription: The user's deploy.")
    write_skill(workspace / ".claude" / "skills" / "review", "description: Review a change.")
    broken = write_skill(home / ".config" / "opencode" / "skills" / "broken", "name: broken")
    bad_yaml = write_skill(home / ".claude" / "skills" / "yaml", "name: [unclosed")

    catalog = load_skills(workspace, {"HOME": str(home)})

    assert catalog.summaries() == [("deploy", "The project's deploy."), ("review", "Review a change.")]
    assert catalog.notices[0] == (
        f'skill not loaded: {broken / "SKILL.md"}: "description" is missing: say in one line when the skill is to be used'
    )
    assert catalog.notices[1].startswith(f"skill not loaded: {bad_yaml / 'SKILL.md'}: front matter")
    assert len(catalog.notices) == 2
