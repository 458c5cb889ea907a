"""What the sandbox adds to a bash call: the median of 50 runs of `true` through the bash
tool's runner, unsandboxed and under each mechanism this machine has, and the time
added. The target is under 15 ms added per call."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from app.bus import Bus
from app.config import Config
from app.permission import PermissionService
from app.sandbox.mechanisms import bwrap_problem, landlock_abi
from app.sandbox.policy import build_policy
from app.sandbox.runner import placeholders, sandboxed_argv, session_tmpdir
from app.tools.bash import run_shell

RUNS = 50
RULES = {"edit": {"secrets/*": "deny"}, "view": {"private/*": "deny"}, "bash": {"*": "allow"}}


async def median_ms(root: Path, mechanism: str | None) -> float:
    config = Config.model_validate({"permission": {"rules": RULES}})
    permissions = PermissionService(config, Bus())
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        argv = ["/bin/sh", "-c", "true"]
        if mechanism is None:
            await run_shell(argv, root, 30)
        else:
            policy = build_policy(config, permissions, root.as_posix(), "coder", None, session_tmpdir("bench"))
            with placeholders(mechanism, policy):  # type: ignore[arg-type]
                await run_shell(sandboxed_argv(mechanism, policy, argv), root, 30)  # type: ignore[arg-type]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "secrets").mkdir()
        (root / "secrets" / "key.txt").write_text("s3cr3t\n")
        base = asyncio.run(median_ms(root, None))
        print(f"unsandboxed: {base:.1f} ms per call (median of {RUNS})")
        available = {"bwrap": bwrap_problem() is None, "landlock": isinstance(landlock_abi(), int)}
        for mechanism, ok in available.items():
            if not ok:
                print(f"{mechanism}: not available here")
                continue
            took = asyncio.run(median_ms(root, mechanism))
            print(f"{mechanism}: {took:.1f} ms per call, {took - base:+.1f} ms added (target < 15 ms)")


if __name__ == "__main__":
    main()
