"""Sub-agents that write, end to end: the coder hands work to workhorses through `task`,
the real litellm client talks to a fake OpenAI server that answers each conversation by
its prompt (tests/llm/fake_routes.py), and the children change real files through the
change path, recorded in their own sessions."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest

from app import cli
from app.headless.run import EXIT_OK, run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.agent import AgentLoop
from app.llm.events import SubagentStarted, ToolCallFinished, ToolCallStarted, TurnCancelled
from app.llm.provider import Provider
from app.runtime import Runtime
from app.tools.revert import revert_file
from tests.llm.fake_openai import Reply, Text, ToolCall
from tests.llm.fake_routes import RoutedOpenAI

BOUND = 300.0
"""A generous bound on waits (the first model call of a process imports litellm, which a
busy machine makes slow), so a broken build fails instead of hanging."""


def call(name: str, call_id: str, **arguments: object) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), id=call_id)


def calls(*tool_calls: ToolCall) -> Reply:
    return Reply(tuple(tool_calls))


def text(answer: str) -> Reply:
    return Reply((Text(answer),))


def task(call_id: str, prompt: str, **arguments: object) -> ToolCall:
    return call("task", call_id, description=prompt.split(":")[0].lower(), prompt=prompt, **arguments)


def last_tool_output(body: dict) -> str:
    tools = [message for message in body["messages"] if message["role"] == "tool"]
    return str(tools[-1]["content"]) if tools else ""


@pytest.fixture
def routed():
    server = RoutedOpenAI().start()
    yield server
    server.close()


def loop_for(runtime: Runtime, server: RoutedOpenAI) -> AgentLoop:
    return AgentLoop(runtime, Provider(retry_base_delay=0.005), env=server.env)


# -- two workhorses at once ----------------------------------------------------------------


def test_two_workhorses_run_at_once_and_the_parent_reports_all_their_changes(workspace: Path, routed, capsys):
    (workspace / "a.txt").write_text("A = 1\n")
    (workspace / "b.txt").write_text("B = 1\n")
    (workspace / "c.txt").write_text("C = 1\n")
    routed.route(
        "PARENT",
        calls(
            task("t1", "CHILD-A: set A to 2 in a.txt", subagent_type="workhorse"),
            task("t2", "CHILD-B: set B to 2 in b.txt and delete c.txt", subagent_type="workhorse"),
        ),
        text("Both pieces are done."),
    )
    routed.route(
        "CHILD-A",
        calls(call("view", "a1", filePath="a.txt")),
        calls(call("edit", "a2", filePath="a.txt", oldString="A = 1", newString="A = 2")),
        text("a.txt now sets A = 2."),
    )
    routed.route(
        "CHILD-B",
        calls(call("view", "b1", filePath="b.txt")),
        calls(
            call("edit", "b2", filePath="b.txt", oldString="B = 1", newString="B = 2"),
            call("delete", "b3", path="c.txt"),
        ),
        text("b.txt sets B = 2; c.txt is gone."),
    )
    # Neither child's first request is answered until the other's has arrived: the two
    # tasks can only finish if they run at the same time.
    routed.meet("CHILD-A", "CHILD-B")

    out, err = io.StringIO(), io.StringIO()
    request = HeadlessRequest("PARENT: split the work", output_format="json", yes=True, model=routed.model)
    code = run_headless(workspace, request, env=routed.env, stdout=out, stderr=err)

    assert code == EXIT_OK, err.getvalue()
    payload = json.loads(out.getvalue())
    assert payload["response"] == "Both pieces are done."
    assert payload["files_changed"] == ["a.txt", "b.txt", "c.txt"]
    assert payload["files_deleted"] == ["c.txt"]
    assert (workspace / "a.txt").read_text() == "A = 2\n" and (workspace / "b.txt").read_text() == "B = 2\n"
    assert not (workspace / "c.txt").exists()
    # Usage and cost roll up: 2 parent calls, 3 of child A, 3 of child B, 10 + 5 tokens each.
    assert payload["usage"]["prompt_tokens"] == 80 and payload["usage"]["completion_tokens"] == 40
    # The child's calls are indented under the parent's task in the progress lines.
    assert "  → edit a.txt" in err.getvalue() and "  → delete c.txt" in err.getvalue()

    parent = payload["session_id"]
    runtime = Runtime.build(workspace, policy="headless")
    try:
        children = runtime.store.sessions.children(parent)
        assert sorted(child.title for child in children) == ["child-a", "child-b"]
        assert all(child.parent_id == parent for child in children)
        # Each change is recorded in the session of the child that made it.
        recorded = {c.path: c.session_id for c in runtime.store.history.list_latest_session_files(parent)}
        by_title = {child.title: child.id for child in children}
        assert recorded == {
            "a.txt": by_title["child-a"],
            "b.txt": by_title["child-b"],
            "c.txt": by_title["child-b"],
        }
        usage = runtime.store.sessions.tree_usage(parent)
        assert (usage.prompt_tokens, usage.completion_tokens) == (80, 40)
    finally:
        runtime.close()

    assert cli.main(["changes", "-C", str(workspace), "--session", parent, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["deleted"]) for f in listed["files"]] == [
        ("a.txt", False),
        ("b.txt", False),
        ("c.txt", True),
    ]


# -- the same file from the same read ------------------------------------------------------


def retry_if_stale(path: str, old: str, new: str, tag: str):
    """The child's third reply: after "modified since you last read it", read again; else done."""

    def reply(body: dict) -> Reply:
        if "modified since you last read it" in last_tool_output(body):
            return calls(call("view", f"{tag}-again", filePath=path))
        return text(f"{tag} done at once")

    return reply


async def test_two_workhorses_editing_one_file_from_one_read_lose_no_edit(
    make_runtime, workspace: Path, routed
):
    (workspace / "shared.py").write_text("first = 1\nmiddle = 0\nlast = 1\n")
    routed.route(
        "PARENT",
        calls(
            task("t1", "EDIT-FIRST: set first to 2", subagent_type="workhorse"),
            task("t2", "EDIT-LAST: set last to 2", subagent_type="workhorse"),
        ),
        text("done"),
    )
    for marker, old, new, tag in (
        ("EDIT-FIRST", "first = 1", "first = 2", "f"),
        ("EDIT-LAST", "last = 1", "last = 2", "l"),
    ):
        routed.route(
            marker,
            calls(call("view", f"{tag}1", filePath="shared.py")),
            calls(call("edit", f"{tag}2", filePath="shared.py", oldString=old, newString=new)),
            retry_if_stale("shared.py", old, new, tag),
            calls(call("edit", f"{tag}3", filePath="shared.py", oldString=old, newString=new)),
            text(f"{tag} done after a re-read"),
        )
    # Both have read the file before either edits it.
    routed.meet("EDIT-FIRST", "EDIT-LAST", request=1)
    runtime = make_runtime()
    finished = runtime.bus.subscribe(ToolCallFinished)
    loop = loop_for(runtime, routed)
    parent = runtime.store.sessions.create(title="race").id

    result = await asyncio.wait_for(loop.run(parent, "PARENT: race", model=routed.model), BOUND)

    assert result.reason == "stop"
    edits = [event for event in finished.drain() if event.tool == "edit"]
    assert (workspace / "shared.py").read_text() == "first = 2\nmiddle = 0\nlast = 2\n", [
        e.output for e in edits
    ]
    stale = [event for event in edits if event.error]
    assert len(stale) == 1 and "was modified since you last read it" in stale[0].output
    assert sum(not event.error for event in edits) == 2


# -- continuing a task -----------------------------------------------------------------------


async def test_task_id_continues_the_same_child_with_its_history(make_runtime, routed):
    def continue_the_task(body: dict) -> Reply:
        task_id = re.search(r"task_id: (\S+)", last_tool_output(body)).group(1)
        return calls(call("task", "again", description="follow up", prompt="and the tests?", task_id=task_id))

    routed.route(
        "FIRST-PROMPT",
        calls(task("t1", "RESEARCH: where is the greeting?")),
        text("found it"),
        continue_the_task,
        text("both answers in"),
    )
    routed.route("RESEARCH", text("greet.py line 1"), text("tests/test_greet.py"))
    runtime = make_runtime()
    loop = loop_for(runtime, routed)
    parent = runtime.store.sessions.create(title="resume").id
    started = runtime.bus.subscribe(SubagentStarted)

    await asyncio.wait_for(loop.run(parent, "FIRST-PROMPT: look", model=routed.model), BOUND)
    result = await asyncio.wait_for(loop.run(parent, "now the tests", model=routed.model), BOUND)

    assert result.response == "both answers in"
    [child] = runtime.store.sessions.children(parent)
    first, second = started.drain()
    assert first.child_session_id == second.child_session_id == child.id
    assert second.agent == "explorer" and second.call_id == "again"
    # The child's second request carries its first exchange.
    research = [body for body in routed.requests if body["messages"][1]["content"].startswith("RESEARCH")]
    assert len(research) == 2
    said = [(m["role"], m["content"]) for m in research[1]["messages"] if m["role"] != "system"]
    assert said == [
        ("user", "RESEARCH: where is the greeting?"),
        ("assistant", "greet.py line 1"),
        ("user", "and the tests?"),
    ]


async def test_a_task_id_of_another_session_or_none_is_refused_in_one_line(make_runtime, routed):
    runtime = make_runtime()
    other_parent = runtime.store.sessions.create(title="other").id
    foreign = runtime.store.sessions.create(title="foreign child", parent_id=other_parent).id
    routed.route(
        "TRY-IDS",
        calls(
            call("task", "x1", description="a", prompt="p", task_id=foreign),
            call("task", "x2", description="b", prompt="p", task_id="no-such-task"),
            call("task", "x3", description="c", prompt="p", subagent_type="coder"),
        ),
        text("refused"),
    )
    finished = runtime.bus.subscribe(ToolCallFinished)
    loop = loop_for(runtime, routed)
    parent = runtime.store.sessions.create(title="p").id

    await asyncio.wait_for(loop.run(parent, "TRY-IDS", model=routed.model), BOUND)

    outputs = [event.output for event in finished.drain() if event.tool == "task"]
    assert outputs[0] == (
        f"task: {foreign} is not a task_id of this session: pass one a task result of this session gave, "
        "or omit task_id to start a new task"
    )
    assert outputs[1].startswith("task: no-such-task is not a task_id of this session")
    assert outputs[2] == "task: unknown subagent_type 'coder': use one of explorer, workhorse"
    assert runtime.store.sessions.children(other_parent)[0].id == foreign
    assert runtime.store.sessions.children(parent) == []


# -- cancelling the parent -------------------------------------------------------------------


async def test_cancelling_the_parent_stops_both_running_children_leaving_no_partial_file(
    make_runtime, workspace: Path, routed
):
    big = "x = 1\n" * 100_000
    (workspace / "big.py").write_text("old\n")
    routed.route(
        "PARENT",
        calls(
            task("t1", "WRITER: rewrite big.py", subagent_type="workhorse"),
            task("t2", "WAITER: wait", subagent_type="workhorse"),
        ),
    )
    routed.route(
        "WRITER",
        calls(call("view", "w0", filePath="big.py")),
        calls(call("write", "w1", filePath="big.py", content=big)),
        Reply((Text("never"),), hang_after=0),
    )
    routed.route("WAITER", Reply((Text("thinking"),), hang_after=1))
    runtime = make_runtime()
    loop = loop_for(runtime, routed)
    parent = runtime.store.sessions.create(title="cancel").id
    started = runtime.bus.subscribe(ToolCallStarted)
    cancelled = runtime.bus.subscribe(TurnCancelled)

    turn = asyncio.create_task(loop.run(parent, "PARENT: go", model=routed.model))
    # Cancel while the writer's write is under way and the other child streams.
    async with asyncio.timeout(BOUND):
        async for event in started:
            if event.tool == "write":
                break
    assert loop.cancel(parent)
    result = await asyncio.wait_for(turn, BOUND)

    assert result.reason == "cancelled"
    children = runtime.store.sessions.children(parent)
    assert len(children) == 2
    ended = {event.session_id for event in cancelled.drain()}
    assert ended == {parent, *(child.id for child in children)}
    for child in children:
        last = runtime.store.messages.list(child.id)[-1]
        assert last.parts[-1] == {"type": "finish", "reason": "cancelled"}
        assert not loop.is_running(child.id)
    # The write landed whole or not at all, and no staged temp file is left.
    assert (workspace / "big.py").read_text() in ("old\n", big)
    assert [path.name for path in workspace.rglob("*") if ".opencode-tmp" in path.name] == []


async def test_a_child_s_change_is_reverted_from_the_parent_s_session(make_runtime, workspace: Path, routed):
    (workspace / "notes.txt").write_text("before\n")
    routed.route("PARENT", calls(task("t1", "WORK: rewrite notes", subagent_type="workhorse")), text("done"))
    routed.route(
        "WORK",
        calls(call("view", "w1", filePath="notes.txt")),
        calls(call("write", "w2", filePath="notes.txt", content="after\n"), call("write", "w3", filePath="new.txt", content="n\n")),
        text("rewrote it"),
    )
    runtime = make_runtime()
    parent = runtime.store.sessions.create(title="revert").id
    await asyncio.wait_for(loop_for(runtime, routed).run(parent, "PARENT: go", model=routed.model), BOUND)
    assert (workspace / "notes.txt").read_text() == "after\n"

    ctx = runtime.context(parent)
    await revert_file(ctx, "notes.txt", confirmed=True)
    await revert_file(ctx, "new.txt", confirmed=True)

    assert (workspace / "notes.txt").read_text() == "before\n" and not (workspace / "new.txt").exists()
    listed = {change.path: change.unchanged for change in runtime.store.history.list_latest_session_files(parent)}
    assert listed == {"notes.txt": True, "new.txt": True}
