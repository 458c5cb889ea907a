"""The jobs screen (/jobs) in the real app under Pilot: a real background job of the
session, listed with its last lines; x stops the highlighted one, whose whole process
group is then gone."""

from __future__ import annotations

from textual.widgets import OptionList

from app.tools.bash import BashTool
from app.tui.screens.jobs import JobsScreen
from tests.llm.test_background_jobs import group_gone
from tests.tui.conftest import wait_until


async def test_jobs_lists_the_sessions_jobs_and_x_stops_one(make_runtime, make_app):
    tui_runtime = make_runtime()  # --yes: the jobs start before the app, with no one to ask
    session = tui_runtime.store.sessions.create(title="jobs")
    ctx = tui_runtime.context(session.id)
    first = await BashTool().call({"command": "echo one-ready; sleep 300", "background": True}, ctx)
    second = await BashTool().call({"command": "echo two-ready; sleep 300", "background": True}, ctx)
    jobs = [tui_runtime.jobs.get(session.id, started.metadata["job_id"]) for started in (first, second)]
    app = make_app(runtime=tui_runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.open_session(session.id)
        await pilot.press(*"/jobs", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen))
        listing = app.screen.query_one(OptionList)

        def shown() -> list[str]:
            return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]

        await wait_until(pilot, lambda: app.screen.show_jobs() or all("-ready" in entry for entry in shown()))
        assert shown() == [
            "  1. echo one-ready; sleep 300  running\n     one-ready",
            "  2. echo two-ready; sleep 300  running\n     two-ready",
        ]

        await pilot.press("down", "x")
        await wait_until(pilot, lambda: not jobs[1].running and "killed by signal SIGKILL" in shown()[1])
        await wait_until(pilot, lambda: group_gone(jobs[1].pgid))
        assert jobs[0].running and shown()[0].endswith("running\n     one-ready")

        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, JobsScreen))
        await tui_runtime.jobs.kill(jobs[0])
