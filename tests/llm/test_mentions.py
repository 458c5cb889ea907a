"""@ mentions and slash commands headless: `opencode -p` against the local fake OpenAI
server through the real litellm client, a real workspace and store; what the model was
sent is read from the server's requests."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.headless.run import EXIT_FAILED, EXIT_NEEDS_APPROVAL, EXIT_OK, EXIT_USAGE, run_headless
from app.headless.run_request import HeadlessRequest
from app.prompt.mentions import attach_mentions, mentioned_paths
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.llm.test_agent import harness  # noqa: F401 - the fixture, shared

APP = "import sys\n\n\ndef main():\n    print('hi')\n"


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(APP)
    (workspace / "src" / "util.py").write_text("X = 1\n")
    return workspace


def run(root: Path, fake: FakeOpenAI, prompt: str, *, yes: bool = True, **options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {**fake.env, "HOME": str(root.parent / "home")}
    code = run_headless(root, HeadlessRequest(prompt, yes=yes, **options), env=env, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def user_text(fake: FakeOpenAI, request: int = 0) -> str:
    (message,) = [m for m in fake.requests[request]["messages"] if m["role"] == "user"][-1:]
    return message["content"]


@pytest.mark.parametrize(
    ("prompt", "paths"),
    [
        ("explain @src/app.py.", ["src/app.py"]),
        ("@a.py and (@b/) then @a.py again", ["a.py"]),
        ("mail me@example.com about @c.txt, please", ["c.txt"]),
        ("line one\n@d/e.md", ["d/e.md"]),
        ("a lone @ sign", []),
    ],
)
def test_mentioned_paths(prompt: str, paths: list[str]) -> None:
    assert mentioned_paths(prompt) == paths


def test_a_mentioned_file_is_sent_with_numbered_lines_and_counts_as_read(project: Path, fake_llm: FakeOpenAI):
    fake_llm.reply(ToolCall("edit", json.dumps({"filePath": "src/app.py", "oldString": "'hi'", "newString": "'bye'"})))
    fake_llm.reply(Text("Done."))

    code, out, err = run(project, fake_llm, "explain @src/app.py and change hi to bye")

    assert (code, out) == (EXIT_OK, "Done.\n"), err
    content = user_text(fake_llm)
    assert content.startswith("explain @src/app.py and change hi to bye\n\n<attached file=\"src/app.py\">\n")
    assert "     1\timport sys\n" in content and "     5\t    print('hi')\n</attached>" in content
    assert (project / "src" / "app.py").read_text() == APP.replace("'hi'", "'bye'")  # no view was needed
    assert "error" not in json.dumps(fake_llm.requests[1]["messages"][-1]).lower()


def test_a_folder_mention_attaches_its_listing(project: Path, fake_llm: FakeOpenAI):
    fake_llm.reply(Text("Two files."))
    code, _, err = run(project, fake_llm, "what is in @src/ ?")
    assert code == EXIT_OK, err
    content = user_text(fake_llm)
    assert '<attached folder="src">' in content and "app.py" in content and "util.py" in content


def test_a_missing_path_stays_plain_text(project: Path, fake_llm: FakeOpenAI):
    fake_llm.reply(Text("ok"))
    code, _, err = run(project, fake_llm, "ping @someone about @nothing.py")
    assert (code, err) == (EXIT_OK, "")
    assert user_text(fake_llm) == "ping @someone about @nothing.py"


def test_a_denied_file_is_not_attached_and_the_user_is_told(project: Path, fake_llm: FakeOpenAI):
    (project / ".env").write_text("TOKEN=secret-value\n")
    (project / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"view": {"*.env": "deny"}}}}))
    fake_llm.reply(Text("ok"))

    code, _, err = run(project, fake_llm, "check @.env and @src/util.py", quiet=True)

    assert code == EXIT_OK
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("opencode: @.env was not attached: ")
    assert lines[0].endswith("view .env: denied by global rule \"*.env\"")
    sent = json.dumps(fake_llm.requests[0])
    assert "secret-value" not in sent and "X = 1" in sent


def test_a_file_outside_the_workspace_is_asked_about_as_view_asks(project: Path, fake_llm: FakeOpenAI):
    """A path the user typed that leads outside (written so, or through a link) needs the
    `external_directory` answer view needs: without --yes nobody gives it."""
    (project.parent / "outside.txt").write_text("private notes\n")
    (project / "link.txt").symlink_to(project.parent / "outside.txt")
    fake_llm.reply(Text("ok"))

    code, _, err = run(project, fake_llm, "read @../outside.txt and @link.txt", yes=False)

    assert code == EXIT_NEEDS_APPROVAL, err
    lines = err.splitlines()[:2]
    for line, name in zip(lines, ("../outside.txt", "link.txt"), strict=True):
        # the subject is the outside path, shortened when long (where the clone lies decides)
        assert line.startswith(f"opencode: @{name} was not attached: external_directory /"), line
        assert line.endswith(": needs approval: run with --yes to allow it"), line
    assert "private notes" not in json.dumps(fake_llm.requests[0])


def test_a_custom_command_sends_its_template(project: Path, fake_llm: FakeOpenAI):
    (project / ".opencode" / "commands").mkdir(parents=True)
    (project / ".opencode" / "commands" / "hello.md").write_text("Say hello to $ARGUMENTS")
    fake_llm.reply(Text("Hello, world!"))

    code, out, err = run(project, fake_llm, "/hello world")

    assert (code, out) == (EXIT_OK, "Hello, world!\n"), err
    assert user_text(fake_llm) == "Say hello to world"


def test_a_mention_in_a_template_attaches_the_file(project: Path, fake_llm: FakeOpenAI):
    (project / ".opencode" / "commands").mkdir(parents=True)
    (project / ".opencode" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview @$1 for bugs"
    )
    fake_llm.reply(Text("Looks fine."))
    code, _, err = run(project, fake_llm, "/review src/util.py")
    assert code == EXIT_OK, err
    assert user_text(fake_llm).startswith('Review @src/util.py for bugs\n\n<attached file="src/util.py">\n     1\tX = 1')


def test_tui_commands_and_unknown_ones_are_usage_errors(project: Path, fake_llm: FakeOpenAI):
    assert run(project, fake_llm, "/theme dark")[::2] == (
        EXIT_USAGE, "opencode: error: /theme works in the TUI only, not in headless runs (-p)\n"
    )
    assert run(project, fake_llm, "/compct")[::2] == (
        EXIT_USAGE, "opencode: error: unknown command /compct: did you mean /compact?\n"
    )
    assert run(project, fake_llm, "/compact")[::2] == (
        EXIT_USAGE, "opencode: error: /compact acts on a conversation: add --continue to act on the latest one\n"
    )
    assert fake_llm.requests == []


def test_compact_continues_the_latest_conversation(project: Path, fake_llm: FakeOpenAI):
    fake_llm.reply(Text("The answer is 42."))
    assert run(project, fake_llm, "what is the answer?")[0] == EXIT_OK
    fake_llm.reply(Text("The user asked for the answer; it is 42."))

    code, out, err = run(project, fake_llm, "/compact", continue_last=True)

    assert (code, out) == (EXIT_OK, "Session compacted: the next request starts from the summary\n"), err
    assert "what is the answer?" in json.dumps(fake_llm.requests[1]["messages"])
    code, _, err = run(project, fake_llm, "/compact", continue_last=True)
    assert (code, err) == (EXIT_FAILED, "opencode: error: Nothing to compact yet: the session has no messages since its last summary\n")


def script_init(fake: FakeOpenAI) -> None:
    fake.reply(ToolCall("write", json.dumps({"filePath": "AGENTS.md", "content": "# Agents\n\nRun `make test`.\n"})))
    fake.reply(Text("AGENTS.md covers the test command."))


def test_init_writes_agents_md_through_the_normal_write_path(project: Path, fake_llm: FakeOpenAI):
    script_init(fake_llm)
    code, _, err = run(project, fake_llm, "/init", yes=False)  # headless, nobody to approve the write
    assert code == EXIT_NEEDS_APPROVAL and "write AGENTS.md" in err
    assert not (project / "AGENTS.md").exists()
    first = user_text(fake_llm)
    assert "AGENTS.md" in first and "build, lint and test commands" in first.lower()

    script_init(fake_llm)
    code, out, err = run(project, fake_llm, "/init stress the release steps")
    assert (code, out) == (EXIT_OK, "AGENTS.md covers the test command.\n"), err
    assert (project / "AGENTS.md").read_text() == "# Agents\n\nRun `make test`.\n"
    assert user_text(fake_llm, 2).endswith("stress the release steps")


def test_a_custom_command_runs_on_its_agent_and_model(project: Path, fake_llm: FakeOpenAI):
    commands = project / ".opencode" / "commands"
    commands.mkdir(parents=True)
    (commands / "work.md").write_text("---\nagent: workhorse\nmodel: openai/gpt-5-mini\n---\nDo $ARGUMENTS")
    (commands / "ghost.md").write_text("---\nagent: nobody\n---\nDo it")
    fake_llm.reply(Text("done"))
    code, _, err = run(project, fake_llm, "/work the thing")
    assert code == EXIT_OK, err
    request = fake_llm.requests[0]
    assert request["model"] == "gpt-5-mini" and request["messages"][-1]["content"] == "Do the thing"
    assert "task" not in {tool["function"]["name"] for tool in request["tools"]}  # the workhorse has no sub-agents
    code, _, err = run(project, fake_llm, "/ghost")
    assert code == EXIT_USAGE and err.startswith("opencode: error: unknown agent 'nobody'")
    assert len(fake_llm.requests) == 1


async def test_a_long_file_is_cut_as_view_cuts_it_and_a_binary_one_is_refused(runtime, session_id, workspace):
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(2500)))
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    attachments, refusals = await attach_mentions(
        "see @long.txt and @blob.bin", runtime.context(session_id), runtime.tools
    )
    [attachment] = attachments
    assert attachment.path == "long.txt" and attachment.text.count("\n") == 2001
    assert attachment.text.endswith("(File has more lines. Use offset 2000 to read beyond line 2000)")
    [refusal] = refusals
    assert refusal.line.startswith("@blob.bin was not attached: blob.bin is a binary file")
    assert runtime.records.last_read(session_id, workspace / "long.txt") is not None


async def test_a_rule_that_asks_asks_and_a_no_refuses(make_runtime, workspace):
    runtime = make_runtime(policy="headless", config={"permission": {"rules": {"view": {"secret/*": "ask"}}}})
    session = runtime.store.sessions.create(title="t").id
    (workspace / "secret").mkdir()
    (workspace / "secret" / "key.txt").write_text("k\n")
    attachments, refusals = await attach_mentions("@secret/key.txt", runtime.context(session), runtime.tools)
    assert attachments == [] and [r.path for r in refusals] == ["secret/key.txt"]


@pytest.mark.parametrize("spelling", [".env", "./.env", "src/../.env", "cfg", "{root}/.env", "src//../.env"])
async def test_a_denied_file_is_refused_however_it_is_spelt(make_runtime, workspace, spelling):
    runtime = make_runtime(config={"permission": {"rules": {"*": {"*.env": "deny"}}}})
    session = runtime.store.sessions.create(title="t").id
    (workspace / "src").mkdir()
    (workspace / ".env").write_text("TOKEN=secret-value\n")
    (workspace / "cfg").symlink_to(workspace / ".env")
    mention = "@" + spelling.format(root=workspace)
    attachments, refusals = await attach_mentions(f"read {mention} and @./", runtime.context(session), runtime.tools)
    assert [refusal.line.split(": ", 1)[0] for refusal in refusals] == [f"{mention} was not attached"]
    [folder] = attachments  # the listing of the root leaves the denied file out, as ls does
    assert folder.kind == "folder" and ".env" not in folder.text and "secret-value" not in folder.text


async def test_a_sub_agent_mention_keeps_the_denies_of_the_agents_above_it(make_runtime, workspace):
    runtime = make_runtime(config={"agents": {"coder": {"permission": {"view": {"*.env": "deny"}}}}})
    parent = runtime.store.sessions.create(title="parent").id
    child = runtime.store.sessions.create(title="child", parent_id=parent).id
    runtime.permissions.inherit(child, parent, "coder")
    (workspace / ".env").write_text("TOKEN=secret-value\n")
    attached, refused = await attach_mentions("@.env", runtime.context(child, "explorer"), runtime.tools)
    assert attached == [] and [r.path for r in refused] == [".env"]
    attached, refused = await attach_mentions("@.env", runtime.context(parent, "explorer"), runtime.tools)
    assert [a.path for a in attached] == [".env"] and refused == []  # the explorer alone may read it


async def test_an_attached_file_counts_toward_compaction(harness, workspace: Path):  # noqa: F811 - the fixture
    """The request's size is the last one's plus what the prompt adds, attachments
    included: a large mention that takes the context past 90% compacts first."""
    (workspace / "big.txt").write_text("".join(f"{n:>5} some words on every line of it\n" for n in range(1900)))
    h = harness()
    window = 128_000  # litellm does not know the fake_llm model: the default window applies
    h.fake.reply(Text("Hello."), usage=(int(window * 0.8), 10))
    h.fake.reply(Text("SUMMARY: greetings."))
    h.fake.reply(Text("It counts."))
    await h.run("hello")

    result = await h.run("what does @big.txt hold?")

    assert result.response == "It counts."
    assert h.fake.requests[1].get("tools") is None  # the summarizer ran before the request
    assert "0 some words on every line" in json.dumps(h.fake.requests[1]["messages"])


def test_export_headless_writes_the_transcript_in_the_workspace(project: Path, fake_llm: FakeOpenAI):
    fake_llm.reply(Text("The answer is 42."))
    assert run(project, fake_llm, "what does @src/util.py say?")[0] == EXIT_OK
    code, out, err = run(project, fake_llm, "/export json", continue_last=True)
    assert code == EXIT_OK, err
    [written] = project.glob("opencode-session-*.json")
    assert out == f"Session exported to {written.name}\n"
    user, answer = json.loads(written.read_text())["messages"]
    assert (user["text"], user["attached"], answer["text"]) == ("what does @src/util.py say?", ["src/util.py"], "The answer is 42.")
    code, out, err = run(project, fake_llm, "/export", continue_last=True)
    [markdown] = project.glob("opencode-session-*.md")
    assert code == EXIT_OK and "what does @src/util.py say?\n\n(attached: src/util.py)" in markdown.read_text()
    assert run(project, fake_llm, "/export pdf", continue_last=True)[::2] == (
        EXIT_FAILED, "opencode: error: /export takes md or json, not 'pdf': for example /export json\n"
    )
    assert len(fake_llm.requests) == 1  # no command reached the model
