"""Undo and redo of a whole turn (app/prompt/turn_undo.py) through the real loop: the real
litellm client talking to the fake OpenAI server, real tools on real files, a real
SQLite store. What the next request sends shows what the model sees."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.headless.run import EXIT_FAILED, EXIT_OK, EXIT_USAGE, run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.agent import AgentLoop
from app.llm.provider import Provider
from app.prompt.turn_undo import FileStep, UndoError, redo_turn, undo_turn
from app.runtime import Runtime
from app.store import FileVersionCreated
from app.tools.write import WriteTool
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

A_BEFORE = b"\xef\xbb\xbfa = 1\r\nkeep = True\r\n"
"""A BOM and CRLF line endings: undo and redo must give back these very bytes."""
C_BEFORE = b"c = 3\n"


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), id=f"call_{name}_{len(json.dumps(arguments))}")


class Chat:
    """One session, a loop on the fake server, and the files of the issue's example."""

    def __init__(self, runtime: Runtime, fake: FakeOpenAI, root: Path) -> None:
        self.runtime, self.fake, self.root = runtime, fake, root
        env = fake.env
        self.loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env=env)
        self.session_id = runtime.store.sessions.create(title="test").id
        (root / "a.py").write_bytes(A_BEFORE)
        (root / "c.py").write_bytes(C_BEFORE)

    async def run(self, prompt: str, *replies) -> None:
        for reply in replies:
            self.fake.reply(*reply)
        self.fake.reply(Text(f"answered {prompt}"))
        result = await self.loop.run(self.session_id, prompt, model=self.fake.model)
        assert result.reason == "stop", result.error

    async def big_turn(self) -> None:
        """Edit a.py, create b.py, delete c.py (a.py read in an earlier turn)."""
        await self.run("look at a", [call("view", filePath="a.py")])
        await self.run(
            "change the three files",
            [call("edit", filePath="a.py", oldString="a = 1", newString="a = 2")],
            [call("write", filePath="b.py", content="b = 2\n")],
            [call("delete", path="c.py")],
        )

    def disk(self) -> dict[str, bytes | None]:
        return {name: (self.root / name).read_bytes() if (self.root / name).exists() else None for name in ("a.py", "b.py", "c.py")}

    def last_request(self) -> str:
        """The conversation the last request sent, as one string to search (no system prompt)."""
        return json.dumps([m for m in self.fake.requests[-1]["messages"] if m["role"] != "system"])


@pytest.fixture
def chat(make_runtime, fake_llm, workspace: Path) -> Chat:
    return Chat(make_runtime(), fake_llm, workspace)


async def test_undo_puts_every_file_back_and_the_model_no_longer_sees_the_turn(chat: Chat):
    await chat.big_turn()
    after = chat.disk()
    assert after == {"a.py": b"\xef\xbb\xbfa = 2\r\nkeep = True\r\n", "b.py": b"b = 2\n", "c.py": None}
    versions = chat.runtime.bus.subscribe(FileVersionCreated)

    step = await undo_turn(chat.runtime, chat.session_id)

    assert chat.disk() == {"a.py": A_BEFORE, "b.py": None, "c.py": C_BEFORE}
    assert step.prompt == "change the three files"
    assert step.files == [FileStep("a.py", "edited"), FileStep("b.py", "removed"), FileStep("c.py", "restored")]
    announced = [event.path for event in versions.drain()]
    assert sorted(announced) == ["a.py", "b.py", "c.py"]  # the sidebar hears of each file
    # Nothing is deleted: the messages stay, marked, and history gained versions.
    everything = chat.runtime.store.messages.list(chat.session_id, include_undone=True)
    assert [m.undone for m in everything if m.role == "user"] == [False, True]
    assert [v.version for v in chat.runtime.store.history.versions(chat.session_id, "b.py")] == ["initial", "v1", "v2"]

    await chat.run("what now")
    sent = chat.last_request()
    assert "change the three files" not in sent and "b = 2" not in sent and "a = 2" not in sent
    assert "look at a" in sent and "what now" in sent


async def test_redo_brings_back_the_results_byte_for_byte_and_the_messages(chat: Chat):
    await chat.big_turn()
    after = chat.disk()
    await undo_turn(chat.runtime, chat.session_id)

    step = await redo_turn(chat.runtime, chat.session_id)

    assert chat.disk() == after
    assert step.action == "redo" and step.prompt == "change the three files"
    assert step.files == [FileStep("a.py", "edited"), FileStep("b.py", "restored"), FileStep("c.py", "removed")]
    await chat.run("and then")
    assert "change the three files" in chat.last_request() and "b = 2" in chat.last_request()


async def test_an_outside_change_refuses_the_undo_and_changes_nothing(chat: Chat):
    await chat.big_turn()
    (chat.root / "a.py").write_bytes(b"edited by hand\n")
    before = chat.disk()

    with pytest.raises(UndoError) as refused:
        await undo_turn(chat.runtime, chat.session_id)

    assert "a.py changed since that turn" in str(refused.value) and "nothing was undone" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert chat.disk() == before  # b.py was not removed, c.py not restored: all or nothing
    assert not any(m.undone for m in chat.runtime.store.messages.list(chat.session_id, include_undone=True))
    (chat.root / "a.py").write_bytes(b"\xef\xbb\xbfa = 2\r\nkeep = True\r\n")  # put back: the undo goes through
    await undo_turn(chat.runtime, chat.session_id)
    assert chat.disk() == {"a.py": A_BEFORE, "b.py": None, "c.py": C_BEFORE}


async def test_undos_go_turn_by_turn_and_redo_comes_back_in_order(chat: Chat):
    await chat.run("one", [call("write", filePath="n.txt", content="1\n")])
    await chat.run("two", [call("write", filePath="n.txt", content="2\n")])
    await chat.run("three", [call("write", filePath="n.txt", content="3\n")])
    n = chat.root / "n.txt"

    assert (await undo_turn(chat.runtime, chat.session_id)).prompt == "three"
    assert n.read_text() == "2\n"
    assert (await undo_turn(chat.runtime, chat.session_id)).prompt == "two"
    assert n.read_text() == "1\n"
    assert (await redo_turn(chat.runtime, chat.session_id)).prompt == "two"
    assert n.read_text() == "2\n"
    assert (await redo_turn(chat.runtime, chat.session_id)).prompt == "three"
    assert n.read_text() == "3\n"
    with pytest.raises(UndoError, match="Nothing to redo"):
        await redo_turn(chat.runtime, chat.session_id)


async def test_a_new_prompt_after_an_undo_ends_the_redo(chat: Chat):
    await chat.run("one", [call("write", filePath="n.txt", content="1\n")])
    await chat.run("two", [call("write", filePath="n.txt", content="2\n")])
    await undo_turn(chat.runtime, chat.session_id)

    await chat.run("instead", [call("write", filePath="n.txt", content="other\n")])

    with pytest.raises(UndoError, match="Nothing to redo: no turn was undone since the last prompt"):
        await redo_turn(chat.runtime, chat.session_id)
    assert (await undo_turn(chat.runtime, chat.session_id)).prompt == "instead"
    assert (chat.root / "n.txt").read_text() == "1\n"  # "two" stays undone: it was dropped
    assert (await undo_turn(chat.runtime, chat.session_id)).prompt == "one"
    assert not (chat.root / "n.txt").exists()
    with pytest.raises(UndoError, match="Nothing to undo"):
        await undo_turn(chat.runtime, chat.session_id)
    await chat.run("fresh start")
    assert json.loads(chat.last_request()) == [{"role": "user", "content": "fresh start"}]


async def test_a_turn_without_file_changes_is_undone_from_the_conversation_only(chat: Chat):
    await chat.run("just talk")
    step = await undo_turn(chat.runtime, chat.session_id)
    assert (step.prompt, step.files) == ("just talk", [])
    assert chat.runtime.store.messages.list(chat.session_id) == []


async def test_changes_of_a_sub_agent_during_the_turn_are_undone_with_it(chat: Chat):
    """A child session's writes fall in the parent turn's range of the session tree."""
    store = chat.runtime.store
    prompt = store.messages.add(chat.session_id, "user", [{"type": "text", "text": "delegate"}])
    turn = store.turns.begin(chat.session_id, prompt.id)
    child = store.sessions.create(title="helper", parent_id=chat.session_id)
    await WriteTool().call({"filePath": "made_by_child.txt", "content": "child\n"}, chat.runtime.context(child.id))
    store.turns.end(turn.id)
    other = store.sessions.create(title="unrelated")  # another session's write, after: not the turn's
    await WriteTool().call({"filePath": "other.txt", "content": "x\n"}, chat.runtime.context(other.id))

    step = await undo_turn(chat.runtime, chat.session_id)

    assert step.files == [FileStep("made_by_child.txt", "removed")]
    assert not (chat.root / "made_by_child.txt").exists() and (chat.root / "other.txt").exists()


# -- headless: opencode -p "/undo" --continue ------------------------------------------------


def headless(root: Path, prompt: str, fake: FakeOpenAI, **options) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = fake.env
    code = run_headless(root, HeadlessRequest(prompt, model=fake.model, **options), env=env, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_headless_undo_and_redo_with_continue(fake_llm: FakeOpenAI, workspace: Path):
    (workspace / ".opencode.json").write_text('{"lsp": {"python": {"disabled": true}}}')
    (workspace / "a.py").write_bytes(A_BEFORE)
    (workspace / "c.py").write_bytes(C_BEFORE)
    fake_llm.reply(call("view", filePath="a.py"))
    fake_llm.reply(call("edit", filePath="a.py", oldString="a = 1", newString="a = 2"))
    fake_llm.reply(call("write", filePath="b.py", content="b = 2\n"))
    fake_llm.reply(call("delete", path="c.py"))
    fake_llm.reply(Text("done"))
    assert headless(workspace, "change the three files", fake_llm, yes=True)[0] == EXIT_OK
    after = {name: (workspace / name).read_bytes() for name in ("a.py", "b.py")}

    code, out, err = headless(workspace, "/undo", fake_llm, continue_last=True)

    assert (code, err) == (EXIT_OK, "")
    assert out == "Undid the turn: change the three files\n  edited a.py\n  removed b.py\n  restored c.py\n"
    assert (workspace / "a.py").read_bytes() == A_BEFORE and not (workspace / "b.py").exists()
    assert (workspace / "c.py").read_bytes() == C_BEFORE

    code, out, _ = headless(workspace, "/redo", fake_llm, continue_last=True, output_format="json")
    payload = json.loads(out)
    assert code == EXIT_OK and payload["action"] == "redo" and payload["prompt"] == "change the three files"
    assert payload["files"] == [
        {"path": "a.py", "effect": "edited"}, {"path": "b.py", "effect": "restored"}, {"path": "c.py", "effect": "removed"},
    ]
    assert {name: (workspace / name).read_bytes() for name in ("a.py", "b.py")} == after
    assert not (workspace / "c.py").exists()

    (workspace / "a.py").write_text("by hand\n")
    code, out, err = headless(workspace, "/undo", fake_llm, continue_last=True)
    assert (code, out) == (EXIT_FAILED, "")
    assert err.startswith("opencode: error: a.py changed since that turn") and err.count("\n") == 1
    assert (workspace / "b.py").exists()
    assert len(fake_llm.requests) == 5  # undo and redo never called the model


def test_headless_undo_needs_continue(fake_llm: FakeOpenAI, workspace: Path):
    code, out, err = headless(workspace, "/undo", fake_llm)
    assert (code, out) == (EXIT_USAGE, "")
    assert err == "opencode: error: /undo acts on an earlier turn: add --continue to pick the last session\n"


async def test_undo_gives_back_a_change_made_by_hand_between_turns(chat: Chat):
    """What the file held when the turn began is what undo restores, even when that was
    not the agent's own last version: history records the hand-made content it replaced."""
    await chat.run("one", [call("write", filePath="n.txt", content="1\n")])
    (chat.root / "n.txt").write_text("mine\n")
    await chat.run("two", [call("view", filePath="n.txt")], [call("write", filePath="n.txt", content="2\n")])

    await undo_turn(chat.runtime, chat.session_id)

    assert (chat.root / "n.txt").read_text() == "mine\n"
    await redo_turn(chat.runtime, chat.session_id)
    assert (chat.root / "n.txt").read_text() == "2\n"


async def test_a_deleted_folder_and_a_binary_file_come_back_byte_for_byte(chat: Chat):
    folder = chat.root / "pkg" / "deep"
    folder.mkdir(parents=True)
    image = bytes(range(256)) * 4
    (folder / "logo.png").write_bytes(image)
    (chat.root / "pkg" / "mod.py").write_text("x = 1\n")
    await chat.run("clean up", [call("delete", path="pkg")])
    assert not (chat.root / "pkg").exists()

    step = await undo_turn(chat.runtime, chat.session_id)

    assert (folder / "logo.png").read_bytes() == image
    assert (chat.root / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert step.files == [FileStep("pkg/deep/logo.png", "restored"), FileStep("pkg/mod.py", "restored")]
    await redo_turn(chat.runtime, chat.session_id)
    assert not (chat.root / "pkg" / "mod.py").exists() and not (folder / "logo.png").exists()


async def test_a_deny_rule_refuses_the_whole_undo(chat: Chat, make_runtime):
    await chat.big_turn()
    after = chat.disk()
    guarded = make_runtime(config={"permission": {"rules": {"edit": {"a.py": "deny"}}}})

    with pytest.raises(UndoError) as refused:
        await undo_turn(guarded, chat.session_id)

    assert str(refused.value).startswith("Could not undo the turn: Permission denied")
    assert "a.py" in str(refused.value) and "nothing was changed" in str(refused.value)
    assert chat.disk() == after  # b.py is not removed nor c.py restored either
    assert guarded.store.turns.last_done(chat.session_id) is not None


async def test_an_undo_whose_files_are_already_back_only_marks_the_turn(chat: Chat):
    """As after a crash between the undo's change and the marking of its turn: asked
    again, the undo finds the files as it would leave them, changes nothing, and marks it."""
    await chat.big_turn()
    for name, data in {"a.py": A_BEFORE, "c.py": C_BEFORE}.items():
        (chat.root / name).write_bytes(data)
    (chat.root / "b.py").unlink()
    versions = len(chat.runtime.store.history.versions(chat.session_id, "a.py"))

    step = await undo_turn(chat.runtime, chat.session_id)

    assert step.files == [FileStep("a.py", "edited"), FileStep("b.py", "removed"), FileStep("c.py", "restored")]
    assert len(chat.runtime.store.history.versions(chat.session_id, "a.py")) == versions  # nothing written
    assert [m.role for m in chat.runtime.store.messages.list(chat.session_id)] == ["user", "assistant", "tool", "assistant"]


async def test_a_workhorse_sub_agents_changes_are_undone_with_its_turn(chat: Chat):
    """Through the real loop: the turn's own write and the one its sub-agent made in a
    child session both go, and both come back with redo."""
    await chat.run(
        "delegate",
        [call("write", filePath="e.py", content="e = 1\n")],
        [call("task", description="make d", prompt="create d.py", subagent_type="workhorse")],
        [call("write", filePath="d.py", content="d = 1\n")],  # the child's request
        [Text("child made d.py")],  # the child's answer
    )
    assert (chat.root / "d.py").exists() and (chat.root / "e.py").exists()
    children = chat.runtime.store.sessions.children(chat.session_id)
    assert len(children) == 1

    step = await undo_turn(chat.runtime, chat.session_id)

    assert step.files == [FileStep("d.py", "removed"), FileStep("e.py", "removed")]
    assert not (chat.root / "d.py").exists() and not (chat.root / "e.py").exists()
    await redo_turn(chat.runtime, chat.session_id)
    assert (chat.root / "d.py").read_text() == "d = 1\n" and (chat.root / "e.py").read_text() == "e = 1\n"
