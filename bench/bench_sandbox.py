"""What the sandbox adds to a bash call: 50 runs of `true` through the bash tool's runner,
unsandboxed and under each mechanism this machine has, with the policy made for each
call as the bash tool makes it. The target is under 15 ms added per call.

Three figures per mechanism: the median wall time; the fastest wall time, which is what
a call takes when no other program holds the CPUs; and the CPU time per call (the mean
of the 50) of opencode and every process the call started: the children it reaped, and
the Landlock fork server with the commands it reaped. Wall time counts the waits for a
CPU on a busy machine; CPU time does not, so it is the steadier figure where other
programs share the machine."""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from app.bus import Bus
from app.config import Config
from app.permission import PermissionService
from app.sandbox.landlock_server import LANDLOCK_SERVER
from app.sandbox.mechanisms import bwrap_problem, landlock_abi
from app.sandbox.policy import build_policy
from app.sandbox.runner import landlock_policy, placeholders, sandboxed_argv, session_tmpdir
from app.tools.bash import run_shell

RUNS = 50
RULES = {"edit": {"secrets/*": "deny"}, "view": {"private/*": "deny"}, "bash": {"*": "allow"}}
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ms() -> float:
    """CPU time so far of this process, the children it reaped and the fork server."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + children.ru_utime + children.ru_stime
    if LANDLOCK_SERVER.pid is not None:
        with open(f"/proc/{LANDLOCK_SERVER.pid}/stat", encoding="ascii") as file:
            fields = file.read().rpartition(")")[2].split()
        total += sum(int(value) for value in fields[11:15]) / TICKS  # utime stime cutime cstime
    return total * 1000


async def measure(root: Path, mechanism: str | None) -> tuple[float, float, float]:
    """(median wall ms, fastest wall ms, mean CPU ms) per call."""
    config = Config.model_validate({"permission": {"rules": RULES}})
    permissions = PermissionService(config, Bus())
    argv = ["/bin/sh", "-c", "true"]
    if mechanism == "landlock":  # the server starts once per opencode process, not per call
        policy = build_policy(config, permissions, root.as_posix(), "coder", None, session_tmpdir("bench"))
        await run_shell(argv, root, 30, landlock_policy(policy))
    times = []
    cpu_before = cpu_ms()
    for _ in range(RUNS):
        started = time.perf_counter()
        if mechanism is None:
            await run_shell(argv, root, 30)
        else:
            policy = build_policy(config, permissions, root.as_posix(), "coder", None, session_tmpdir("bench"))
            with placeholders(mechanism, policy):  # type: ignore[arg-type]
                if mechanism == "landlock":
                    await run_shell(argv, root, 30, landlock_policy(policy))
                else:
                    await run_shell(sandboxed_argv(mechanism, policy, argv), root, 30)  # type: ignore[arg-type]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times), (cpu_ms() - cpu_before) / RUNS


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "secrets").mkdir()
        (root / "secrets" / "key.txt").write_text("s3cr3t\n")
        wall, fastest, cpu = asyncio.run(measure(root, None))
        print(f"unsandboxed: wall {wall:.1f} ms (median of {RUNS}), fastest {fastest:.1f} ms; CPU {cpu:.1f} ms per call")
        available = {"bwrap": bwrap_problem() is None, "landlock": isinstance(landlock_abi(), int)}
        for mechanism, ok in available.items():
            if not ok:
                print(f"{mechanism}: not available here")
                continue
            took, least, used = asyncio.run(measure(root, mechanism))
            print(
                f"{mechanism}: wall {took:.1f} ms ({took - wall:+.1f}), fastest {least:.1f} ms ({least - fastest:+.1f}); "
                f"CPU {used:.1f} ms ({used - cpu:+.1f}) per call; in brackets: added (target: under 15 ms)"
            )


if __name__ == "__main__":
    main()
