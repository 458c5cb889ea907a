"""The todo panel at the top of the sidebar: the session's todo list (the agent's plan,
written with the todowrite tool), one line per item with a mark and a colour for its
status; completed and cancelled items dimmed and struck through. Hidden while the list is
empty. It shows the store's list when the session changes (so a reopened session brings
its list back) and each ``TodosUpdated`` of that session as it comes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from app.tui import css_beside

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.store.models import TodoItem

MARKS = {
    "pending": ("○", "$text-muted"),
    "in_progress": ("◉", "$warning"),
    "completed": ("✓", "$success"),
    "cancelled": ("✗", "$error"),
}
"""Status -> (mark, its colour: a theme variable)."""
TEXT_STYLES = {
    "pending": "$foreground",
    "in_progress": "bold $foreground",
    "completed": "strike $text-muted",
    "cancelled": "strike $text-muted",
}


class TodoPanel(Vertical):
    """``TodoPanel()``; ``attach(runtime)`` starts following the bus, ``session_id``
    says whose list to show."""

    DEFAULT_CSS = css_beside(__file__)
    DEFAULT_CLASSES = "-empty"

    session_id: reactive[str | None] = reactive(None)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.runtime: Runtime | None = None
        self.todos: list[TodoItem] = []

    def compose(self) -> ComposeResult:
        yield Static(id="todo-title")
        yield Static(id="todo-items")

    def attach(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._follow(runtime)
        self._load()

    def watch_session_id(self) -> None:
        self._load()

    def _load(self) -> None:
        """Show the stored list of the session now shown (one small row to read)."""
        if self.runtime is not None and self.is_mounted:
            self.show(self.runtime.store.todos.get(self.session_id) if self.session_id else [])

    def on_mount(self) -> None:
        self._load()

    @work(group="todo-follow")
    async def _follow(self, runtime: Runtime) -> None:
        from app.store.events import TodosUpdated

        async with runtime.bus.subscribe(TodosUpdated) as events:
            async for event in events:
                if isinstance(event, TodosUpdated) and event.session_id == self.session_id:
                    self.show(list(event.todos))

    def show(self, todos: list[TodoItem]) -> None:
        self.todos = todos
        done = sum(todo.status == "completed" for todo in todos)
        self.query_one("#todo-title", Static).update(
            Content.assemble(("Todo", "bold"), (f"  {done}/{len(todos)}", "$text-muted"))
        )
        lines = [
            Content.assemble((MARKS[todo.status][0], MARKS[todo.status][1]), " ", (todo.content, TEXT_STYLES[todo.status]))
            for todo in todos
        ]
        self.query_one("#todo-items", Static).update(Content("\n").join(lines))
        self.set_class(not todos, "-empty")
