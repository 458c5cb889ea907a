"""One python-lsp-server for the whole module that asks for it: starting pylsp costs
about a second, so the tests share a runtime (and its event loop) and each works on
its own files."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_asyncio

from app.config import Config
from app.runtime import Runtime
from app.tools.base import ToolContext

PYLSP = {"python": {"command": sys.executable, "args": ["-m", "pylsp"]}}
"""pylsp from this virtualenv, found without the venv being on PATH."""
GENEROUS_TIMEOUT = 20.0
"""The wait ends when diagnostics arrive; the margin is for a loaded machine."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pylsp_runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    root = tmp_path_factory.mktemp("lsp-ws")
    config = Config.model_validate({"lsp": PYLSP, "tools": {"lsp": {"diagnosticsTimeout": GENEROUS_TIMEOUT}}})
    runtime = Runtime.build(root, config=config, policy="headless-yes")
    yield runtime
    runtime.close()


@pytest.fixture
def pylsp_ctx(pylsp_runtime: Runtime) -> ToolContext:
    return pylsp_runtime.context(pylsp_runtime.store.sessions.create(title="lsp").id)


@pytest.fixture
def seen(pylsp_runtime: Runtime, pylsp_ctx: ToolContext) -> Callable[[str, str], Path]:
    """``seen("a.py", text)`` writes a file in the shared workspace, read by this session."""

    def make(rel: str, text: str) -> Path:
        path = pylsp_runtime.root / rel
        path.write_text(text)
        pylsp_ctx.records.record_read(pylsp_ctx.session_id, path)
        return path

    return make
