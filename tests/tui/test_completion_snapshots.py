"""How the prompt's completion lists look, in the default dark theme and a light one:
the files offered for ``@sapp`` and the commands offered for ``/``."""

from __future__ import annotations

import pytest

from app.tui.widgets.completion_list import CompletionList
from tests.tui.conftest import wait_until
from tests.tui.test_prompt_completion import make_project

THEMES = ["opencode", "one-light"]


def typed(app, keys: str, first: str):
    async def prepare(pilot) -> None:
        app.prompt.cursor_blink = False
        await pilot.press(*keys)
        listing = app.query_one(CompletionList)
        await wait_until(pilot, lambda: listing.is_open and listing.choices[0].label == first)
        await pilot.pause()

    return prepare


@pytest.mark.parametrize("theme", THEMES)
def test_snapshot_of_the_mention_list(snap_compare, make_runtime, make_app, workspace, theme):
    make_project(workspace)
    runtime = make_runtime(policy="interactive", config={"tui": {"theme": theme}})
    app = make_app(runtime=runtime)
    assert snap_compare(app, terminal_size=(100, 24), run_before=typed(app, "explain @sapp", "src/app.py"))


@pytest.mark.parametrize("theme", THEMES)
def test_snapshot_of_the_command_list(snap_compare, make_runtime, make_app, workspace, theme):
    commands = workspace / ".opencode" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review the staged changes\n---\nReview $ARGUMENTS")
    runtime = make_runtime(policy="interactive", config={"tui": {"theme": theme}})
    app = make_app(runtime=runtime)
    assert snap_compare(app, terminal_size=(100, 24), run_before=typed(app, "/", "/new"))
