"""The TUI's status bar says "no sandbox" when bash commands run without the sandbox that
was wanted, and nothing when they run in one (or the user turned it off)."""

from __future__ import annotations

import pytest

from app.sandbox.mechanisms import Availability
from app.tui.app import OpencodeApp
from tests.tui.conftest import NO_USER_THEMES, wait_until


@pytest.mark.parametrize(
    ("mechanism", "found", "shown"),
    [("auto", Availability(None, "bwrap is not installed; Landlock is not available"), True),
     ("auto", Availability("bwrap", "bubblewrap"), False),
     ("off", Availability(None, "sandbox.mechanism is off"), False)],
)  # fmt: skip
async def test_the_status_bar_says_when_commands_run_without_the_sandbox(make_runtime, mechanism, found, shown):
    runtime = make_runtime("interactive", {"lsp": {"python": {"disabled": True}}, "sandbox": {"mechanism": mechanism}})
    runtime.sandbox = found  # what this machine gave, as start-up found it
    app = OpencodeApp(runtime.root, runtime=runtime, env={}, user_themes=NO_USER_THEMES)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.status.model_label not in ("", "starting…"))
        assert ("no sandbox" in app.status.render().plain) is shown
