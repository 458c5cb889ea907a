"""The jobs screen (/jobs): the session's background jobs (app/tools/jobs.py), each with
its status and last lines, refreshed while the screen is open; a key stops the
highlighted one (its whole process group, as bash_kill does)."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from app.core.control_chars import escape_controls
from app.prompt.turn_undo import first_line
from app.tools.jobs import Job, JobTable

REFRESH_SECONDS = 1.0
"""How often the open list shows the jobs' new lines and states."""


class JobsScreen(ModalScreen[None]):
    CSS_PATH = "jobs.tcss"
    BINDINGS = [
        Binding("x,delete", "stop", "Stop the highlighted job", id="jobs.stop"),
        Binding("escape", "dismiss(None)", "Close", id="jobs.close"),
    ]

    def __init__(self, table: JobTable, session_id: str) -> None:
        super().__init__()
        self.table = table
        self.session_id = session_id

    def compose(self) -> ComposeResult:
        with Vertical(id="jobs-box"):
            yield Static("Background jobs of this session", id="jobs-title")
            yield OptionList(id="jobs-list")
            yield Static("x stop the highlighted job · esc close", id="jobs-help")

    def on_mount(self) -> None:
        self.show_jobs()
        self.set_interval(REFRESH_SECONDS, self.show_jobs)
        self.query_one("#jobs-list", OptionList).focus()

    def show_jobs(self) -> None:
        """List the jobs again as they are now, the highlight kept on the same job."""
        listing = self.query_one("#jobs-list", OptionList)
        highlighted = listing.highlighted
        listing.clear_options()
        listing.add_options(Option(_entry(job), id=str(job.id)) for job in self.table.of(self.session_id))
        if listing.option_count:
            listing.highlighted = min(highlighted or 0, listing.option_count - 1)

    @property
    def highlighted_job(self) -> Job | None:
        listing = self.query_one("#jobs-list", OptionList)
        if listing.highlighted is None:
            return None
        option_id = listing.get_option_at_index(listing.highlighted).id
        return self.table.get(self.session_id, int(option_id or 0))

    def action_stop(self) -> None:
        job = self.highlighted_job
        if job is None or not job.running:
            self.notify("That job has ended already" if job else "No job to stop", severity="warning")
            return
        self._stop(job)

    @work(group="jobs-stop", exit_on_error=False)
    async def _stop(self, job: Job) -> None:
        await self.table.kill(job)
        self.show_jobs()


def _entry(job: Job) -> Content:
    """The job's number, command and status, then its last lines, dimmed (a program's
    colours and other escapes shown, not obeyed)."""
    status_style = "$success" if job.running else "$text-muted"
    parts: list[str | tuple[str, str]] = [
        (f"{job.id:>3}. ", "$text-muted"), escape_controls(first_line(job.command)), "  ", (job.status(), status_style),
    ]  # fmt: skip
    for line in job.last_lines() or ["(no output yet)"]:
        parts += ["\n", (f"     {escape_controls(line)}", "$text-muted")]
    return Content.assemble(*parts)
