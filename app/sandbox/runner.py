"""Running a command inside the sandbox: the command line for the mechanism, the
session's private temp folder, and the placeholders bubblewrap mounts over.

A path that must not be made (`.opencode.json` before the project has one) is carved out
by bwrap with a mount, and a mount needs something to stand on: an empty folder is made
there before the command and removed after it, when it is still empty. A folder, also
for a file's name, because git does not see an empty folder: `git add -A` in the command
adds nothing of it. Landlock needs none: a folder leading to a carved-out path is never
granted itself.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator

from app.sandbox.bwrap import bwrap_argv
from app.sandbox.macos import seatbelt_profile
from app.sandbox.mechanisms import Mechanism
from app.sandbox.policy import Carve, SandboxPolicy

_tmpdirs: dict[str, str] = {}
_placeholders: Counter[str] = Counter()
_lock = threading.Lock()


def session_tmpdir(session_id: str) -> str:
    """The session's own temp folder (made on first use, removed when opencode exits):
    what `TMPDIR` is for its commands, so no other session or program shares it."""
    with _lock:
        folder = _tmpdirs.get(session_id)
        if folder is None or not os.path.isdir(folder):
            folder = os.path.realpath(tempfile.mkdtemp(prefix="opencode-sandbox-"))
            if not _tmpdirs:
                atexit.register(_remove_tmpdirs)
            _tmpdirs[session_id] = folder
        return folder


def _remove_tmpdirs() -> None:
    for folder in _tmpdirs.values():
        shutil.rmtree(folder, ignore_errors=True)


def sandboxed_argv(mechanism: Mechanism, policy: SandboxPolicy, argv: list[str]) -> list[str]:
    """The command line for bwrap or sandbox-exec (Landlock commands are started by its
    fork server: app.sandbox.landlock_server)."""
    if mechanism == "bwrap":
        return bwrap_argv(policy, argv, shutil.which("bwrap") or "bwrap")
    return ["/usr/bin/sandbox-exec", "-p", seatbelt_profile(policy), "/usr/bin/env", f"TMPDIR={policy.tmpdir}", *argv]


def landlock_policy(policy: SandboxPolicy) -> dict[str, object]:
    """What the Landlock fork server applies (app/sandbox/landlock_exec.py)."""
    return {
        "read": ["/"],
        "read_carved": [c.path for c in policy.carves if c.kind == "hidden"],
        "write": list(policy.write_roots),
        "write_carved": [c.path for c in policy.carves],
        "network": policy.network,
        "env": {"TMPDIR": policy.tmpdir},
    }


@contextlib.contextmanager
def placeholders(mechanism: Mechanism, policy: SandboxPolicy) -> Iterator[None]:
    """Hold a placeholder at each missing carve-out while the command runs (bwrap only)."""
    missing = [c for c in policy.carves if not c.exists] if mechanism == "bwrap" else []
    made = [carve for carve in missing if _hold(carve)]
    try:
        yield
    finally:
        for carve in made:
            _release(carve)


def _hold(carve: Carve) -> bool:
    with _lock:
        if _placeholders[carve.path] == 0:
            try:
                os.mkdir(carve.path, 0o755)
            except FileExistsError:
                return False  # made meanwhile by someone else: bound as it is
        _placeholders[carve.path] += 1
        return True


def _release(carve: Carve) -> None:
    with _lock:
        _placeholders[carve.path] -= 1
        if _placeholders[carve.path]:
            return
        del _placeholders[carve.path]
        with contextlib.suppress(OSError):
            os.rmdir(carve.path)  # only while empty
