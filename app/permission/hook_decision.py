"""What a PreToolUse hook said about the call being run (app/hooks): ``allow`` lets the
permission service skip a question the rules would ask, ``ask`` makes it ask even where
the rules allow. Neither overrides a deny rule or a protected path, which are refused
before any question. Held in a context variable the agent loop sets around one call, so
calls running together (and the sub-agents a call starts, which set their own) each see
only their own hook's answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

HookDecision = Literal["allow", "ask"] | None

_current: ContextVar[HookDecision] = ContextVar("opencode_hook_decision", default=None)


@contextmanager
def hook_decision(decision: HookDecision) -> Iterator[None]:
    """Within the block, permission questions see ``decision``."""
    token = _current.set(decision)
    try:
        yield
    finally:
        _current.reset(token)


def current_hook_decision() -> HookDecision:
    return _current.get()
