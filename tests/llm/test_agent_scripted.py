"""Agent-loop features driven by the scripted model (offline, deterministic): read-only
calls running together, the explorer sub-agent, background titles, batched writes,
compaction against a small declared window, and model choice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from app.core.errors import OpencodeError
from app.llm.agent import AgentLoop, ModelNotConfiguredError, NothingToCompactError, SessionBusyError
from app.llm.events import SessionCompacted, SubagentStarted, TextDelta, ToolCallFinished
from app.llm.messages import to_chat
from app.llm.models import PROVIDER_ENV_VARS
from app.llm.scripted import Script, ScriptedProvider
from app.llm.title import TITLE_INSTRUCTION
from app.runtime import Runtime
from app.store import MessageUpdated
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from tests.llm.scripted_turns import summarizer_turn
from tests.waiting import eventually

MODEL = "scripted/test"


class RendezvousParams(ToolParams):
    name: str = Field(description="who arrives")


class RendezvousTool(Tool):
    """A read-only tool that returns only once ``expected`` calls are inside it at the same
    time: it succeeds when the loop runs them concurrently and times out otherwise."""

    name = "rendezvous"
    params = RendezvousParams
    description = "test tool"
    read_only: ClassVar[bool] = True

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.arrived = 0
        self.all_here = asyncio.Event()

    async def run(self, params: RendezvousParams, ctx: ToolContext) -> ToolResult:
        self.arrived += 1
        if self.arrived == self.expected:
            self.all_here.set()
        await asyncio.wait_for(self.all_here.wait(), timeout=60)
        return ToolResult(f"{params.name} met the others")


def scripted(turns: list[dict], **top) -> ScriptedProvider:
    return ScriptedProvider(Script.model_validate({"turns": turns, **top}))


def make_loop(runtime: Runtime, turns: list[dict], **options) -> AgentLoop:
    top = {key: options.pop(key) for key in ("contextWindow", "chunkDelay") if key in options}
    return AgentLoop(runtime, scripted(turns, **top), env={}, **options)


def new_session(runtime: Runtime, title: str = "test") -> str:
    return runtime.store.sessions.create(title=title).id


async def test_read_only_calls_of_one_message_run_concurrently(runtime: Runtime):
    """Three views and a rendezvous would deadlock if run one by one; here the rendezvous
    stands in for a read-only built-in (the loop only looks at Tool.read_only)."""
    rendezvous = RendezvousTool(expected=3)
    runtime.tools["view"] = rendezvous  # the explorer's first tool name, played by the test tool
    loop = AgentLoop(runtime, scripted([{"steps": [
        {"toolCalls": [{"name": "view", "arguments": {"name": n}} for n in ("a", "b", "c")]},
        {"text": "all met"},
    ]}]), env={})  # fmt: skip
    session_id = new_session(runtime)
    finished = runtime.bus.subscribe(ToolCallFinished)

    result = await loop.run(session_id, "meet", model=MODEL, agent="explorer")

    assert result.response == "all met"
    assert [(e.output, e.error) for e in finished.drain()] == [
        ("a met the others", False), ("b met the others", False), ("c met the others", False),
    ]  # fmt: skip


class BrokenTool(Tool):
    """A tool with a bug: every call raises something that is not a ToolError."""

    name = "write"  # plays the write tool below
    params = ToolParams
    description = "test tool"

    async def run(self, params: ToolParams, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("index out of range in the tool")


async def test_a_tool_raising_an_unexpected_exception_is_an_error_result_and_the_turn_goes_on(
    runtime: Runtime, workspace: Path
):
    (workspace / "a.txt").write_text("alpha\n")
    runtime.tools["write"] = BrokenTool()  # a file-changing name, played by the broken tool
    loop = AgentLoop(runtime, scripted([{"steps": [
        {"toolCalls": [{"name": "write", "arguments": {}}, {"name": "view", "arguments": {"filePath": "a.txt"}}]},
        {"text": "worked around it"},
    ]}]), env={})  # fmt: skip
    session_id = new_session(runtime)
    finished = runtime.bus.subscribe(ToolCallFinished)

    result = await loop.run(session_id, "go", model=MODEL)

    assert (result.reason, result.response) == ("stop", "worked around it")
    broken, view = finished.drain()
    assert broken.error
    assert broken.output == "write failed unexpectedly (RuntimeError: index out of range in the tool)"
    assert not view.error and "alpha" in view.output
    tool_message = [m for m in runtime.store.messages.list(session_id) if m.role == "tool"][0]
    assert [part["error"] for part in tool_message.parts] == [True, False]


# -- the explorer sub-agent ----------------------------------------------------------------

EXPLORER_TURNS = [
    {"match": "^Where is the greeting", "steps": [
        {"toolCalls": [{"name": "task", "arguments": {"description": "find greeting", "prompt": "EXPLORE: which file greets?"}}]},
        {"text": "The explorer says: greet.py."},
    ]},
    {"match": "^EXPLORE", "steps": [
        {"toolCalls": [{"name": "grep", "arguments": {"pattern": "Hello"}}, {"name": "view", "arguments": {"filePath": "greet.py"}}]},
        {"text": "greet.py line 1 greets."},
    ]},
]  # fmt: skip


async def test_the_task_tool_runs_the_explorer_in_a_child_session(runtime: Runtime, workspace: Path):
    (workspace / "greet.py").write_text("print('Hello')\n")
    loop = make_loop(runtime, EXPLORER_TURNS)
    session_id = new_session(runtime)
    finished = runtime.bus.subscribe(ToolCallFinished)
    started = runtime.bus.subscribe(SubagentStarted)

    result = await loop.run(session_id, "Where is the greeting?", model=MODEL)

    assert result.response == "The explorer says: greet.py."
    [child] = runtime.store.sessions.children(session_id)
    assert child.title == "find greeting"
    task_result = [e for e in finished.drain() if e.tool == "task"][0]
    assert task_result.output.startswith("greet.py line 1 greets.\n\ntask_id: " + child.id)
    assert task_result.metadata == {
        "task_id": child.id, "session_id": child.id, "subagent_type": "explorer", "reason": "stop"
    }
    # Front-ends learn the child's id while it runs, tied to the parent's tool call.
    [announced] = started.drain()
    assert (announced.session_id, announced.call_id, announced.child_session_id) == (
        session_id, task_result.call_id, child.id
    )
    assert (announced.agent, announced.description) == ("explorer", "find greeting")
    # The explorer's reads are its own: recorded for the child session, not the parent.
    assert runtime.records.last_read(child.id, workspace / "greet.py") is not None
    assert runtime.records.last_read(session_id, workspace / "greet.py") is None
    child_roles = [m.role for m in runtime.store.messages.list(child.id)]
    assert child_roles == ["user", "assistant", "tool", "assistant"]


async def test_the_explorer_is_offered_only_read_tools(runtime: Runtime, workspace: Path):
    (workspace / "a.txt").write_text("x\n")
    loop = make_loop(runtime, [{"steps": [
        {"toolCalls": [{"name": "delete", "arguments": {"path": "a.txt"}}]},
        {"text": "could not"},
    ]}])  # fmt: skip
    session_id = new_session(runtime)
    finished = runtime.bus.subscribe(ToolCallFinished)

    await loop.run(session_id, "delete a.txt", model=MODEL, agent="explorer")

    [event] = finished.drain()
    assert event.error and event.output == "Unknown tool 'delete': use one of view, ls, glob, grep"
    assert (workspace / "a.txt").exists()


# -- titles --------------------------------------------------------------------------------


class GatedProvider(ScriptedProvider):
    """Holds the title request until the test opens the gate: shows the turn never waits."""

    def __init__(self, script: Script) -> None:
        super().__init__(script)
        self.gate = asyncio.Event()

    async def stream(self, *, model: str, messages: list[dict], tools, **options) -> AsyncIterator:
        if messages[-1]["content"].startswith(TITLE_INSTRUCTION):
            await self.gate.wait()
        async for event in super().stream(model=model, messages=messages, tools=tools, **options):
            yield event


async def test_the_title_is_generated_in_the_background_without_blocking_the_turn(runtime: Runtime):
    gated = GatedProvider(Script.model_validate({"turns": [
        {"match": "^Write the title", "steps": [{"text": '"Fix the login redirect."\n'}]},
        {"steps": [{"text": "on it"}]},
    ]}))  # fmt: skip
    loop = AgentLoop(runtime, gated, env={})
    session_id = new_session(runtime, title="")

    result = await loop.run(session_id, "the login page redirects forever", model=MODEL)

    assert result.response == "on it"
    assert runtime.store.sessions.get(session_id).title == ""  # still waiting, the turn did not
    gated.gate.set()
    await loop.wait_background()
    assert runtime.store.sessions.get(session_id).title == "Fix the login redirect"


async def test_a_failed_title_falls_back_to_the_prompt_and_later_prompts_do_not_retitle(runtime: Runtime):
    loop = make_loop(runtime, [{"match": "^(?!Write the title)", "steps": [{"text": "ok"}]}])
    session_id = new_session(runtime, title="")

    await loop.run(session_id, "Refactor the payment module so that refunds are idempotent", model=MODEL)
    await loop.wait_background()
    assert runtime.store.sessions.get(session_id).title == "Refactor the payment module so that refunds are…"

    runtime.store.sessions.update(session_id, title="Renamed by the user")
    await loop.run(session_id, "go on", model=MODEL)
    await loop.wait_background()
    assert runtime.store.sessions.get(session_id).title == "Renamed by the user"


# -- persistence ---------------------------------------------------------------------------


async def test_streamed_deltas_are_written_in_batches_not_per_token(runtime: Runtime):
    words = " ".join(f"w{i}" for i in range(400))
    loop = make_loop(runtime, [{"steps": [{"text": words}]}], flush_interval=60)
    session_id = new_session(runtime)
    events = runtime.bus.subscribe(TextDelta, MessageUpdated)

    await loop.run(session_id, "talk", model=MODEL)

    published = events.drain()
    deltas = [e for e in published if isinstance(e, TextDelta)]
    writes = [e for e in published if isinstance(e, MessageUpdated) and e.message.role == "assistant"]
    assert len(deltas) == 400
    assert len(writes) == 1 and writes[0].message.parts[0]["text"] == words  # the final write only


# -- compaction against the script's window ------------------------------------------------


async def test_a_small_declared_window_triggers_compaction_mid_turn(runtime: Runtime, workspace: Path):
    (workspace / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 1900)  # ~16,000 tokens once viewed
    loop = make_loop(
        runtime,
        [
            summarizer_turn("SUMMARY-1: big.txt was read."),
            {"match": "SUMMARY-1", "steps": [{"text": "Continuing after the summary."}]},
            {"steps": [{"toolCalls": [{"name": "view", "arguments": {"filePath": "big.txt"}}]}]},
        ],
        contextWindow=12_000,  # the first request (~6,000 tokens) fits; after the view it does not
    )
    session_id = new_session(runtime)
    compacted = runtime.bus.subscribe(SessionCompacted)

    result = await loop.run(session_id, "read big.txt", model=MODEL)

    assert result.response == "Continuing after the summary."
    [event] = compacted.drain()
    assert runtime.store.sessions.get(session_id).summary_message_id == event.summary_message_id
    roles = [m.role for m in runtime.store.messages.list(session_id)]
    assert roles == ["user", "assistant", "tool", "assistant", "assistant"]  # ..., summary, answer


async def test_compact_on_demand_stores_a_summary_that_the_next_request_starts_from(runtime: Runtime):
    loop = make_loop(
        runtime,
        [
            summarizer_turn("SUMMARY-2: we said hello."),
            {"steps": [{"text": "Hello back."}]},
        ],
    )
    session_id = new_session(runtime)
    await loop.run(session_id, "hello", model=MODEL)
    compacted = runtime.bus.subscribe(SessionCompacted)

    summary_id = await loop.compact(session_id, model=MODEL)

    [event] = compacted.drain()
    assert event.summary_message_id == summary_id
    assert runtime.store.sessions.get(session_id).summary_message_id == summary_id
    summary = runtime.store.messages.list(session_id)[-1]
    assert summary.id == summary_id and summary.parts[0]["text"] == "SUMMARY-2: we said hello."
    [sent] = to_chat(runtime.store.messages.list(session_id), summary_id)  # what the next request sends
    assert "SUMMARY-2" in sent["content"]


async def test_compact_refuses_an_empty_history_and_a_running_turn(runtime: Runtime):
    loop = make_loop(runtime, [{"steps": [{"text": "slow answer"}]}], chunkDelay=0.2)
    session_id = new_session(runtime)
    with pytest.raises(NothingToCompactError, match="Nothing to compact yet"):
        await loop.compact(session_id, model=MODEL)

    turn = asyncio.create_task(loop.run(session_id, "hello", model=MODEL))
    await eventually(lambda: loop.is_running(session_id), what="the turn's start")
    with pytest.raises(SessionBusyError, match="wait for it or cancel it, then compact"):
        await loop.compact(session_id, model=MODEL)
    await turn
    assert runtime.store.sessions.get(session_id).summary_message_id is None


# -- model choice and misuse ---------------------------------------------------------------


async def test_the_model_comes_from_the_flag_then_the_agent_config_then_the_environment(make_runtime):
    runtime = make_runtime(config={"agents": {"coder": {"model": "anthropic/from-config"}}})
    loop = AgentLoop(runtime, scripted([{"steps": [{"text": "x"}]}]), env={"OPENAI_API_KEY": "k"})
    assert loop.resolve_model("coder", "groq/from-flag") == "groq/from-flag"
    assert loop.resolve_model("coder") == "anthropic/from-config"
    assert loop.resolve_model("workhorse") == "openai/gpt-5"


async def test_no_model_anywhere_is_a_clear_error(runtime: Runtime):
    loop = AgentLoop(runtime, scripted([{"steps": [{"text": "x"}]}]), env={})
    with pytest.raises(ModelNotConfiguredError, match="No model is configured") as caught:
        await loop.run(new_session(runtime), "hi")
    message = str(caught.value)  # ACP and other front-ends show it as is: it must onboard too
    assert "\n" not in message and "OPENAI_BASE_URL" in message and "ollama_chat/" in message
    assert all(var in message for var in PROVIDER_ENV_VARS.values())
    assert runtime.store.messages.list(runtime.store.sessions.list()[0].id) == []


async def test_one_turn_at_a_time_per_session_and_known_agents_only(runtime: Runtime):
    loop = make_loop(runtime, [{"steps": [{"text": "slow answer " * 20}]}], chunkDelay=0.01)
    session_id = new_session(runtime)
    first = asyncio.create_task(loop.run(session_id, "one", model=MODEL))
    await eventually(lambda: loop.is_running(session_id), what="the first turn's start")
    with pytest.raises(SessionBusyError, match="already running a turn"):
        await loop.run(session_id, "two", model=MODEL)
    await first
    with pytest.raises(OpencodeError, match="unknown agent 'hacker'"):
        await loop.run(session_id, "three", model=MODEL, agent="hacker")


class CheckingProvider(ScriptedProvider):
    """Asserts on every request that the history the loop sends is exactly what the store
    holds, converted: the loop's in-memory transcript never drifts from the database."""

    def __init__(self, script: Script, runtime: Runtime) -> None:
        super().__init__(script)
        self.runtime = runtime
        self.checked = 0

    async def stream(self, *, model: str, messages: list[dict], tools, **options) -> AsyncIterator:
        if tools:  # a conversational request (title requests carry their own messages)
            [session] = [s for s in self.runtime.store.sessions.list() if s.title == "checked"]
            stored = self.runtime.store.messages.list(session.id)
            assert messages[1:] == to_chat(stored, session.summary_message_id)
            self.checked += 1
        async for event in super().stream(model=model, messages=messages, tools=tools, **options):
            yield event


async def test_every_request_matches_the_stored_history(runtime: Runtime, workspace: Path):
    (workspace / "b.txt").write_text("one\n")
    (workspace / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 1900)
    script = Script.model_validate({"turns": [
        summarizer_turn("SUMMARY"),
        {"match": "SUMMARY", "steps": [{"text": "after summary"}]},
        {"match": "^first", "steps": [
            {"text": "Reading.", "toolCalls": [{"name": "view", "arguments": {"filePath": "b.txt"}}, {"name": "nope", "arguments": {}}]},
            {"toolCalls": [{"name": "edit", "arguments": {"filePath": "b.txt", "oldString": "one", "newString": "two"}}]},
            {"text": "Edited."},
        ]},
        {"match": "^second", "steps": [
            {"toolCalls": [{"name": "view", "arguments": "{broken"}, {"name": "view", "arguments": {"filePath": "big.txt"}}]},
        ]},
    ], "contextWindow": 12_000})  # fmt: skip
    checking = CheckingProvider(script, runtime)
    loop = AgentLoop(runtime, checking, env={})
    session_id = new_session(runtime, title="checked")

    await loop.run(session_id, "first", model=MODEL)
    second = await loop.run(session_id, "second", model=MODEL)  # big.txt fills the window: compaction

    assert second.response == "after summary"
    assert checking.checked == 5  # 3 + 1 before and 1 after the summary (the summarizer's own is not)
    assert runtime.store.sessions.get(session_id).summary_message_id is not None


async def test_two_loops_on_one_runtime_see_each_others_messages(runtime: Runtime):
    """The TUI keeps one loop per provider: switching models mid-session must not make a
    loop send a history without the other loop's turns."""
    script = Script.model_validate(
        {"turns": [{"match": "^Write the title", "steps": [{"text": "t"}]}, {"steps": [{"text": "ok"}]}]}
    )
    first = CheckingProvider(script, runtime)
    second = CheckingProvider(script, runtime)
    loop_a, loop_b = AgentLoop(runtime, first, env={}), AgentLoop(runtime, second, env={})
    session_id = new_session(runtime, title="checked")

    await loop_a.run(session_id, "one", model=MODEL)
    await loop_b.run(session_id, "two", model=MODEL)
    await loop_a.run(session_id, "three", model=MODEL)

    assert (first.checked, second.checked) == (2, 1)  # each request matched the store
    texts = [m.parts[0].get("text") for m in runtime.store.messages.list(session_id)]
    assert texts == ["one", "ok", "two", "ok", "three", "ok"]


async def test_talking_in_a_tool_calls_session_makes_it_a_conversation(runtime: Runtime):
    loop = make_loop(runtime, [{"steps": [{"text": "ok"}]}])
    tool_run = runtime.store.sessions.create(title="opencode tool view", kind="tool")
    assert runtime.store.sessions.list() == []

    await loop.run(tool_run.id, "go on from here", model=MODEL)

    assert [(s.id, s.kind) for s in runtime.store.sessions.list()] == [(tool_run.id, "chat")]


async def test_every_round_of_tool_results_reaches_the_model_not_only_the_first(runtime: Runtime, workspace: Path):
    """to_chat once paired only the first assistant message with its results: every later
    call read as "cancelled" to the model."""
    (workspace / "a.txt").write_text("first file\n")
    (workspace / "b.txt").write_text("second file\n")
    loop = make_loop(runtime, [{"steps": [
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "a.txt"}}]},
        {"toolCalls": [{"name": "view", "arguments": {"filePath": "b.txt"}}]},
        {"text": "read both"},
    ]}])  # fmt: skip
    session_id = new_session(runtime)

    await loop.run(session_id, "read", model=MODEL)

    sent = [m["content"] for m in to_chat(runtime.store.messages.list(session_id)) if m["role"] == "tool"]
    assert len(sent) == 2 and "first file" in sent[0] and "second file" in sent[1]
