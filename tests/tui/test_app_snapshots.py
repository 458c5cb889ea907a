"""How the app looks: the empty start, a reply frozen mid-stream, a narrow terminal and a
light theme. Everything shown comes from the store or from events published here, so
there are no clocks, ids or timing in the pictures."""

from __future__ import annotations

from app.core.diff import diff_stats
from app.llm.events import ReasoningDelta, TextDelta, TurnStarted, UsageUpdated
from app.runtime import Runtime
from app.tui.widgets.message_assistant import AssistantMessage
from tests.tui.chat_samples import NEW_APP, NOTES, OLD_APP, SAMPLES, store_tool_conversation
from tests.tui.conftest import calls_opened, session_opened, wait_until

STREAMED = (
    "Here is the plan for the **patch** tool:\n\n"
    "1. Parse every hunk before touching a file.\n"
    "2. Locate each hunk; refuse an ambiguous one.\n\n"
    "```python\ndef apply(patch: str) -> None:\n    for hunk in parse(patch):\n"
)


def record_history(runtime: Runtime, session_id: str) -> None:
    """Three changed files, one of them deleted, as the sidebar reads them."""
    history = runtime.store.history
    for path, old, new, deleted in (
        ("src/app.py", OLD_APP, NEW_APP, False),
        ("NOTES.md", "", NOTES, False),
        ("old/legacy.py", "x = 1\ny = 2\n", "", True),
    ):
        history.create(session_id, path, old)
        history.create_version(session_id, path, new, deleted=deleted)
    assert diff_stats(OLD_APP, NEW_APP) == (3, 3)


def without_blink(app):
    async def prepare(pilot) -> None:
        app.prompt.cursor_blink = False
        await pilot.pause()

    return prepare


def test_snapshot_of_the_empty_start(snap_compare, make_app):
    app = make_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=without_blink(app))


def test_snapshot_of_a_reply_frozen_mid_stream(snap_compare, make_app, tui_runtime):
    session = tui_runtime.store.sessions.create(title="Explain the patch tool")
    app = make_app("scripted/demo")

    async def stream(pilot) -> None:
        app.prompt.cursor_blink = False
        await app.open_session(session.id)
        await pilot.pause()
        tui_runtime.store.messages.add(session.id, "user", [{"type": "text", "text": "How does patch work?"}])
        bus = tui_runtime.bus
        bus.publish(TurnStarted(session.id, "coder", "scripted/demo"))
        bus.publish(ReasoningDelta(session.id, "m-1", "The user asks about the patch tool."))
        for word in STREAMED.split(" "):
            bus.publish(TextDelta(session.id, "m-1", word + " "))
        tui_runtime.store.sessions.add_usage(session.id, 12_000, 300, 0.0123)  # the bar's cost is the store's
        bus.publish(UsageUpdated(session.id, 12_000, 300, 0.0123, 200_000))
        await wait_until(pilot, lambda: app.query(AssistantMessage) and _rendered(app) == _expected())
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=stream)


def _expected() -> str:
    return "".join(word + " " for word in STREAMED.split(" "))


def _rendered(app) -> str:
    """What the streamed Markdown block holds so far."""
    blocks = app.query_one(AssistantMessage).query("Markdown")
    return blocks.first().source if blocks else ""


def test_snapshot_of_a_narrow_terminal(snap_compare, make_app, tui_runtime):
    session_id = store_tool_conversation(tui_runtime, SAMPLES["edit"], title="A narrow terminal, 80 by 24")
    record_history(tui_runtime, session_id)
    app = make_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=session_opened(app, session_id))


def test_snapshot_of_a_light_theme_with_the_sidebar(snap_compare, make_runtime, make_app):
    runtime = make_runtime(policy="interactive", config={"tui": {"theme": "one-light"}})
    session_id = store_tool_conversation(runtime, SAMPLES["patch"], title="Light theme")
    record_history(runtime, session_id)
    app = make_app(runtime=runtime)

    async def show(pilot) -> None:
        app.prompt.cursor_blink = False
        await app.open_session(session_id)
        await wait_until(pilot, lambda: len(app.query_one("#sidebar").changes) == 3)
        await calls_opened(pilot, app)  # the patch's diff in the light theme's colours

    assert snap_compare(app, terminal_size=(120, 40), run_before=show)
