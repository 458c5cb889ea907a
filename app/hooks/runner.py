"""Running hook commands: each one a shell process of its own, fed the event's JSON on
stdin, in the workspace folder, with ``CLAUDE_PROJECT_DIR`` and ``OPENCODE_PROJECT_DIR``
naming it, stopped (its whole process group) at its timeout. The commands of one event
run in parallel. Hooks are the user's own commands: they run outside the bash tool's
sandbox, as the user's shell would run them.

What each command said is read as Claude Code reads it (``HookReply``): exit 0 goes on
(its stdout may be JSON with ``decision``, ``continue``, ``hookSpecificOutput``...), exit
2 blocks with its stderr as the reason, any other code is an error the user is shown.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from app.core.child_environment import for_children
from app.core.shelter import sheltered
from app.hooks.config import Hook

MAX_OUTPUT = 64 * 1024
"""Characters of a hook's stdout or stderr kept; the rest is cut."""
PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "OPENCODE_PROJECT_DIR")


class HookReply(NamedTuple):
    """What one command answered."""

    hook: Hook
    exit_code: int | None
    """None: it did not end in time (or could not start) and was stopped."""
    stdout: str
    stderr: str
    data: dict[str, Any] | None
    """Its stdout as a JSON object, when it is one (exit 0 only)."""

    @property
    def blocks(self) -> bool:
        """Exit 2, or JSON saying ``"decision": "block"``."""
        return self.exit_code == 2 or (self.data or {}).get("decision") == "block"

    @property
    def reason(self) -> str:
        """Why it blocks: its stderr for exit 2, else the JSON ``reason``."""
        if self.exit_code == 2:
            return self.stderr.strip() or f"the hook {self.hook.command!r} exited with code 2"
        return str((self.data or {}).get("reason") or f"the hook {self.hook.command!r} blocked it")

    def specific(self, key: str) -> Any:
        """A field of ``hookSpecificOutput``, or None."""
        found = (self.data or {}).get("hookSpecificOutput")
        return found.get(key) if isinstance(found, dict) else None

    @property
    def failure(self) -> str | None:
        """One line for the user when the command failed without blocking, else None."""
        if self.exit_code is None:
            return self.stderr
        if self.exit_code in (0, 2):
            return None
        detail = _first_line(self.stderr) or _first_line(self.stdout)
        return f"hook {self.hook.command!r} ({self.hook.event}) failed with exit code {self.exit_code}" + (
            f": {detail}" if detail else ""
        )


async def run_hooks(hooks: Sequence[Hook], event: Mapping[str, Any], root: Path) -> list[HookReply]:
    """Run every hook at once with ``event`` on its stdin; their replies, in hook order."""
    if not hooks:
        return []
    stdin = json.dumps(event, default=str).encode("utf-8")
    environment = {**for_children(), **dict.fromkeys(PROJECT_VARIABLES, str(root))}
    return list(await asyncio.gather(*(run_hook(hook, stdin, root, environment) for hook in hooks)))


async def run_hook(hook: Hook, stdin: bytes, root: Path, environment: Mapping[str, str]) -> HookReply:
    """One command, to its end or its timeout."""
    try:
        process = await sheltered(
            asyncio.create_subprocess_shell(
                hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=root,
                env=environment,
                start_new_session=True,  # its own process group: a timeout stops whatever it started
            ),
            _stop_and_reap,
        )
    except OSError as error:
        return HookReply(hook, None, "", f"hook {hook.command!r} ({hook.event}) could not start: {error}", None)
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), hook.timeout)
    except TimeoutError:
        _stop(process)
        await process.wait()
        line = f"hook {hook.command!r} ({hook.event}) was stopped after its timeout of {hook.timeout:g} s"
        return HookReply(hook, None, "", line, None)
    except BaseException:
        _stop(process)
        raise
    stdout, stderr = _text(out), _text(err)
    return HookReply(hook, process.returncode, stdout, stderr, _json_object(stdout) if process.returncode == 0 else None)


def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the command's process group (it leads it: started in a new session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def _stop_and_reap(process: asyncio.subprocess.Process) -> None:
    _stop(process)
    await process.wait()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")[:MAX_OUTPUT]


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
