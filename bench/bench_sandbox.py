"""What the sandbox adds to a bash call: 50 runs of `true` through the bash tool's runner,
unsandboxed and under each mechanism this machine has, with the policy made for each
call as the bash tool makes it. The target is under 15 ms added per call.

The mechanisms take turns call by call, so that each meets the same load on a machine
other programs share. Three figures per mechanism: the median wall time; the fastest
wall time, what a call takes when no other program holds the CPUs; and the CPU time
per call (the mean of the 50) of opencode and every process the call started: the
children it reaped, and the Landlock fork server with the commands it reaped. Wall time
counts the waits for a CPU on a busy machine; CPU time does not, so it is the steadier
figure there."""

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
ARGV = ["/bin/sh", "-c", "true"]


def cpu_ms() -> float:
    """CPU time so far of this process, the children it reaped and the fork server."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + children.ru_utime + children.ru_stime
    if LANDLOCK_SERVER.pid is not None:
        with open(f"/proc/{LANDLOCK_SERVER.pid}/stat", encoding="ascii") as file:
            fields = file.read().rpartition(")")[2].split()
        total += sum(int(value) for value in fields[11:15]) / TICKS  # utime stime cutime cstime
    return total * 1000


async def one_call(root: Path, mechanism: str, config: Config, permissions: PermissionService) -> None:
    if mechanism == "unsandboxed":
        await run_shell(ARGV, root, 30)
        return
    policy = build_policy(config, permissions, root.as_posix(), "coder", None, session_tmpdir("bench"))
    with placeholders(mechanism, policy):  # type: ignore[arg-type]
        if mechanism == "landlock":
            await run_shell(ARGV, root, 30, landlock_policy(policy))
        else:
            await run_shell(sandboxed_argv(mechanism, policy, ARGV), root, 30)  # type: ignore[arg-type]


async def measure(root: Path, mechanisms: list[str]) -> dict[str, tuple[float, float, float]]:
    """Per mechanism: (median wall ms, fastest wall ms, mean CPU ms) per call."""
    config = Config.model_validate({"permission": {"rules": RULES}})
    permissions = PermissionService(config, Bus())
    if "landlock" in mechanisms:  # the server starts once per opencode process, not per call
        await one_call(root, "landlock", config, permissions)
    walls: dict[str, list[float]] = {name: [] for name in mechanisms}
    cpus: dict[str, float] = dict.fromkeys(mechanisms, 0.0)
    for _ in range(RUNS):
        for name in mechanisms:
            cpu, started = cpu_ms(), time.perf_counter()
            await one_call(root, name, config, permissions)
            walls[name].append((time.perf_counter() - started) * 1000)
            cpus[name] += cpu_ms() - cpu
    return {name: (statistics.median(walls[name]), min(walls[name]), cpus[name] / RUNS) for name in mechanisms}


def main() -> None:
    mechanisms = ["unsandboxed"]
    for name, ok in (("bwrap", bwrap_problem() is None), ("landlock", isinstance(landlock_abi(), int))):
        if ok:
            mechanisms.append(name)
        else:
            print(f"{name}: not available here")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "secrets").mkdir()
        (root / "secrets" / "key.txt").write_text("s3cr3t\n")
        figures = asyncio.run(measure(root, mechanisms))
    wall, fastest, cpu = figures["unsandboxed"]
    print(f"unsandboxed: wall {wall:.1f} ms (median of {RUNS}), fastest {fastest:.1f} ms; CPU {cpu:.1f} ms per call")
    for name in mechanisms[1:]:
        took, least, used = figures[name]
        print(
            f"{name}: wall {took:.1f} ms ({took - wall:+.1f}), fastest {least:.1f} ms ({least - fastest:+.1f}); "
            f"CPU {used:.1f} ms ({used - cpu:+.1f}) per call; in brackets: added (target: under 15 ms)"
        )


if __name__ == "__main__":
    main()
