"""The macOS sandbox: a `sandbox-exec` profile (Seatbelt's SBPL) with the same policy as
bubblewrap and Landlock on Linux. Rules are read in order and a later rule wins over an
earlier one that matches the same operation, so the carve-outs come after the grants.
Seatbelt matches paths as written, so a path that does not exist is denied as well as
one that does: no placeholder is needed.
"""

from __future__ import annotations

from app.sandbox.policy import SandboxPolicy

_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")


def quoted(path: str) -> str:
    """A string literal of SBPL: backslashes and double quotes escaped."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _filters(paths: list[str]) -> str:
    return " ".join(f"(subpath {quoted(path)})" for path in paths)


def seatbelt_profile(policy: SandboxPolicy) -> str:
    hidden = [c.path for c in policy.carves if c.kind == "hidden"]
    carved = [c.path for c in policy.carves]
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read mach-lookup ipc-posix-shm iokit-open pseudo-tty)",
        "(allow file-read*)",
    ]
    if hidden:
        lines.append(f"(deny file-read* {_filters(hidden)})")
    lines.append(
        f"(allow file-write* {_filters(list(policy.write_roots))} "
        + " ".join(f"(literal {quoted(device)})" for device in _DEVICES)
        + ")"
    )
    if carved:
        lines.append(f"(deny file-write* {_filters(carved)})")
    if policy.network:
        lines.append("(allow network*)")
    return "\n".join(lines) + "\n"
