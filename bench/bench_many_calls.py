"""One model message asking for many webfetch calls: the loop runs the first
MAX_CALLS_PER_MESSAGE and answers the rest with an error, so the process's peak memory
follows the capped calls plus one short result per call asked, not the pages of every
call at once. Each count runs in a fresh process (its peak resident memory is its own),
against a local page server and the local fake OpenAI server, through the real litellm
client. Run: .venv/bin/python bench/bench_many_calls.py"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.llm.fake_openai

COUNTS = (64, 1_000, 10_000)
PAGE = b"a small page\n" * 200


async def _one_turn(count: int) -> float:
    from app.config import Config
    from app.llm.agent import AgentLoop
    from app.llm.provider import Provider
    from app.runtime import Runtime
    from tests.llm.fake_openai import FakeOpenAI, Reply, Text, ToolCall
    from tests.tools.web_server import web_server

    fake = FakeOpenAI().start()
    routes = {"/page": lambda handler: handler.reply(200, "text/plain", PAGE)}
    config = {"autoCompact": False, "tools": {"webfetch": {"allowPrivate": True}}, "lsp": {"python": {"disabled": True}}}
    try:
        with web_server(routes) as pages, tempfile.TemporaryDirectory() as folder:
            runtime = Runtime.build(Path(folder), config=Config.model_validate(config), policy="headless-yes")
            loop = AgentLoop(runtime, Provider(), env=fake.env)
            session = runtime.store.sessions.create(title="bench").id  # no title request
            arguments = json.dumps({"url": pages.url("/page")})
            calls = tuple(ToolCall("webfetch", arguments, id=f"call_{n}", fragments=1) for n in range(count))
            fake.push(Reply(calls, calls_per_chunk=500))
            fake.reply(Text("done"))
            started = time.perf_counter()
            result = await loop.run(session, "fetch", model=fake.model)
            assert result.reason == "stop", result.error
            elapsed = time.perf_counter() - started
            runtime.close()
            return elapsed
    finally:
        fake.close()


def main() -> None:
    if len(sys.argv) == 2:  # a child: one count
        elapsed = asyncio.run(_one_turn(int(sys.argv[1])))
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{peak_mb:.0f} {elapsed:.1f}")
        return
    print(f"{'calls':>8} {'peak RSS MB':>12} {'turn s':>8}")
    for count in COUNTS:
        out = subprocess.run([sys.executable, __file__, str(count)], capture_output=True, text=True, check=True)
        peak, elapsed = out.stdout.split()
        print(f"{count:>8,} {peak:>12} {elapsed:>8}")


if __name__ == "__main__":
    main()
