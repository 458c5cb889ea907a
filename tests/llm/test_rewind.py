"""/rewind (app/prompt/turn_undo.py): several turns taken back in one step through the real loop
on the fake OpenAI server, real files, a real SQLite store; what the next request sends
shows what the model sees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.prompt.turn_undo import UndoError, parse_rewind, redo_turn, rewind_to, rewindable, undo_turn
from tests.llm.fake_openai import FakeOpenAI, Text
from tests.llm.test_turn_undo import A_BEFORE, C_BEFORE, Chat, call, headless

NAMES = ("a.py", "b.py", "c.py", "d.py")


@pytest.fixture
def chat(make_runtime, fake_llm, workspace: Path) -> Chat:
    return Chat(make_runtime(), fake_llm, workspace)


def disk(root: Path) -> dict[str, bytes | None]:
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in NAMES}


async def three_turns(chat: Chat) -> list[dict[str, bytes | None]]:
    """Turn 1 edits a.py, turn 2 creates b.py and edits a.py again, turn 3 deletes c.py
    and creates d.py; the files as they were before each turn, and after the last."""
    states = [disk(chat.root)]
    await chat.run(
        "first", [call("view", filePath="a.py")], [call("edit", filePath="a.py", oldString="a = 1", newString="a = 2")]
    )
    states.append(disk(chat.root))
    await chat.run(
        "second",
        [call("write", filePath="b.py", content="b = 1\n")],
        [call("edit", filePath="a.py", oldString="a = 2", newString="a = 3")],
    )
    states.append(disk(chat.root))
    await chat.run("third", [call("delete", path="c.py")], [call("write", filePath="d.py", content="d\n")])
    states.append(disk(chat.root))
    return states


async def test_rewind_to_the_first_turn_restores_every_file_and_the_conversation(chat: Chat):
    states = await three_turns(chat)
    assert states[0] == {"a.py": A_BEFORE, "b.py": None, "c.py": C_BEFORE, "d.py": None}

    step = await rewind_to(chat.runtime, chat.session_id, 1)

    assert disk(chat.root) == states[0]
    assert (step.action, step.turns, step.prompt) == ("rewind", 3, "first")
    assert [(item.path, item.effect) for item in step.files] == [
        ("a.py", "edited"), ("b.py", "removed"), ("c.py", "restored"), ("d.py", "removed"),
    ]
    assert rewindable(chat.runtime, chat.session_id) == []
    await chat.run("after the rewind")
    assert json.loads(chat.last_request()) == [{"role": "user", "content": "after the rewind"}]


async def test_redo_brings_back_everything_the_rewind_took_back(chat: Chat):
    states = await three_turns(chat)
    await rewind_to(chat.runtime, chat.session_id, 2)
    assert disk(chat.root) == states[1]
    assert [entry.prompt for entry in rewindable(chat.runtime, chat.session_id)] == ["first"]

    step = await redo_turn(chat.runtime, chat.session_id)

    assert (step.action, step.turns) == ("redo", 2)
    assert disk(chat.root) == states[3]
    await chat.run("and now")
    sent = chat.last_request()
    assert all(prompt in sent for prompt in ("first", "second", "third", "and now"))


async def test_a_file_changed_outside_refuses_the_whole_rewind(chat: Chat):
    states = await three_turns(chat)
    (chat.root / "b.py").write_text("mine\n")
    before = disk(chat.root)

    with pytest.raises(UndoError) as refused:
        await rewind_to(chat.runtime, chat.session_id, 1)

    line = str(refused.value)
    assert "b.py changed since that turn" in line and "nothing was rewound" in line and "\n" not in line
    assert disk(chat.root) == before  # a.py, c.py and d.py untouched too
    assert len(rewindable(chat.runtime, chat.session_id)) == 3
    (chat.root / "b.py").write_text("b = 1\n")
    await rewind_to(chat.runtime, chat.session_id, 1)
    assert disk(chat.root) == states[0]


async def test_a_change_by_hand_between_the_turns_refuses_it_too(chat: Chat):
    """Undoing the turns one by one would stop at that change: so does the rewind."""
    await chat.run("one", [call("write", filePath="n.txt", content="1\n")])
    (chat.root / "n.txt").write_text("mine\n")
    await chat.run("two", [call("view", filePath="n.txt")], [call("write", filePath="n.txt", content="2\n")])

    with pytest.raises(UndoError, match="n.txt changed outside the agent between two of these turns: nothing was rewound"):
        await rewind_to(chat.runtime, chat.session_id, 1)

    assert (chat.root / "n.txt").read_text() == "2\n"
    await rewind_to(chat.runtime, chat.session_id, 2)
    assert (chat.root / "n.txt").read_text() == "mine\n"


async def test_files_only_keeps_the_conversation_and_conversation_only_keeps_the_files(chat: Chat):
    states = await three_turns(chat)

    await rewind_to(chat.runtime, chat.session_id, 2, "files")
    assert disk(chat.root) == states[1]
    await chat.run("files went back")
    assert "third" in chat.last_request() and "second" in chat.last_request()
    # The prompt ended the redo: turns 2 and 3 stay in the conversation, but out of the list.
    assert [entry.prompt for entry in rewindable(chat.runtime, chat.session_id)] == ["first", "files went back"]

    (chat.root / "mine.txt").write_text("kept\n")
    before = disk(chat.root)
    step = await rewind_to(chat.runtime, chat.session_id, 2, "conversation")
    assert step.files == [] and disk(chat.root) == before
    await chat.run("talk again")
    sent = chat.last_request()
    assert "first" in sent and "files went back" not in sent and "talk again" in sent


async def test_redo_after_a_conversation_only_rewind_brings_the_messages_back(chat: Chat):
    await three_turns(chat)
    after = disk(chat.root)
    await rewind_to(chat.runtime, chat.session_id, 3, "conversation")
    step = await redo_turn(chat.runtime, chat.session_id)
    assert (step.files, step.scope) == ([], "conversation")
    assert disk(chat.root) == after
    assert [entry.prompt for entry in rewindable(chat.runtime, chat.session_id)] == ["first", "second", "third"]


async def test_undo_and_rewind_mix_and_redo_comes_back_in_order(chat: Chat):
    states = await three_turns(chat)
    await undo_turn(chat.runtime, chat.session_id)  # third
    await rewind_to(chat.runtime, chat.session_id, 1)  # first and second
    assert disk(chat.root) == states[0]
    assert (await redo_turn(chat.runtime, chat.session_id)).turns == 2
    assert disk(chat.root) == states[2]
    assert (await redo_turn(chat.runtime, chat.session_id)).prompt == "third"
    assert disk(chat.root) == states[3]


async def test_a_turn_number_out_of_range_is_one_line(chat: Chat):
    with pytest.raises(UndoError, match="Nothing to rewind"):
        await rewind_to(chat.runtime, chat.session_id, 1)
    await chat.run("only")
    with pytest.raises(UndoError, match=r"No turn 4: this session's turns are 1 to 1 \(/rewind lists them\)"):
        await rewind_to(chat.runtime, chat.session_id, 4)


@pytest.mark.parametrize("typed", ["two", "2 everything", "1 files extra", "-1"])
def test_bad_arguments_are_refused_with_the_usage(typed: str):
    with pytest.raises(UndoError, match=r"/rewind 2 files"):
        parse_rewind(typed)


def test_arguments_read():
    assert parse_rewind("") == (None, "both")
    assert parse_rewind(" 3 ") == (3, "both")
    assert parse_rewind("2 conversation") == (2, "conversation")


def test_headless_rewind_lists_rewinds_and_redoes(fake_llm: FakeOpenAI, workspace: Path):
    (workspace / ".opencode.json").write_text('{"lsp": {"python": {"disabled": true}}}')
    (workspace / "a.py").write_bytes(A_BEFORE)
    original = disk(workspace)
    for prompt, replies in (
        ("make b", [call("write", filePath="b.py", content="b\n")]),
        ("edit a", [call("view", filePath="a.py"), call("edit", filePath="a.py", oldString="a = 1", newString="a = 9")]),
        ("make d", [call("write", filePath="d.py", content="d\n")]),
    ):
        for reply in replies:
            fake_llm.reply(reply)
        fake_llm.reply(Text("done"))
        assert headless(workspace, prompt, fake_llm, yes=True, continue_last=prompt != "make b")[0] == 0
    after = disk(workspace)
    requests = len(fake_llm.requests)

    code, out, err = headless(workspace, "/rewind", fake_llm, continue_last=True)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == ["   1. make b", "   2. edit a", "   3. make d"]

    code, out, err = headless(workspace, "/rewind 1", fake_llm, continue_last=True)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "Rewound 3 turns (files and conversation), from: make b"
    assert disk(workspace) == original

    code, out, _ = headless(workspace, "/redo", fake_llm, continue_last=True, output_format="json")
    assert code == 0 and json.loads(out)["turns"] == 3
    assert disk(workspace) == after

    code, out, err = headless(workspace, "/rewind 7", fake_llm, continue_last=True)
    assert (code, out) == (1, "") and err.startswith("opencode: error: No turn 7") and err.count("\n") == 1
    assert len(fake_llm.requests) == requests  # no model call
