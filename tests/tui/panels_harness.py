"""A bare Textual app that hosts the panels (sidebar, diff view, permission modal) the
way the real app does: the shipped themes registered, our CSS variables defined, no
user theme folder (so a developer's own themes never change a snapshot)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widget import Widget

from app.tools.base import ToolContext
from app.tools.changes import Change, ChangeSet, apply_changes
from app.tui.themes import apply_theme, register_themes, theme_variable_defaults

NO_USER_THEMES = Path("/nonexistent/opencode-themes")


class PanelsApp(App[None]):
    """``PanelsApp(lambda: [DiffView(...)], theme="opencode")``."""

    def __init__(
        self,
        widgets: Callable[[], Iterable[Widget]] = list,
        *,
        theme: str = "opencode",
        user_dir: Path = NO_USER_THEMES,
    ) -> None:
        super().__init__()
        self._widgets = widgets
        self.theme_warnings = register_themes(self, user_dir=user_dir)
        apply_theme(self, theme)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults()

    def compose(self) -> ComposeResult:
        yield from self._widgets()


async def change(ctx: ToolContext, rel: str, content: str | None) -> None:
    """Write (or, with None, delete) a file the way every tool does: through apply_changes
    as tool "edit" (tests allow it by rule), so history and the bus see a real change."""
    target = ctx.workspace.resolve_for_write(rel)
    data = None if content is None else content.encode()
    await apply_changes(ctx, "edit", [target], lambda _: ChangeSet([Change(target, data)], f"change {rel}", rel))
