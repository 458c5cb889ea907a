"""Which sandbox this machine gives bash commands: bubblewrap when it is installed and
works here, else Landlock when the kernel has it, else none (the judge alone).

Each is probed once per process: bwrap by running it with the options the bash tool
uses (user namespaces may be off, or a container may refuse mounts), Landlock by asking
the kernel for its ABI version (the system call fails on a kernel without it, or where
a seccomp filter hides it). On macOS, `sandbox-exec` runs a generated profile.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from typing import Literal

Mechanism = Literal["bwrap", "landlock", "seatbelt"]
Choice = Literal["auto", "bwrap", "landlock", "off"]
SYS_LANDLOCK_CREATE_RULESET = 444  # the generic number, the same on x86_64 and aarch64
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_NETWORK_ABI = 4
BWRAP_PROBE = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net",
    "--die-with-parent", "--new-session", "--cap-drop", "ALL", "true",
)  # fmt: skip


@dataclass(frozen=True)
class Availability:
    """The mechanism bash commands run under (None: the judge alone), and ``why`` in one
    line: what is used, or why nothing is."""

    mechanism: Mechanism | None
    why: str
    landlock_abi: int = 0

    @property
    def label(self) -> str:
        """For the status bar and `opencode sandbox`: "bwrap", "landlock", "off"."""
        return self.mechanism or "off"


@cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox here, or None when it can."""
    path = shutil.which("bwrap")
    if path is None:
        return "bwrap is not installed"
    try:
        probe = subprocess.run([path, *BWRAP_PROBE], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not be run ({err})"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot make a sandbox here ({said[-1] if said else f'exit {probe.returncode}'})"
    return None


@cache
def landlock_abi() -> int | str:
    """The kernel's Landlock ABI version, or why there is none."""
    if not sys.platform.startswith("linux"):
        return "Landlock is Linux's"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)
    )
    if version < 0:
        err = ctypes.get_errno()
        return f"Landlock is not available ({os.strerror(err)}; it needs Linux 5.13 or later, enabled at boot)"
    return int(version)


def detect(choice: Choice = "auto") -> Availability:
    """The mechanism ``choice`` (sandbox.mechanism) gives on this machine."""
    if choice == "off":
        return Availability(None, "sandbox.mechanism is off")
    if sys.platform == "darwin":
        if os.path.exists("/usr/bin/sandbox-exec"):
            return Availability("seatbelt", "sandbox-exec (macOS)")
        return Availability(None, "sandbox-exec is missing")
    problems = []
    if choice in ("auto", "bwrap"):
        problem = bwrap_problem()
        if problem is None:
            return Availability("bwrap", "bubblewrap")
        problems.append(problem)
        if choice == "bwrap":
            return Availability(None, problem)
    abi = landlock_abi()
    if isinstance(abi, int):
        network = "" if abi >= LANDLOCK_NETWORK_ABI else ", TCP not restricted (ABI < 4)"
        return Availability("landlock", f"Landlock ABI {abi}{network}", abi)
    problems.append(abi)
    return Availability(None, "; ".join(problems))


def unavailable_notice(availability: Availability, choice: Choice, required: bool) -> str | None:
    """The one start-up line when bash commands run without the sandbox that was wanted
    (none when it was turned off: the user chose that)."""
    if availability.mechanism is not None or choice == "off":
        return None
    if required:
        return f"sandbox unavailable ({availability.why}): bash is refused (sandbox.required)"
    return (
        f"sandbox unavailable ({availability.why}): bash commands are judged by the permission rules alone; "
        "set sandbox.required to refuse bash instead"
    )
