"""The permission modal: every key, the peek, and the queue that shows questions one at a
time against a real permission service and bus."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button, Input, Static

from app.core.diff import unified_diff
from app.core.errors import PermissionDeniedError
from app.permission import PermissionPreview, PermissionReply, PermissionRequest
from app.runtime import Runtime
from app.tui.screens.permission_screen import PermissionScreen
from app.tui.widgets.permission_preview import files_summary
from app.tui.widgets.permission_queue import PermissionQueue
from tests.tui.conftest import wait_until
from tests.tui.panels_harness import PanelsApp

EDIT = PermissionRequest(
    "s1", "edit", "src/greet.py", "coder", "Edit src/greet.py",
    PermissionPreview("diff", unified_diff('def greet():\n    return "hi"\n', 'def greet():\n    return "hello"\n', "src/greet.py")),
)
BASH = PermissionRequest(
    "s1", "bash", "rm -rf build && make test", "coder", "Run a shell command",
    PermissionPreview("command", "rm -rf build && make test"),
)
DELETE = PermissionRequest(
    "s1", "delete", "tmp", "coder", "Delete tmp/ (3 files, 340 lines)",
    PermissionPreview("files", files=[("tmp/a.txt", 12), ("tmp/b/c.py", 300), ("tmp/notes.md", 28)]),
)


def chat_behind() -> list[Static]:
    return [Static("\n".join(f"chat line {n}" for n in range(40)), id="chat")]


class Modal:
    """The app with one PermissionScreen pushed; ``results`` gets what it dismissed with."""

    def __init__(self, request: PermissionRequest = EDIT) -> None:
        self.app = PanelsApp(chat_behind)
        self.request = request
        self.results: list[PermissionReply | None] = []

    async def __aenter__(self):
        self._context = self.app.run_test(size=(100, 30))
        pilot = await self._context.__aenter__()
        self.app.push_screen(PermissionScreen(self.request), callback=self.results.append)
        await wait_until(pilot, lambda: self.open and self.app.screen.ready)
        return pilot

    async def __aexit__(self, *exc) -> None:
        await self._context.__aexit__(*exc)

    @property
    def open(self) -> bool:
        return isinstance(self.app.screen, PermissionScreen)


@pytest.mark.parametrize(
    ("key", "decision"), [("a", "allow_once"), ("s", "allow_session"), ("d", "deny"), ("escape", "deny")]
)
async def test_each_answer_key_dismisses_with_its_decision(key, decision):
    modal = Modal()
    async with modal as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert modal.results == [PermissionReply(decision)]
        assert not modal.open


async def test_shift_d_asks_for_a_message_that_enter_sends_and_typing_answers_nothing():
    modal = Modal()
    async with modal as pilot:
        await pilot.press("D")
        message = modal.app.screen.query_one("#permission-message", Input)
        assert message.display and message.has_focus
        await pilot.press(*"use a sed", "space", *"ascii")  # a, s, d and space only type here
        assert modal.results == [] and modal.open
        await pilot.press("enter")
        await pilot.pause()
        assert modal.results == [PermissionReply("deny", "use a sed ascii")]


async def test_escape_in_the_message_goes_back_to_the_buttons():
    modal = Modal()
    async with modal as pilot:
        await pilot.press("D", "x", "escape")
        screen = modal.app.screen
        assert not screen.query_one("#permission-message", Input).display
        assert screen.focused.id == "permission-deny_message"
        assert modal.results == []


async def test_enter_presses_the_focused_button_which_starts_on_allow_once():
    modal = Modal()
    async with modal as pilot:
        assert modal.app.screen.focused.id == "permission-allow_once"
        await pilot.press("right", "right")
        assert isinstance(modal.app.screen.focused, Button)
        assert modal.app.screen.focused.id == "permission-deny"
        await pilot.press("enter")
        await pilot.pause()
        assert modal.results == [PermissionReply("deny")]


async def test_keys_pressed_before_the_modal_was_shown_never_answer_it():
    """Type-ahead read while the app was busy reaches the screen on top once the app is
    free: keys stamped before the modal's first paint are dropped, the next ones answer."""
    app = PanelsApp(chat_behind)
    results: list[PermissionReply | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        typed_ahead = [events.Key(key, character) for key, character in
                       [("a", "a"), ("s", "s"), ("d", "d"), ("enter", "\r"), ("escape", None), ("D", "D")]]
        app.push_screen(PermissionScreen(BASH), callback=results.append)
        for key in typed_ahead:  # handed over after the push, as a busy app would
            app.post_message(key)
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        await pilot.pause()
        assert results == [] and isinstance(app.screen, PermissionScreen)
        assert app.screen.focused is not None and app.screen.focused.id == "permission-allow_once"
        await pilot.press("d")
        await wait_until(pilot, lambda: results)
        assert results == [PermissionReply("deny")]


async def test_space_never_answers():
    modal = Modal()
    async with modal as pilot:
        for _ in range(3):
            await pilot.press("space")
        await pilot.pause()
        assert modal.results == [] and modal.open
        assert modal.app.screen.focused.id == "permission-allow_once"


async def test_peek_hides_the_question_blocks_answers_and_comes_back():
    modal = Modal()
    async with modal as pilot:
        screen = modal.app.screen
        dialog = screen.query_one("#permission-dialog")
        await pilot.press("h")
        assert screen.peeking and not dialog.display
        assert screen.query_one("#permission-peek-bar").display
        await pilot.press("a", "enter", "d")  # the question is hidden: nothing answers it
        await pilot.pause()
        assert modal.results == [] and modal.open
        await pilot.press("h")
        assert not screen.peeking and dialog.display
        assert screen.focused.id == "permission-allow_once"
        await pilot.press("h", "escape")  # escape also ends the peek, without denying
        assert not screen.peeking and modal.results == []


def test_files_summary_counts():
    assert files_summary([("a", 1)]) == "1 file, 1 line"
    assert files_summary([("a", 1200), ("b", 34)]) == "2 files, 1,234 lines"


# --- the queue, against the real service --------------------------------------------------


def asking(app: PanelsApp, request: PermissionRequest) -> bool:
    """The modal for ``request`` is on screen and ready for keys."""
    screen = app.screen
    return isinstance(screen, PermissionScreen) and screen.request == request and screen.ready


async def answer_of(task: asyncio.Task) -> PermissionReply:
    return await asyncio.wait_for(task, 60)


@asynccontextmanager
async def queue_listening(runtime: Runtime) -> AsyncIterator[tuple[PanelsApp, Pilot, PermissionQueue]]:
    """The app with a PermissionQueue showing ``runtime``'s questions as they are asked."""
    app = PanelsApp(chat_behind)
    async with app.run_test(size=(100, 30)) as pilot:
        queue = PermissionQueue(app, runtime.permissions)
        app.run_worker(queue.run(runtime.bus))
        await pilot.pause()
        yield app, pilot, queue


async def test_queue_shows_one_question_at_a_time_and_replies_to_the_service(make_runtime):
    runtime = make_runtime(policy="interactive")
    async with queue_listening(runtime) as (app, pilot, queue):
        first = asyncio.create_task(runtime.permissions.request(EDIT))
        second = asyncio.create_task(runtime.permissions.request(BASH))
        await wait_until(pilot, lambda: queue.waiting == 1 and asking(app, EDIT))
        await pilot.press("a")
        assert (await answer_of(first)) == PermissionReply("allow_once")
        await wait_until(pilot, lambda: asking(app, BASH))
        assert queue.waiting == 0
        await pilot.press("D", *"no", "enter")
        assert (await answer_of(second)) == PermissionReply("deny", "no")
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))


async def test_queue_picks_up_questions_asked_before_it_listened(make_runtime):
    runtime = make_runtime(policy="interactive")
    app = PanelsApp(chat_behind)
    async with app.run_test(size=(100, 30)) as pilot:
        early = asyncio.create_task(runtime.permissions.request(DELETE))
        await pilot.pause()
        queue = PermissionQueue(app, runtime.permissions)
        app.run_worker(queue.run(runtime.bus))
        await wait_until(pilot, lambda: asking(app, DELETE))
        await pilot.press("s")
        assert (await answer_of(early)).decision == "allow_session"


async def test_a_question_answered_elsewhere_closes_its_modal_and_leaves_the_queue(make_runtime):
    runtime = make_runtime(policy="interactive")
    other_session = PermissionRequest("s2", "bash", "ls", "coder", "Run ls", PermissionPreview("command", "ls"))
    async with queue_listening(runtime) as (app, pilot, queue):
        shown = asyncio.create_task(runtime.permissions.request(EDIT))
        queued = asyncio.create_task(runtime.permissions.request(BASH))
        later = asyncio.create_task(runtime.permissions.request(other_session))
        await wait_until(pilot, lambda: queue.waiting == 2)
        runtime.permissions.cancel_session("s1")  # escape on the turn: both s1 questions go
        assert (await answer_of(shown)).automatic and (await answer_of(queued)).automatic
        await wait_until(pilot, lambda: asking(app, other_session))
        assert queue.waiting == 0
        await pilot.press("d")
        assert (await answer_of(later)) == PermissionReply("deny")


async def test_allow_for_session_answers_the_same_question_waiting_behind(make_runtime):
    runtime = make_runtime(policy="interactive")
    async with queue_listening(runtime) as (app, pilot, queue):
        first = asyncio.create_task(runtime.permissions.request(BASH))
        twin = asyncio.create_task(runtime.permissions.request(BASH))
        await wait_until(pilot, lambda: queue.waiting == 1 and asking(app, BASH))
        await pilot.press("s")
        assert (await answer_of(first)).decision == "allow_session"
        assert (await answer_of(twin)).allowed
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        assert queue.waiting == 0


@pytest.mark.parametrize("request_", [EDIT, BASH, DELETE], ids=["edit_diff", "bash_command", "directory_delete"])
def test_modal_snapshot(snap_compare, request_):
    app = PanelsApp(chat_behind)

    async def ask(pilot) -> None:
        await app.push_screen(PermissionScreen(request_))

    assert snap_compare(app, terminal_size=(100, 30), run_before=ask)


SUBAGENT_EDIT = PermissionRequest(
    "child", "edit", "tests/test_api.py", "workhorse", "Edit tests/test_api.py",
    PermissionPreview("diff", unified_diff("def test_get():\n    pass\n", "def test_get():\n    assert get() == 200\n", "tests/test_api.py")),
    task="add tests",
)


def test_modal_snapshot_of_a_sub_agents_question_naming_the_sub_agent_and_task(snap_compare):
    app = PanelsApp(chat_behind)

    async def ask(pilot) -> None:
        await app.push_screen(PermissionScreen(SUBAGENT_EDIT))

    assert snap_compare(app, terminal_size=(100, 30), run_before=ask)


async def test_a_sub_agents_question_says_who_asks_for_which_task_and_a_approves():
    modal = Modal(SUBAGENT_EDIT)
    async with modal as pilot:
        shown = str(modal.app.screen.query_one("#permission-heading", Static).render())
        assert shown == "Permission required  workhorse · add tests: edit tests/test_api.py"
        await pilot.press("a")
        await pilot.pause()
        assert modal.results == [PermissionReply("allow_once")]


def test_modal_snapshot_while_peeking(snap_compare):
    app = PanelsApp(chat_behind)

    async def ask(pilot) -> None:
        await app.push_screen(PermissionScreen(EDIT))

    assert snap_compare(app, terminal_size=(100, 30), run_before=ask, press=["h"])


async def test_arrow_and_page_keys_scroll_a_long_preview():
    files = [(f"build/file{n:03}.o", n) for n in range(200)]
    request = PermissionRequest("s1", "delete", "build", "coder", "Delete build/", PermissionPreview("files", files=files))
    modal = Modal(request)
    async with modal as pilot:
        preview = modal.app.screen.query_one("#permission-preview")
        await pilot.press("pagedown", "down")
        await pilot.pause()
        assert preview.scroll_y == 11
        await pilot.press("up")
        await pilot.pause()
        assert preview.scroll_y == 10
        assert modal.results == []


LONG_EDIT = PermissionRequest(
    "s1", "edit", "src/long.py", "coder", "Edit src/long.py",
    PermissionPreview("diff", unified_diff("".join(f"x{n} = {n}\n" for n in range(40)), "", "src/long.py")),
)


LONG_PATCH = PermissionRequest(
    "s1", "patch", "demo/greet.py", "coder",
    "Patch: " + ", ".join(f"A demo/folder{n}/file{n}.txt" for n in range(5)),
    PermissionPreview("diff", unified_diff("", "".join(f"x{n} = {n}\n" for n in range(40)), "demo/greet.py")),
)


@pytest.mark.parametrize("request_", [LONG_EDIT, LONG_PATCH], ids=["long_preview", "long_title_too"])
async def test_at_80x24_every_button_is_on_screen_and_the_long_preview_scrolls(request_):
    """The modal once lost its last button ("Deny with message (D)") off the right edge,
    and its buttons off the bottom under a three-line title."""
    app = PanelsApp(chat_behind)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(PermissionScreen(request_))
        await pilot.pause()
        screen = app.screen
        dialog = screen.query_one("#permission-dialog").region
        for button in screen.query(Button):
            assert dialog.contains_region(button.region), f"{button.label} is cut off"
        assert dialog.contains_region(screen.query_one("#permission-scope").region)
        preview = screen.query_one("#permission-preview")
        await pilot.press("pagedown")
        await pilot.pause()
        assert preview.scroll_y > 0


def test_modal_snapshot_at_80x24(snap_compare):
    app = PanelsApp(chat_behind)

    async def ask(pilot) -> None:
        await app.push_screen(PermissionScreen(LONG_EDIT))

    assert snap_compare(app, terminal_size=(80, 24), run_before=ask)


async def test_allow_for_session_on_a_two_file_patch_says_which_files_and_holds_for_each(make_runtime):
    """The real patch tool asks through the queue: the modal says the answer covers a.txt
    and b.txt; after `s`, a patch of b.txt alone runs with no modal, one of c.txt asks."""
    from app.tools.patch import PatchTool

    runtime = make_runtime(policy="interactive")
    ctx = runtime.context(runtime.store.sessions.create().id)

    def patch(body: str) -> asyncio.Task:
        return asyncio.create_task(PatchTool().call({"patch": f"*** Begin Patch\n{body}*** End Patch\n"}, ctx))

    async with queue_listening(runtime) as (app, pilot, _queue):
        first = patch("*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        scope = str(app.screen.query_one("#permission-scope", Static).render())
        assert scope.startswith("Allow for session: what this patch does to a.txt, b.txt is not asked again")
        await pilot.press("s")
        await answer_of(first)

        await answer_of(patch("*** Update File: b.txt\n@@\n-b\n+b2\n"))  # no modal: it would wait forever
        assert not isinstance(app.screen, PermissionScreen)

        third = patch("*** Add File: c.txt\n+c\n")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.ready)
        assert app.screen.request.subject == "c.txt"
        await pilot.press("d")
        with pytest.raises(PermissionDeniedError):
            await answer_of(third)
    assert (runtime.root / "b.txt").read_text() == "b2\n" and not (runtime.root / "c.txt").exists()


def test_the_session_line_names_what_an_answer_for_the_session_covers():
    from app.permission.effects import Effect
    from app.tui.screens.permission_screen import session_scope

    rm = PermissionRequest(
        "s1", "bash", "rm *.txt", "coder", "Run", PermissionPreview("command", "rm *.txt"),
        effects=(Effect("execute", "rm *.txt"), Effect("delete", "a.txt"), Effect("delete", "b.txt")), scope="rm *.txt",
    )  # fmt: skip
    assert session_scope(rm).startswith("Allow for session: this exact command (with what it does to a.txt, b.txt)")
    many = PermissionRequest(
        "s1", "delete", "tmp", "coder", "Delete tmp/", PermissionPreview("files"),
        effects=tuple(Effect("delete", f"tmp/{n}") for n in "abcde"),
    )  # fmt: skip
    assert "what this delete does to tmp/a, tmp/b, tmp/c and 2 more is not asked again" in session_scope(many)
    listing = PermissionRequest(
        "s1", "external_directory", "/srv/data", "coder", "ls outside", PermissionPreview("text"), "/srv/data", scope="ls"
    )
    assert "ls reading /srv/data is not asked again" in session_scope(listing)
    assert session_scope(listing).endswith("other paths and other tools still ask.")
