"""The agent loop end to end through the real litellm client and the local fake server:
real tools on files in a temp workspace, a real SQLite store, events on the real bus."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.llm.agent import AgentLoop, TurnResult
from app.llm.events import (
    ModelRetrying,
    SessionCompacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from app.llm.messages import SUMMARY_PREAMBLE
from app.llm.provider import Provider
from app.permission import PermissionReply, PermissionRequested, PermissionResolved
from app.runtime import Runtime
from app.store import FileVersionCreated
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.waiting import eventually


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), id=f"call_{name}_{len(json.dumps(arguments))}")


def request_text(request: dict) -> str:
    """Everything a request sent the model, as one string to search."""
    return json.dumps(request["messages"])


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


class Harness:
    """A runtime with the built-in tools and an AgentLoop talking to the fake server."""

    def __init__(self, runtime: Runtime, fake: FakeOpenAI, **loop_options) -> None:
        self.runtime = runtime
        self.fake = fake
        env = fake.env
        self.loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env=env, **loop_options)
        self.session_id = runtime.store.sessions.create(title="test").id
        self.events = runtime.bus.subscribe()

    async def run(self, prompt: str, **options) -> TurnResult:
        return await self.loop.run(self.session_id, prompt, model=self.fake.model, **options)

    def published(self, *types: type) -> list:
        return [event for event in self.events.drain() if not types or isinstance(event, types)]

    def stored(self) -> list:
        return self.runtime.store.messages.list(self.session_id)


@pytest.fixture
def harness(make_runtime, fake_llm):
    def make(policy: str = "headless-yes", config: dict | None = None, **loop_options) -> Harness:
        return Harness(make_runtime(policy=policy, config=config), fake_llm, **loop_options)

    return make


# -- the main flow -------------------------------------------------------------------------


async def test_prompt_edit_changes_file_records_history_and_publishes_events(harness, workspace: Path):
    (workspace / "greet.py").write_text("print('helo')\n")
    h = harness()
    h.fake.reply(Text("Let me look."), call("view", filePath="greet.py"))
    h.fake.reply(call("edit", filePath="greet.py", oldString="helo", newString="hello"))
    h.fake.reply(Text("Fixed "), Text("the typo."), usage=(40, 7))

    result = await h.run("fix the greeting")

    assert (workspace / "greet.py").read_text() == "print('hello')\n"
    assert result.reason == "stop"
    assert result.response == "Fixed the typo."
    assert result.files_changed == ["greet.py"]
    assert result.usage == {
        "prompt_tokens": 60, "completion_tokens": 17, "cache_read_tokens": 0, "cache_write_tokens": 0
    }
    history = h.runtime.store.history.versions(h.session_id, "greet.py")
    assert [(v.version, v.content) for v in history] == [
        ("initial", "print('helo')\n"),
        ("v1", "print('hello')\n"),
    ]

    events = h.published()
    kinds = [
        type(e)
        for e in events
        if isinstance(e, TurnStarted | ToolCallStarted | ToolCallFinished | TurnFinished | FileVersionCreated)
    ]
    assert kinds == [
        TurnStarted,
        ToolCallStarted, ToolCallFinished,  # view
        ToolCallStarted, FileVersionCreated, FileVersionCreated, ToolCallFinished,  # edit: initial, v1
        TurnFinished,
    ]  # fmt: skip
    edit_finished = [e for e in events if isinstance(e, ToolCallFinished) and e.tool == "edit"][0]
    assert not edit_finished.error and edit_finished.metadata["additions"] == 1
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me look.", "Fixed ", "the typo."]
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert finished == [TurnFinished(h.session_id, "Fixed the typo.", "stop")]

    # The model saw each tool's result in the next request, paired with its call.
    assert "print('helo')" in tool_messages(h.fake.requests[1])[0]["content"]
    assert [m["role"] for m in h.fake.requests[2]["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "tool",
    ]  # fmt: skip


async def test_stored_parts_follow_the_documented_shape(harness, workspace: Path):
    (workspace / "a.txt").write_text("one\n")
    h = harness()
    h.fake.reply(Text("Reading."), call("view", filePath="a.txt"))
    h.fake.reply(Text("It says one."))

    await h.run("what is in a.txt?")

    roles_and_parts = [(m.role, [p["type"] for p in m.parts]) for m in h.stored()]
    assert roles_and_parts == [
        ("user", ["text"]),
        ("assistant", ["text", "tool_call", "finish"]),
        ("tool", ["tool_result"]),
        ("assistant", ["text", "finish"]),
    ]
    assistant, tool = h.stored()[1], h.stored()[2]
    tool_call = assistant.parts[1]
    assert tool_call == {
        "type": "tool_call",
        "id": tool_call["id"],
        "name": "view",
        "arguments": '{"filePath": "a.txt"}',
    }
    result = tool.parts[0]
    assert result["call_id"] == tool_call["id"] and result["name"] == "view" and result["error"] is False
    assert "one" in result["output"] and result["metadata"]["path"] == "a.txt"
    assert assistant.parts[2] == {"type": "finish", "reason": "tool_calls"}
    assert all(m.finished_at is not None for m in h.stored()[1:])


async def test_directory_delete_records_every_file_in_history(harness, workspace: Path):
    for name in ("a.txt", "b.txt", "sub/c.txt"):
        (workspace / "tmp" / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / "tmp" / name).write_text(f"content of {name}\n")
    h = harness()
    h.fake.reply(call("delete", path="tmp"))
    h.fake.reply(Text("Removed tmp/."))

    result = await h.run("remove the tmp directory")

    assert not (workspace / "tmp").exists()
    assert result.files_changed == ["tmp/a.txt", "tmp/b.txt", "tmp/sub/c.txt"]
    for name in ("a.txt", "b.txt", "sub/c.txt"):
        versions = h.runtime.store.history.versions(h.session_id, f"tmp/{name}")
        assert [(v.version, v.content, v.deleted) for v in versions] == [
            ("initial", f"content of {name}\n", False),
            ("v1", "", True),
        ]
    assert "3 files deleted" in tool_messages(h.fake.requests[1])[0]["content"]


# -- permissions ---------------------------------------------------------------------------


async def test_a_denial_reaches_the_model_and_skips_the_other_calls(
    harness, workspace: Path, permission_answers
):
    (workspace / "keep.txt").write_text("precious\n")
    (workspace / "other.txt").write_text("other\n")
    h = harness(policy="interactive")
    answers = permission_answers(h.runtime, PermissionReply("deny", "keep.txt is needed by the build"))
    h.fake.reply(call("delete", path="keep.txt"), call("delete", path="other.txt"))
    h.fake.reply(Text("Understood, I left both files."))

    result = await h.run("clean up")

    assert (workspace / "keep.txt").exists() and (workspace / "other.txt").exists()
    assert [r.subject for r in answers.requests] == ["keep.txt"]  # the second call was never asked
    denial, skipped = tool_messages(h.fake.requests[1])
    assert "keep.txt is needed by the build" in denial["content"]
    assert skipped["content"] == "skipped: an earlier call in this message was denied"
    assert result.response == "Understood, I left both files."
    assert result.files_changed == []
    finished = h.published(ToolCallFinished)
    assert [(e.tool, e.error) for e in finished] == [("delete", True), ("delete", True)]


async def test_agent_permission_overrides_from_config_apply(harness, workspace: Path):
    (workspace / "main.go").write_text("package main\n")
    h = harness(config={"agents": {"coder": {"permission": {"delete": {"*.go": "deny"}}}}})
    h.fake.reply(call("delete", path="main.go"))
    h.fake.reply(Text("The rules forbid that."))

    await h.run("delete main.go")

    assert (workspace / "main.go").exists()
    assert "forbid delete on main.go" in tool_messages(h.fake.requests[1])[0]["content"]


# -- malformed calls -----------------------------------------------------------------------


async def test_malformed_arguments_and_unknown_tools_come_back_as_errors(harness, workspace: Path):
    h = harness()
    h.fake.reply(
        ToolCall("view", '{"filePath": "a.txt"', id="call_bad"),
        ToolCall("teleport", '{"to": "mars"}', id="call_unknown"),
        ToolCall("view", '{"file": "a.txt"}', id="call_wrong_param"),
    )
    h.fake.reply(Text("I will fix my call."))

    result = await h.run("read a.txt")

    assert result.reason == "stop"
    bad_json, unknown, wrong_param = (m["content"] for m in tool_messages(h.fake.requests[1]))
    assert "not valid JSON" in bad_json
    assert "Unknown tool 'teleport'" in unknown and "view" in unknown
    assert "filePath is required" in wrong_param and "file is not a parameter" in wrong_param
    # The malformed arguments are replayed as "{}" so the provider accepts the history.
    replayed = [m for m in h.fake.requests[1]["messages"] if m["role"] == "assistant"][0]
    assert replayed["tool_calls"][0]["function"]["arguments"] == "{}"
    assert [m.parts[0]["error"] for m in h.stored() if m.role == "tool"] == [True]


async def test_calls_sharing_one_id_each_get_their_own_result(harness, workspace: Path):
    """Some local servers number calls per message ("call_0" for every message) or repeat
    one id; every call must still be answered, and paired with its own result."""
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    h = harness()
    h.fake.reply(
        ToolCall("view", '{"filePath": "a.txt"}', id="call_0", index=0),
        ToolCall("view", '{"filePath": "b.txt"}', id="call_0", index=1),
    )
    h.fake.reply(Text("read both"))

    await h.run("read a.txt and b.txt")

    replayed = [m for m in h.fake.requests[1]["messages"] if m["role"] == "assistant"][0]
    call_ids = [c["id"] for c in replayed["tool_calls"]]
    results = tool_messages(h.fake.requests[1])
    assert len(set(call_ids)) == 2 and [m["tool_call_id"] for m in results] == call_ids
    assert "alpha" in results[0]["content"] and "beta" in results[1]["content"]


# -- provider trouble ----------------------------------------------------------------------


async def test_a_rate_limit_is_retried_and_announced(harness):
    h = harness()
    h.fake.fail(429, "slow down", retry_after="0")
    h.fake.reply(Text("Here I am."))

    result = await h.run("hello")

    assert result.response == "Here I am." and result.reason == "stop"
    retries = h.published(ModelRetrying)
    assert len(retries) == 1 and retries[0].attempt == 1 and "slow down" in retries[0].reason
    assert len(h.fake.requests) == 2


async def test_a_provider_failure_fails_the_turn_and_the_session_goes_on(harness):
    h = harness()
    h.fake.fail(401, "bad key", type_="invalid_request_error")
    h.fake.reply(Text("Working again."))

    failed = await h.run("hello")
    assert failed.reason == "failed" and "rejected the API key" in failed.error
    assert [e.error for e in h.published(TurnFailed)] == [failed.error]
    last = h.stored()[-1]
    assert last.role == "assistant" and last.parts[-1]["reason"] == "failed"

    again = await h.run("hello again")
    assert again.response == "Working again."
    assert [m["role"] for m in h.fake.requests[1]["messages"]] == ["system", "user", "user"]


async def test_an_answer_cut_mid_stream_is_kept_and_the_failure_says_so(harness):
    h = harness()
    h.fake.reply(Text("Half an "), Text("answer"), cut_after=2)
    h.fake.reply(Text("Whole again."))

    failed = await h.run("hello")
    assert failed.reason == "failed" and "dropped in the middle of its answer" in failed.error
    assert h.stored()[-1].parts[0] == {"type": "text", "text": "Half an "}

    assert (await h.run("go on")).response == "Whole again."
    kept = [m for m in h.fake.requests[1]["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in kept] == ["Half an "]


# -- usage ---------------------------------------------------------------------------------


async def test_usage_is_added_to_the_session_and_published(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness()
    h.fake.reply(call("view", filePath="a.txt"), usage=(100, 10))
    h.fake.reply(Text("done"), usage=(130, 4))

    await h.run("look")

    session = h.runtime.store.sessions.get(h.session_id)
    assert (session.prompt_tokens, session.completion_tokens) == (230, 14)
    updates = h.published(UsageUpdated)
    assert [(u.prompt_tokens, u.completion_tokens) for u in updates] == [(100, 10), (130, 4)]
    assert all(u.context_window > 0 for u in updates)


# -- limits and concurrency ----------------------------------------------------------------


async def test_the_step_limit_ends_a_turn_that_keeps_calling_tools(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness(max_steps=2)
    h.fake.reply(call("view", filePath="a.txt"))
    h.fake.reply(call("view", filePath="a.txt"))
    h.fake.reply(Text("never requested"))

    result = await h.run("loop forever")

    assert result.reason == "max_steps"
    assert len(h.fake.requests) == 2 and h.fake.pending == 1
    assert h.published(TurnFinished)[0].reason == "max_steps"
    assert h.stored()[-1].parts == [{"type": "finish", "reason": "max_steps"}]


async def test_file_changing_calls_run_one_after_another_in_order(harness, workspace: Path):
    (workspace / "a.txt").write_text("one\n")
    h = harness()
    h.runtime.records.record_read(h.session_id, workspace / "a.txt")
    h.fake.reply(
        call("edit", filePath="a.txt", oldString="one", newString="two"),
        call("edit", filePath="a.txt", oldString="two", newString="three"),
    )
    h.fake.reply(Text("done"))

    await h.run("count up")

    assert (workspace / "a.txt").read_text() == "three\n"
    order = [(type(e).__name__, e.call_id) for e in h.published(ToolCallStarted, ToolCallFinished)]
    first, second = order[0][1], order[2][1]
    assert order == [
        ("ToolCallStarted", first), ("ToolCallFinished", first),
        ("ToolCallStarted", second), ("ToolCallFinished", second),
    ]  # fmt: skip


# -- cancellation --------------------------------------------------------------------------


async def wait_for(subscription, kind: type, timeout: float = 120.0):
    async def first():
        async for event in subscription:
            if isinstance(event, kind):
                return event

    return await asyncio.wait_for(first(), timeout)


async def test_cancel_mid_stream_keeps_the_partial_answer_and_the_session_usable(harness):
    h = harness()
    h.fake.reply(
        Text("Part one. "), Text("Part two."), hang_after=2
    )  # role chunk, "Part one. ", then silence
    h.fake.reply(Text("Fresh answer."))
    watcher = h.runtime.bus.subscribe(TextDelta)

    turn = asyncio.create_task(h.run("write an essay"))
    await wait_for(watcher, TextDelta)
    assert h.loop.cancel(h.session_id)
    result = await turn

    assert result.reason == "cancelled" and result.response == ""
    assert len(h.published(TurnCancelled)) == 1
    partial = h.stored()[-1]
    assert partial.parts == [
        {"type": "text", "text": "Part one. "},
        {"type": "finish", "reason": "cancelled"},
    ]
    assert not h.loop.is_running(h.session_id)

    again = await h.run("shorter please")
    assert again.response == "Fresh answer."
    sent = h.fake.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == "Part one. "


async def turn_mid_reply(h: Harness) -> asyncio.Task:
    """A turn whose reply has begun to stream, then hangs."""
    h.fake.reply(Text("Hello "), Text("world"), hang_after=2)
    watcher = h.runtime.bus.subscribe(TextDelta)
    turn = asyncio.create_task(h.run("hi"))
    await wait_for(watcher, TextDelta)
    return turn


async def test_cancel_twice_still_ends_the_turn_as_cancelled(harness):
    h = harness()
    turn = await turn_mid_reply(h)
    assert h.loop.cancel(h.session_id) and h.loop.cancel(h.session_id)  # ^C pressed twice

    assert (await turn).reason == "cancelled"
    assert turn.cancelling() == 0


async def test_cancel_mid_bash_kills_the_process_and_leaves_valid_history(harness, workspace: Path):
    h = harness()
    h.fake.reply(call("bash", command="echo $$ > sleeper.pid && exec sleep 30"))
    h.fake.reply(Text("Next turn works."))
    watcher = h.runtime.bus.subscribe(ToolCallStarted)

    turn = asyncio.create_task(h.run("wait a while"))
    await wait_for(watcher, ToolCallStarted)
    pid_file = workspace / "sleeper.pid"
    await eventually(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the sleeper's pid file")
    pid = int(pid_file.read_text())
    assert Path(f"/proc/{pid}").exists()
    h.loop.cancel(h.session_id)
    result = await asyncio.wait_for(turn, 120)

    assert result.reason == "cancelled"
    # killed (SIGKILL to the group) and reaped by the loop's child watcher: no process remains
    await eventually(lambda: not Path(f"/proc/{pid}").exists(), what=f"the end of process {pid}")
    tool_result = [m for m in h.stored() if m.role == "tool"][-1].parts[0]
    assert tool_result["error"] and tool_result["output"].startswith("cancelled")
    assert h.stored()[-1].parts == [{"type": "finish", "reason": "cancelled"}]

    again = await h.run("are you there?")
    assert again.response == "Next turn works."
    sent = h.fake.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]


async def test_cancel_resolves_a_pending_permission_question_as_denied(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness(policy="interactive")
    h.fake.reply(call("delete", path="a.txt"))
    asked = h.runtime.bus.subscribe()

    turn = asyncio.create_task(h.run("delete a.txt"))
    await wait_for(asked, PermissionRequested)
    h.loop.cancel(h.session_id)
    result = await turn

    assert result.reason == "cancelled"
    assert (workspace / "a.txt").exists()
    assert h.runtime.permissions.pending() == []
    resolved = [e for e in asked.drain() if isinstance(e, PermissionResolved)]
    assert resolved and not resolved[0].reply.allowed


@pytest.mark.parametrize("stopping", [False, True])
async def test_cancelling_the_task_itself_saves_state_and_propagates(harness, stopping):
    """Also when `cancel` is stopping the turn at the same time (a server closing the
    connection of a turn it has just cancelled): the two arrive as one CancelledError, and
    the task still ends, rather than taking both for the turn's own stop and going on to
    answer a closed connection."""
    h = harness()
    turn = await turn_mid_reply(h)
    if stopping:
        h.loop.cancel(h.session_id)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert len(h.published(TurnCancelled)) == 1
    assert h.stored()[-1].parts[-1] == {"type": "finish", "reason": "cancelled"}
    assert not h.loop.is_running(h.session_id)


# -- compaction ----------------------------------------------------------------------------


async def test_a_nearly_full_context_is_compacted_and_the_turn_goes_on(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness()
    window = 128_000  # litellm does not know the fake model: the default window applies
    h.fake.reply(call("view", filePath="a.txt"), usage=(int(window * 0.95), 10))
    h.fake.reply(Text("SUMMARY: the user asked to read a.txt; it holds x."))
    h.fake.reply(Text("a.txt holds x."))

    result = await h.run("read a.txt")

    assert result.response == "a.txt holds x."
    summarizer_request, continued = h.fake.requests[1], h.fake.requests[2]
    assert summarizer_request.get("tools") is None
    assert "read a.txt" in request_text(summarizer_request)
    assert [m["role"] for m in continued["messages"]] == ["system", "user"]
    assert continued["messages"][1]["content"].startswith(SUMMARY_PREAMBLE)
    assert "SUMMARY: the user asked" in continued["messages"][1]["content"]
    session = h.runtime.store.sessions.get(h.session_id)
    summary = h.runtime.store.messages.get(session.summary_message_id)
    assert summary.parts[0]["text"].startswith("SUMMARY:")
    assert [e.summary_message_id for e in h.published(SessionCompacted)] == [summary.id]


async def test_compaction_happens_at_most_once_per_turn(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness()
    huge = (int(128_000 * 0.95), 10)
    h.fake.reply(call("view", filePath="a.txt"), usage=huge)
    h.fake.reply(Text("SUMMARY"))
    h.fake.reply(call("view", filePath="a.txt"), usage=huge)

    result = await h.run("read a.txt")

    assert result.reason == "failed"
    assert "still too long" in result.error and "start a new session" in result.error
    assert len(h.fake.requests) == 3


async def test_auto_compact_false_never_compacts(harness, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    h = harness(config={"autoCompact": False})
    h.fake.reply(call("view", filePath="a.txt"), usage=(int(128_000 * 0.95), 10))
    h.fake.reply(Text("done"))

    await h.run("read a.txt")

    assert len(h.fake.requests) == 2
    assert h.runtime.store.sessions.get(h.session_id).summary_message_id is None


# -- the system prompt ---------------------------------------------------------------------


async def test_context_files_and_agent_tools_reach_the_model(harness, workspace: Path):
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "style.md").write_text("Tabs, never spaces.\n")
    h = harness(config={"contextPaths": ["docs/style.md"]})
    h.fake.reply(Text("ok"))

    await h.run("hi")

    system = h.fake.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert "Always answer in haiku." in system["content"] and "Tabs, never spaces." in system["content"]
    assert "delete tool" in system["content"]  # spec 000's guidance
    names = [t["function"]["name"] for t in h.fake.requests[0]["tools"]]
    assert names == [
        "view",
        "ls",
        "glob",
        "grep",
        "diagnostics",
        "write",
        "edit",
        "multiedit",
        "patch",
        "delete",
        "bash",
        "bash_output",
        "bash_kill",
        "todowrite",
        "todoread",
        "webfetch",
        "task",
    ]


async def test_claude_md_cursorrules_and_context_directories_reach_the_model(harness, workspace: Path):
    (workspace / "CLAUDE.md").write_text("Run make test.\n")
    (workspace / ".cursorrules").write_text("Prefer small functions.\n")
    rules = workspace / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "b.mdc").write_text("Rule B.\n")
    (rules / "a.mdc").write_text("Rule A.\n")
    h = harness(config={"contextPaths": [".cursor/rules/", "CLAUDE.md"]})
    h.fake.reply(Text("ok"))

    await h.run("hi")

    system = h.fake.requests[0]["messages"][0]["content"]
    texts = ("Run make test.", "Prefer small functions.", "Rule A.", "Rule B.")
    found = [system.find(text) for text in texts]
    assert -1 not in found and found == sorted(found)
    assert system.count("Run make test.") == 1
    assert "# .cursor/rules/a.mdc" in system


async def test_a_context_length_error_compacts_and_retries_the_request(harness):
    h = harness()
    h.fake.fail(
        400,
        "This model's maximum context length is 8192 tokens",
        code="context_length_exceeded",
        type_="invalid_request_error",
    )
    h.fake.reply(Text("SUMMARY: greeted."))
    h.fake.reply(Text("Hello after compacting."))

    result = await h.run("hello")

    assert result.response == "Hello after compacting."
    assert len(h.published(SessionCompacted)) == 1
    assert h.fake.requests[2]["messages"][1]["content"].startswith(SUMMARY_PREAMBLE)


def test_the_loop_and_headless_modules_import_neither_litellm_nor_textual():
    code = (
        "import sys, app.llm.agent, app.headless.run, app.tools.task; "
        "print(sorted(m for m in ('litellm', 'textual') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"
