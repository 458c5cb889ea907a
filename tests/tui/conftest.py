"""Fixtures for driving the whole TUI: a real runtime on a temp workspace (interactive
permissions, so the modal is what answers), scripted models written to disk, and the
fake OpenAI-compatible server from tests/llm for flows that must reach a model."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from app.runtime import Runtime
from app.tui.app import OpencodeApp
from tests.llm.conftest import fake_llm  # noqa: F401 - re-exported fixture
from tests.waiting import POLL_SECONDS, eventually

NO_USER_THEMES = Path("/nonexistent/opencode-themes")


@pytest.fixture
def tui_runtime(make_runtime) -> Runtime:
    return make_runtime(policy="interactive")


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """``script(turns, chunk_delay=0)`` writes a scripted model and returns its model id."""
    made = 0

    def write(turns: list[dict[str, Any]], *, chunk_delay: float = 0.0, context_window: int = 200_000) -> str:
        nonlocal made
        made += 1
        path = tmp_path / f"script{made}.json"
        document = {"contextWindow": context_window, "chunkDelay": chunk_delay, "turns": turns}
        path.write_text(json.dumps(document), encoding="utf-8")
        return f"scripted/{path}"

    return write


@pytest.fixture
def make_app(request: pytest.FixtureRequest) -> Callable[..., OpencodeApp]:
    """``make_app(model=...)``: the real app on the test runtime; no provider keys in its
    environment and no user theme folder, so nothing on this machine changes it."""

    def make(
        model: str | None = None, *, runtime: Runtime | None = None, env: dict[str, str] | None = None, **kwargs: Any
    ) -> OpencodeApp:
        runtime = runtime or request.getfixturevalue("tui_runtime")
        return OpencodeApp(
            runtime.root, runtime=runtime, model=model, env=env or {}, user_themes=NO_USER_THEMES, **kwargs
        )

    return make


async def wait_until(pilot, predicate: Callable[[], object], *, timeout: float = 60.0) -> None:
    """Let the app run until ``predicate()`` is true (bus events, workers and the model
    all take a few loop turns); fails with the predicate's name after ``timeout``, which
    only a failing test reaches, so it is generous for a busy machine."""
    what = getattr(predicate, "__name__", repr(predicate))
    await eventually(predicate, timeout, what, pause=lambda: pilot.pause(POLL_SECONDS))


def session_opened(app: OpencodeApp, session_id: str) -> Callable[[Any], Awaitable[None]]:
    """A snapshot's ``run_before``: the prompt's cursor held still (its blink would differ
    from run to run), then the stored session ``session_id`` drawn."""

    async def show(pilot) -> None:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        await pilot.pause()

    return show


async def calls_opened(pilot, app: OpencodeApp) -> None:
    """Open every tool call the chat read back folded, once its result is drawn, as
    enter on its header would (without moving the keyboard, so a picture keeps its focus)."""
    from app.tui.widgets.tool_render import ToolCallView

    views = list(app.query(ToolCallView))
    await wait_until(pilot, lambda: all(view.finished for view in views))
    for view in views:
        if view.folded:
            await view.toggle_body()
    await pilot.pause()


def palette_offers(app, text: str) -> bool:
    """The command palette is open with ``text`` in its highlighted command (its search
    runs in the background: enter before it lands would pick nothing)."""
    from textual.command import CommandList

    lists = app.screen.query(CommandList)
    if not lists or lists.first().highlighted is None:
        return False
    commands = lists.first()
    return text.lower() in str(commands.get_option_at_index(commands.highlighted).prompt).lower()
