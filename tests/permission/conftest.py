"""Helpers for the service and CLI tests: a real `Config` built from rules in file format."""

from __future__ import annotations

import pytest

from app.bus import Bus
from app.config import Config

SPEC_000_DELETE = {"*": "ask", "tmp/*": "allow", "*.go": "deny"}


def make_config(rules: dict | None = None, agents: dict[str, dict] | None = None) -> Config:
    """`rules` is `permission.rules`; `agents` maps an agent name to its `permission`."""
    return Config.model_validate(
        {
            "permission": {"rules": rules or {}},
            "agents": {name: {"permission": permission} for name, permission in (agents or {}).items()},
        }
    )


@pytest.fixture
def bus() -> Bus:
    return Bus()
