"""Fixtures for MCP tests: runtimes whose config starts the real server in calc_server.py
(a Python process speaking MCP over stdio), disconnected at the end of each test."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.runtime import Runtime

CALC_SERVER = Path(__file__).parent / "calc_server.py"


def calc_server(**extra: Any) -> dict[str, Any]:
    """The mcpServers entry that starts calc_server.py over stdio."""
    return {"command": sys.executable, "args": [str(CALC_SERVER)], **extra}


@pytest.fixture
async def mcp_runtime(make_runtime) -> Callable[..., Runtime]:
    """``await mcp_runtime(servers, policy=..., **config)``: a runtime with those
    mcpServers, connected (wait_ready), closed after the test."""
    built: list[Runtime] = []

    async def make(servers: dict[str, Any], policy: str = "headless-yes", **config: Any) -> Runtime:
        runtime = make_runtime(policy, {"mcpServers": servers, **config})
        built.append(runtime)
        await runtime.mcp.wait_ready()
        return runtime

    yield make
    for runtime in built:
        await runtime.mcp.aclose()
