"""One `opencode -p` run as the command line asks for it.

Standard library only: the in-process run (app/headless/run.py) and the client that
attaches to `opencode serve` (app/serve/client.py, which must import neither litellm nor
the agent loop) take the same request, so what they honour cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class HeadlessRequest:
    prompt: str
    output_format: Literal["text", "json"] = "text"
    quiet: bool = False
    """No progress lines on stderr."""
    yes: bool = False
    """What would be asked is allowed (deny rules still apply)."""
    model: str | None = None
    continue_last: bool = False
    """Go on in the latest top-level session."""
    session_id: str | None = None
    """Go on in this session."""
    agent: str = "coder"
    """The primary agent that runs the turn."""
    trust_project_hooks: bool = False
    """Run the hooks the workspace's own files declare without the user's trust."""
