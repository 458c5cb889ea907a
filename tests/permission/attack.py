"""What the attack tests share: the attack suite's config, a workspace holding the files it
guards, and ways to call a tool as the agent would (in process, with --yes) or as a script
does (`opencode tool ... --yes`, a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.core.errors import OpencodeError
from app.runtime import Runtime

REPO = Path(__file__).resolve().parents[2]

ATTACK_RULES: dict[str, Any] = {
    "delete": {"*.go": "deny"},
    "bash": {"rm *": "deny", "git *": "allow"},
    "edit": {"secrets/*": "deny"},
}
GUARDED = {"secrets/key.txt": "s3cr3t\n", "main.go": "package main\n", "notes.txt": "notes\n"}


def attack_config(rules: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    """The config file's content: the attack rules (or ``rules``), language servers off."""
    return {"permission": {"rules": rules or ATTACK_RULES}, "lsp": {"python": {"disabled": True}}, **more}


def plant(root: Path, files: dict[str, str] = GUARDED) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside the data folder) with its bytes."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".opencode" not in path.relative_to(root).parts
    }


async def call(runtime: Runtime, name: str, arguments: dict[str, Any], *, read: tuple[str, ...] = ()) -> str:
    """Run one tool call as the agent does; returns its output, or the error's text.
    ``read``: files the session has viewed first (write and edit need it)."""
    ctx = runtime.context(runtime.store.sessions.create().id)
    for rel in read:
        ctx.records.record_read(ctx.session_id, runtime.workspace.root / rel)
    try:
        return (await runtime.tools[name].call(arguments, ctx)).output
    except OpencodeError as err:
        return f"ERROR: {err}"


def opencode_tool(root: Path, name: str, arguments: dict[str, Any], *options: str) -> dict[str, Any]:
    """`opencode tool NAME JSON --yes` in a real process; its JSON answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env.update(HOME=str(root.parent / "home"), LITELLM_LOCAL_MODEL_COST_MAP="True", OPENCODE_SANDBOX__MECHANISM="off")
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(root), "tool", name, json.dumps(arguments), "--yes", *options],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def permission_check(root: Path, tool: str, subject: str, *options: str) -> str:
    """`opencode permission check TOOL SUBJECT` in a real process; what it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env.update(HOME=str(root.parent / "home"), LITELLM_LOCAL_MODEL_COST_MAP="True", OPENCODE_SANDBOX__MECHANISM="off")
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(root), "permission", "check", tool, subject, *options],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout
