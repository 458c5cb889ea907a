"""What hooks cost a tool call. With none configured the loop asks one dictionary
whether a hook selects the call, then runs it as before: the figures put a `view` call
run the way the loop runs it with no hooks beside the same call run directly, and, for
scale, the same call with one matching hook (`true`, a subprocess per call).
Run: .venv/bin/python bench/bench_hooks.py"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.config import Config  # noqa: E402
from app.llm.hook_steps import calls_hooked, run_hooked_call  # noqa: E402
from app.llm.provider import ToolCall  # noqa: E402
from app.llm.tool_calls import execute  # noqa: E402
from app.runtime import Runtime  # noqa: E402

CALLS = 400
HOOKED_CALLS = 40


async def median_ms(call: Callable[[], Awaitable[object]], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def runtime_in(folder: Path, home: Path) -> Runtime:
    config = Config.model_validate({"lsp": {"python": {"disabled": True}}})
    return Runtime.build(folder, config=config, policy="headless-yes", env={"HOME": str(home)})


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        (base / "ws").mkdir()
        (base / "home").mkdir()
        (base / "ws" / "a.py").write_text("".join(f"line {n}\n" for n in range(200)))
        call = ToolCall("call_1", "view", json.dumps({"filePath": "a.py"}))

        plain = runtime_in(base / "ws", base / "home")
        session = plain.store.sessions.create(title="bench").id
        ctx = plain.context(session)
        tools = {"view": plain.tools["view"]}
        hooks = plain.hooks

        async def direct() -> None:
            await execute(call, tools, ctx)

        async def as_the_loop() -> None:
            if calls_hooked(hooks, call.name):
                await run_hooked_call(hooks, call, tools, ctx)
            else:
                await execute(call, tools, ctx)

        await direct()  # warm the tool's imports and the file cache
        without = await median_ms(direct, CALLS)
        no_hooks = await median_ms(as_the_loop, CALLS)
        check_us = await median_ms(lambda: asyncio.sleep(0, calls_hooked(hooks, "view")), CALLS) * 1000
        plain.close()

        settings = {"hooks": {"PostToolUse": [{"matcher": "view", "hooks": [{"type": "command", "command": "true"}]}]}}
        (base / "home" / ".claude").mkdir()
        (base / "home" / ".claude" / "settings.json").write_text(json.dumps(settings))
        hooked = runtime_in(base / "ws", base / "home")
        ctx = hooked.context(hooked.store.sessions.create(title="bench").id)
        with_hook = await median_ms(lambda: run_hooked_call(hooked.hooks, call, tools, ctx), HOOKED_CALLS)
        hooked.close()

    print(f"view call, run directly (baseline):           {without:7.3f} ms")
    print(f"view call, as the loop runs it, no hooks:     {no_hooks:7.3f} ms  ({no_hooks / without:.2f} of baseline)")
    print(f"  the hook check alone (incl. an await):      {check_us:7.1f} µs")
    print(f"view call with one matching hook (`true`):    {with_hook:7.3f} ms  (a subprocess per hook)")


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main())
