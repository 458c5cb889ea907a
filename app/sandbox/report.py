"""`opencode sandbox`: the mechanism bash commands run under here, and the policy an
agent's commands get in a workspace (what they may write, what is carved out)."""

from __future__ import annotations

import os
from pathlib import Path

from app.agents.files import load_catalog
from app.bus import Bus
from app.config import load_config
from app.permission import PermissionService
from app.sandbox.mechanisms import detect
from app.sandbox.policy import build_policy
from app.sandbox.runner import session_tmpdir


def sandbox_report(root: Path, agent: str) -> str:
    config = load_config(root)
    availability = detect(config.sandbox.mechanism)
    if availability.mechanism is None:
        refused = "refused (sandbox.required)" if config.sandbox.required else "judged by the permission rules alone"
        return f"mechanism: none ({availability.why}): bash commands are {refused}"
    permissions = PermissionService(config, Bus(), agents=load_catalog(root, os.environ).rules())
    policy = build_policy(config, permissions, root.as_posix(), agent, None, session_tmpdir("report"))
    lines = [f"mechanism: {availability.label} ({availability.why})", *policy.lines()]
    return "\n".join(lines)
