"""The modified-files sidebar on a real runtime: real files changed through the one change
path, the real history and bus, and the yes/no question confirming a revert."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.containers import Horizontal
from textual.widgets import Static

from app.runtime import Runtime
from app.tui.screens.confirm import ConfirmScreen
from app.tui.screens.diff_screen import DiffScreen
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.widgets.permission_queue import PermissionQueue
from app.tui.widgets.sidebar import FilesSidebar
from app.tui.widgets.sidebar_list import ModifiedFileList
from tests.tui.conftest import wait_until
from tests.tui.panels_harness import PanelsApp, change

ALLOW_CHANGES = {"permission": {"rules": {"edit": "allow"}}}


@pytest.fixture
def runtime(make_runtime) -> Runtime:
    return make_runtime(policy="interactive", config=ALLOW_CHANGES)


@pytest.fixture
def session_id(runtime: Runtime) -> str:
    return runtime.store.sessions.create(title="work").id


class SidebarApp(PanelsApp):
    """The sidebar beside a stand-in chat, with the permission queue running, counting
    the sidebar's refreshes."""

    def __init__(self, runtime: Runtime, session_id: str | None) -> None:
        self.runtime = runtime
        self.refreshes: list[int] = []
        self.notes: list[str] = []
        super().__init__(self._layout)
        self._session_id = session_id

    def _layout(self):
        chat = Static("chat", id="chat")
        chat.styles.width = "1fr"
        return [Horizontal(chat, FilesSidebar(self.runtime, self._session_id, id="sidebar"))]

    def on_mount(self) -> None:
        self.run_worker(PermissionQueue(self, self.runtime.permissions).run(self.runtime.bus))

    def notify(self, message: str, **options) -> None:
        self.notes.append(message)
        super().notify(message, **options)

    def on_files_sidebar_refreshed(self, message: FilesSidebar.Refreshed) -> None:
        self.refreshes.append(message.count)

    @property
    def sidebar(self) -> FilesSidebar:
        return self.query_one(FilesSidebar)

    def line(self, path: str) -> str:
        """The drawn line of ``path`` (the list is short: no scrolling)."""
        files = self.query_one(ModifiedFileList)
        return files.render_line([change.path for change in files.changes].index(path)).text


def shown(app: SidebarApp) -> dict[str, tuple[int, int, bool]]:
    return {c.path: (c.additions, c.deletions, c.deleted) for c in app.sidebar.changes}


async def test_refreshes_on_file_version_created_with_stats_and_deleted_marks(runtime, session_id, workspace):
    (workspace / "app.py").write_text("a\nb\nc\n")
    (workspace / "old.txt").write_text("one\ntwo\n")
    ctx = runtime.context(session_id)
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: app.refreshes)
        assert app.sidebar.has_class("-empty")
        await change(ctx, "app.py", "a\nB\nc\nd\n")
        await wait_until(pilot, lambda: "app.py" in shown(app))
        assert shown(app)["app.py"] == (2, 1, False)
        # The event arrives from the writer thread; the list draws on a later frame.
        await wait_until(pilot, lambda: "+2 -1" in app.line("app.py"))
        await change(ctx, "old.txt", None)
        await wait_until(pilot, lambda: "old.txt" in shown(app))
        assert shown(app)["old.txt"] == (0, 2, True)
        await wait_until(pilot, lambda: "deleted" in app.line("old.txt"))
        assert "deleted" not in app.line("app.py")
        assert not app.sidebar.has_class("-empty")


async def test_files_changed_by_a_child_session_are_listed(runtime, session_id, workspace):
    child = runtime.store.sessions.create(title="sub-agent", parent_id=session_id).id
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await change(runtime.context(child), "made_by_child.txt", "x\n")
        await wait_until(pilot, lambda: "made_by_child.txt" in shown(app))


async def test_a_burst_of_a_thousand_versions_is_read_in_few_refreshes(runtime, session_id):
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: app.refreshes)
        before = len(app.refreshes)
        history = runtime.store.history
        with history.batch():  # one transaction, as a directory delete records it
            for n in range(1000):
                history.create(session_id, f"big/file{n:04}.txt", "line\n")
                history.create_version(session_id, f"big/file{n:04}.txt", "", deleted=True)
        await wait_until(pilot, lambda: app.refreshes and app.refreshes[-1] == 1000)
        assert len(app.refreshes) - before <= 2


async def test_switching_session_shows_that_sessions_files(runtime, session_id):
    other = runtime.store.sessions.create(title="other").id
    await change(runtime.context(other), "only_in_other.txt", "x\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: app.refreshes)
        assert shown(app) == {}
        app.sidebar.session_id = other
        await wait_until(pilot, lambda: "only_in_other.txt" in shown(app))


async def test_enter_opens_the_diff_of_the_highlighted_file(runtime, session_id, workspace):
    (workspace / "b.txt").write_text("old\n")
    await change(runtime.context(session_id), "a.txt", "new file\n")
    await change(runtime.context(session_id), "b.txt", "changed\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: len(shown(app)) == 2)
        app.sidebar.focus_files()
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        assert app.screen.path == "b.txt"


async def revert_with_answer(app: App, pilot, path: str, key: str) -> ConfirmScreen:
    """Revert ``path`` from the files sidebar, answering the confirmation with ``key``."""
    files = app.query_one(ModifiedFileList)
    files.focus()
    files.select_path(path)
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.focused is not None)
    modal = app.screen
    await pilot.press(key)
    return modal


async def test_revert_asks_yes_or_no_then_restores_the_initial_content_as_a_new_version(
    runtime, session_id, workspace
):
    (workspace / "app.py").write_text("original\n")
    await change(runtime.context(session_id), "app.py", "edited\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: shown(app).get("app.py") == (1, 1, False))
        modal = await revert_with_answer(app, pilot, "app.py", "y")
        assert "Revert app.py?" in modal.question and "+1 -1 undone" in modal.question
        # Back to its content before the session: the file leaves the list.
        await wait_until(pilot, lambda: "app.py" not in shown(app))
        assert not isinstance(app.screen, PermissionScreen)
        assert (workspace / "app.py").read_text() == "original\n"
        versions = runtime.store.history.versions(session_id, "app.py")
        # The edit stays in history, so the revert itself can be undone.
        assert [(v.version, v.content) for v in versions] == [
            ("initial", "original\n"), ("v1", "edited\n"), ("v2", "original\n"),
        ]


async def test_revert_brings_a_deleted_file_back(runtime, session_id, workspace):
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\n\nRead me.\n")
    await change(runtime.context(session_id), "docs/guide.md", None)
    (workspace / "docs").rmdir()
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: shown(app).get("docs/guide.md") == (0, 3, True))
        modal = await revert_with_answer(app, pilot, "docs/guide.md", "y")
        assert "reverting brings it back" in modal.question
        await wait_until(pilot, lambda: not shown(app))
        assert (workspace / "docs" / "guide.md").read_text() == "# Guide\n\nRead me.\n"


async def test_reverting_a_file_the_session_created_removes_it(runtime, session_id, workspace):
    await change(runtime.context(session_id), "demo/greet.py", "print('hi')\n")
    await change(runtime.context(session_id), "kept.txt", "x\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: len(shown(app)) == 2 and app.line("demo/greet.py").strip())
        assert "greet.py new +1" in app.line("demo/greet.py")
        modal = await revert_with_answer(app, pilot, "demo/greet.py", "y")
        assert "The session created it: reverting deletes it." in modal.question
        await wait_until(pilot, lambda: list(shown(app)) == ["kept.txt"])
        assert not (workspace / "demo" / "greet.py").exists()
        versions = runtime.store.history.versions(session_id, "demo/greet.py")
        assert [(v.version, v.deleted) for v in versions] == [("initial", True), ("v1", False), ("v2", True)]


async def test_files_created_then_deleted_leave_the_list(runtime, session_id, workspace):
    for name in ("tmp/cache-1.txt", "tmp/cache-2.txt", "keep.txt"):
        await change(runtime.context(session_id), name, "cached\n")
    for name in ("tmp/cache-1.txt", "tmp/cache-2.txt"):
        await change(runtime.context(session_id), name, None)
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: app.refreshes)
        assert list(shown(app)) == ["keep.txt"]


async def test_a_denied_revert_changes_nothing(runtime, session_id, workspace):
    (workspace / "app.py").write_text("original\n")
    await change(runtime.context(session_id), "app.py", "edited\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "app.py" in shown(app))
        await revert_with_answer(app, pilot, "app.py", "n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        assert not app.notes
        assert (workspace / "app.py").read_text() == "edited\n"
        assert len(runtime.store.history.versions(session_id, "app.py")) == 2


async def test_a_rule_that_denies_revert_still_refuses_a_confirmed_one(make_runtime, workspace):
    runtime = make_runtime(policy="interactive", config={"permission": {"rules": {"edit": "allow", "revert": "deny"}}})
    session_id = runtime.store.sessions.create().id
    (workspace / "app.py").write_text("original\n")
    await change(runtime.context(session_id), "app.py", "edited\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: "app.py" in shown(app))
        await revert_with_answer(app, pilot, "app.py", "y")
        await wait_until(pilot, lambda: app.notes)
        assert app.notes == [
            'Permission denied: the rules forbid write on app.py (revert rule "*"); nothing was changed'
        ]
        assert (workspace / "app.py").read_text() == "edited\n"
        assert "app.py" in shown(app)


def test_sidebar_snapshot_with_several_files_one_deleted(snap_compare, runtime, session_id, workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\nprint(os.name)\n")
    (workspace / "README.md").write_text("# Project\n\nOld intro.\nMore.\n")
    history = runtime.store.history
    with history.batch():
        history.create(session_id, "src/app.py", "import os\n\nprint(os.name)\n")
        history.create_version(session_id, "src/app.py", "import os\nimport sys\n\nprint(os.name, sys.argv)\n")
        history.create(session_id, "README.md", "# Project\n\nOld intro.\nMore.\n")
        history.create_version(session_id, "README.md", "", deleted=True)
        history.create(session_id, "tests/test_app.py", "")
        history.create_version(session_id, "tests/test_app.py", "def test_app():\n    assert True\n")
    app = SidebarApp(runtime, session_id)

    async def loaded(pilot) -> None:
        await wait_until(pilot, lambda: len(shown(app)) == 3)

    assert snap_compare(app, terminal_size=(100, 16), run_before=loaded)


async def test_the_list_moves_with_keys_and_cuts_long_paths_in_the_middle(runtime, session_id):
    deep = "src/very/deeply/nested/package/with/a/long/path/module_name.py"
    for path in ("a.txt", "b.txt", deep):
        await change(runtime.context(session_id), path, "x\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        await wait_until(pilot, lambda: len(shown(app)) == 3)
        files = app.query_one(ModifiedFileList)
        files.focus()
        await pilot.press("end")
        assert files.highlighted_change.path == deep
        await pilot.press("up", "up", "up")  # stops at the first file
        assert files.highlighted_change.path == "a.txt"
        line = app.line(deep)
        assert line.startswith("src/") and "/…/module_name.py new +1" in line
        assert len(line.rstrip()) <= files.size.width


async def test_sidebar_keys_follow_the_keymap_by_binding_id(runtime, session_id):
    await change(runtime.context(session_id), "a.txt", "x\n")
    app = SidebarApp(runtime, session_id)
    async with app.run_test(size=(100, 20)) as pilot:
        app.set_keymap({"sidebar.open_diff": "o"})
        await wait_until(pilot, lambda: shown(app))
        app.query_one(ModifiedFileList).focus()
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
