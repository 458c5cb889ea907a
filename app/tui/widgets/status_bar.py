"""One line at the bottom: what is running, in which session, with which agent (when
not the coder) on which model, and what it costs; "no sandbox" when bash commands run
without the OS sandbox that was wanted (docs/sandbox.md). Its spinner advances when the turn
shows progress (``pulse``), not on a clock, so it never moves while nothing happens and
snapshots stay stable. While a permission question is open the turn waits on the user,
not on the model: the bar says so instead of showing a spinner that would look stuck."""

from __future__ import annotations

from typing import NamedTuple

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from app.tui import css_beside

DEFAULT_AGENT = "coder"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SEPARATOR = "  "
STATE_MARKS = {
    "ready": ("✓", "$success"),
    "connected": ("✓", "$success"),
    "failed": ("✗", "$error"),
    "starting": ("…", "$warning"),
    "connecting": ("…", "$warning"),
}
"""How a language server's or MCP server's state shows; stopped and closed ones are not shown."""


class ServiceState(NamedTuple):
    """One language server ("LSP python") or MCP server ("MCP calc") as the bar shows it."""

    label: str
    state: str
    message: str = ""

    @property
    def line(self) -> str:
        """The full story, for the tooltip and the palette: "MCP calc failed: command not found"."""
        return f"{self.label} {self.state}" + (f": {self.message}" if self.message else "")


def format_tokens(count: int) -> str:
    """12345 -> "12.3k": the status bar has little room."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def format_usage(
    context_tokens: int, context_window: int, cost: float, cache_read: int = 0, cache_write: int = 0
) -> str:
    """ "50.0k tokens (25%) · cache 40.0k read, 2.1k written · $0.12": the cache part (of
    the last model call's prompt) only when the provider's prompt cache was used."""
    used = f"{format_tokens(context_tokens)} tokens"
    if context_window > 0:
        used += f" ({round(100 * context_tokens / context_window)}%)"
    if cache_read or cache_write:
        used += f" · cache {format_tokens(cache_read)} read, {format_tokens(cache_write)} written"
    return f"{used} · ${cost:.2f}"


class StatusBar(Widget):
    """Set the reactives; the line redraws itself. The session title gives way first
    when the terminal is narrow."""

    DEFAULT_CSS = css_beside(__file__)

    model_label: reactive[str] = reactive("")
    agent: reactive[str] = reactive("")
    """The primary agent the next prompt goes to, shown before the model unless it is the
    default one (coder), so the usual bar stays as short as it was."""
    title: reactive[str] = reactive("")
    context_tokens: reactive[int] = reactive(0)
    context_window: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    cache_read: reactive[int] = reactive(0)
    cache_write: reactive[int] = reactive(0)
    """Prompt tokens of the last model call read from and written to the provider's cache."""
    working: reactive[bool] = reactive(False)
    asking: reactive[bool] = reactive(False)
    """A permission question is open: the turn (or a revert) waits for the user's answer."""
    frame: reactive[int] = reactive(0)
    unsandboxed: reactive[bool] = reactive(False)
    """Bash commands run without the sandbox that was wanted (none is available here)."""
    services: reactive[tuple[ServiceState, ...]] = reactive(())
    """Language and MCP servers, in the order they first reported."""

    def set_service(self, service: ServiceState) -> None:
        """Record a server's new state (replacing its previous one)."""
        others = [known for known in self.services if known.label != service.label]
        position = next((i for i, known in enumerate(self.services) if known.label == service.label), len(others))
        others.insert(position, service)
        self.services = tuple(others)

    def watch_services(self) -> None:
        self.tooltip = "\n".join(service.line for service in self.services) or None

    def services_segment(self) -> Content:
        """ "LSP python ✓  MCP calc ✗": one compact mark per server that is not stopped."""
        marks = [
            Content.assemble(f"{service.label} ", (mark, style))
            for service in self.services
            if service.state in STATE_MARKS
            for mark, style in [STATE_MARKS[service.state]]
        ]
        return Content(SEPARATOR).join(marks)

    def pulse(self) -> None:
        """Advance the spinner: called for each sign of progress in the running turn."""
        self.frame += 1

    def render(self) -> Content:
        left = Content("")
        if self.asking:
            left = Content.styled("? waiting for your answer", "bold $warning") + SEPARATOR
        elif self.working:
            left = Content.styled(f"{SPINNER[self.frame % len(SPINNER)]} working · esc to cancel", "bold $accent")
            left += SEPARATOR
        services = self.services_segment()
        right = Content.assemble(
            *((("no sandbox", "$warning"), SEPARATOR) if self.unsandboxed else ()),
            *((services, SEPARATOR) if services else ()),
            (
                format_usage(self.context_tokens, self.context_window, self.cost, self.cache_read, self.cache_write),
                "$text-muted",
            ),
            SEPARATOR,
            *(((self.agent, "bold $accent"), " · ") if self.agent and self.agent != DEFAULT_AGENT else ()),
            (self.model_label, "$primary"),
        )
        room = max(self.size.width - left.cell_length - right.cell_length - len(SEPARATOR), 0)
        middle = Content.styled(self.title or "New session", "$text").truncate(room, ellipsis=True, pad=True)
        return Content.assemble(left, middle, SEPARATOR, right)
