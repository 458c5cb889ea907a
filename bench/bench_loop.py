"""The agent loop's own cost: time per tool round-trip against the local fake OpenAI server
(through the real litellm client) with the model's time taken out, memory after 500
streamed messages in one session (resident memory, so SQLite's cache and the loop's
in-memory transcript count), and the time to build a step's request in sessions of 200
and 5,000 messages, extended from the last step's (as the loop does) beside built from
the whole history. Run: .venv/bin/python bench/bench_loop.py"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.llm.fake_openai

from app.config import Config  # noqa: E402
from app.llm.agent import AgentLoop  # noqa: E402
from app.llm.chat_history import ChatHistories  # noqa: E402
from app.llm.messages import text_part, tool_call_part, tool_result_part  # noqa: E402
from app.llm.provider import Provider  # noqa: E402
from app.llm.scripted import Script, ScriptedProvider  # noqa: E402
from app.runtime import Runtime  # noqa: E402
from app.tools.base import Tool, ToolContext, ToolResult  # noqa: E402
from app.tools.view import ViewTool  # noqa: E402
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall  # noqa: E402

ROUND_TRIPS = 40
ROUND_TRIP_TARGET_MS = 20.0
MESSAGES = 500
WORDS_PER_MESSAGE = 60
MEMORY_TARGET_MB = 50.0
SESSION_SIZES = (200, 5_000)
REQUESTS = 20


class TimedProvider:
    """Counts the time the loop spends on the model: waiting for its next event, and the
    bookkeeping tasks litellm starts after each call (success logging, cost, cache), which
    would otherwise run in the loop's next pause and be charged to it."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.waiting = 0.0

    async def stream(self, **request: Any) -> AsyncIterator[Any]:
        before = asyncio.all_tasks()
        events = self.inner.stream(**request)
        while True:
            start = time.perf_counter()
            try:
                event = await anext(events)
            except StopAsyncIteration:
                await asyncio.gather(*(asyncio.all_tasks() - before - {asyncio.current_task()}))
                return
            finally:
                self.waiting += time.perf_counter() - start
            yield event


class TimedView(ViewTool):
    """The real view tool, timing its own runs so the tool's work can be shown apart."""

    running = 0.0

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        start = time.perf_counter()
        try:
            return await super().run(params, ctx)
        finally:
            TimedView.running += time.perf_counter() - start


def runtime_with(root: Path, tools: list[Tool]) -> Runtime:
    runtime = Runtime.build(root, config=Config(), policy="headless-yes")
    runtime.tools.update({tool.name: tool for tool in tools})
    return runtime


async def round_trips(root: Path) -> tuple[float, float, float]:
    """(ms per round-trip excluding model time, of which the view tool, total ms per round-trip)."""
    (root / "small.txt").write_text("one line\n")
    fake = FakeOpenAI().start()
    runtime = runtime_with(root, [TimedView()])
    try:
        provider = TimedProvider(Provider(retry_base_delay=0.001))
        env = {"OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": fake.base_url}
        loop = AgentLoop(runtime, provider, env=env, max_steps=ROUND_TRIPS + 1)
        view = ToolCall("view", json.dumps({"filePath": "small.txt"}))
        fake.reply(Text("warm-up"))  # the first call pays for importing litellm
        await loop.run(runtime.store.sessions.create("warm-up").id, "hi", model=fake.model)
        for _ in range(ROUND_TRIPS):
            fake.reply(view)
        fake.reply(Text("done"))
        session_id = runtime.store.sessions.create("bench").id
        provider.waiting, TimedView.running = 0.0, 0.0
        start = time.perf_counter()
        await loop.run(session_id, "view it many times", model=fake.model)
        total = time.perf_counter() - start
    finally:
        runtime.close()
        fake.close()
    per_trip = (total - provider.waiting) / ROUND_TRIPS * 1000
    return per_trip, TimedView.running / ROUND_TRIPS * 1000, total / ROUND_TRIPS * 1000


def rss_mb() -> float:
    """This process's resident memory now (Linux /proc), in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


async def streamed_messages(root: Path) -> tuple[float, float, float]:
    """(MB of resident memory gained over MESSAGES streamed answers, MB resident after,
    seconds taken)."""
    text = " ".join(f"word{i}" for i in range(WORDS_PER_MESSAGE))
    script = Script.model_validate({"turns": [{"steps": [{"text": text}]}]})
    runtime = runtime_with(root, [])
    try:
        loop = AgentLoop(runtime, ScriptedProvider(script), env={})
        session_id = runtime.store.sessions.create("memory").id
        await loop.run(session_id, "warm up", model="scripted/bench")
        gc.collect()
        before = rss_mb()
        start = time.perf_counter()
        for number in range(MESSAGES):
            await loop.run(session_id, f"message {number}", model="scripted/bench")
        elapsed = time.perf_counter() - start
        gc.collect()
        after = rss_mb()
        stored = sum(m.role == "assistant" for m in runtime.store.messages.list(session_id))
        assert stored == MESSAGES + 1, stored
    finally:
        runtime.close()
    return after - before, after, elapsed


def add_turns(runtime: Runtime, session_id: str, count: int) -> None:
    """``count`` messages in turns as a real session has them: a prompt, a reply calling
    view, the file it read, a longer markdown reply with a 25-line code block."""
    code = "\n".join(f"    value_{line} = compute({line})  # step {line}" for line in range(25))
    messages = runtime.store.messages
    for number in range(count // 4):
        messages.add(session_id, "user", [text_part(f"Prompt {number}: look at module {number} and explain it")])
        call = tool_call_part(f"call_{number}", "view", json.dumps({"filePath": f"module_{number}.py"}))
        messages.add(session_id, "assistant", [text_part("Let me read it."), call], model="scripted/bench")
        output = "\n".join(f"{line:>6}\tline {line} of module {number}" for line in range(30))
        messages.add(session_id, "tool", [tool_result_part(f"call_{number}", "view", output)])
        reply = f"## Module {number}\n\nIt computes values:\n\n```python\n{code}\n```\n\nEach step is cached."
        messages.add(session_id, "assistant", [text_part(reply)], model="scripted/bench")


async def request_times(root: Path, count: int) -> tuple[float, float]:
    """(ms to build a step's request from the whole history, ms to extend the last step's)
    in a session of ``count`` messages, one message added before each request."""
    script = Script.model_validate({"turns": [{"steps": [{"text": "ok"}]}], "contextWindow": 10**9})
    runtime = runtime_with(root, [])
    try:
        loop = AgentLoop(runtime, ScriptedProvider(script), env={})
        session_id = runtime.store.sessions.create("long").id
        add_turns(runtime, session_id, count)
        turn = loop._new_turn(session_id, "coder", "scripted/bench", "")
        await loop._request(turn)  # the transcript is read and the history built once
        timings: dict[bool, float] = {True: 0.0, False: 0.0}
        for number in range(REQUESTS):
            for extended in (False, True):
                runtime.store.messages.add(session_id, "user", [text_part(f"steer {number} {extended}")])
                if not extended:
                    loop._histories = ChatHistories()  # nothing kept: the whole history is converted
                start = time.perf_counter()
                await loop._request(turn)
                timings[extended] += time.perf_counter() - start
    finally:
        runtime.close()
    return timings[False] / REQUESTS * 1000, timings[True] / REQUESTS * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trips_dir, memory_dir = Path(tmp, "trips"), Path(tmp, "memory")
        trips_dir.mkdir()
        memory_dir.mkdir()
        overhead, tool, total = asyncio.run(round_trips(trips_dir))
        grown, after, elapsed = asyncio.run(streamed_messages(memory_dir))
        requests = {}
        for count in SESSION_SIZES:
            session_dir = Path(tmp, f"session-{count}")
            session_dir.mkdir()
            requests[count] = asyncio.run(request_times(session_dir, count))
    print(
        f"loop overhead per tool round-trip (model time excluded, {ROUND_TRIPS} view calls): "
        f"{overhead:.1f} ms (target <= {ROUND_TRIP_TARGET_MS:.0f} ms; view tool itself {tool:.2f} ms, "
        f"with model time {total:.1f} ms)"
    )
    print(
        f"memory grown over {MESSAGES} streamed messages ({WORDS_PER_MESSAGE} deltas each) in one session: "
        f"{grown:.1f} MB RSS (target <= {MEMORY_TARGET_MB:.0f} MB; process RSS {after:.0f} MB, "
        f"{elapsed / MESSAGES * 1000:.1f} ms a turn)"
    )
    for count, (whole, extended) in requests.items():
        print(
            f"a step's request in a {count:,}-message session: {extended:.2f} ms extended from the last step's, "
            f"{whole:.2f} ms built from the whole history ({REQUESTS} requests, one message added before each)"
        )


if __name__ == "__main__":
    main()
