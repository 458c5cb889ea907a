"""Fixtures for MCP tests: runtimes whose config starts the real server in calc_server.py
(a Python process speaking MCP over stdio), disconnected at the end of each test, and the
same server over streamable HTTP."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from app.runtime import Runtime
from tests.waiting import eventually

CALC_SERVER = Path(__file__).parent / "calc_server.py"


def calc_server(**extra: Any) -> dict[str, Any]:
    """The mcpServers entry that starts calc_server.py over stdio."""
    return {"command": sys.executable, "args": [str(CALC_SERVER)], **extra}


@asynccontextmanager
async def calc_over_http() -> AsyncIterator[str]:
    """calc_server.py answering streamable HTTP on a free local port, until the block
    ends; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(CALC_SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        await _answering_http(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)


async def _answering_http(port: int) -> None:
    """Until the server answers HTTP (an open port alone can precede the app being ready)."""

    async def answers() -> bool:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            status = await reader.readline()
            writer.close()
        except OSError:
            return False
        return status.startswith(b"HTTP/")

    await eventually(answers, what=f"an HTTP answer from the MCP server on port {port}")


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
