"""The Textual app: the chat, the prompt, the status bar and the modified-files sidebar,
wired to the core through the bus.

Start-up is ordered for a fast first frame that already looks like the ready screen:
this module imports only Textual and the widgets of the empty screen (the sidebar shows
empty until the runtime is attached); the runtime (config, pydantic, SQLite) is built in
a thread after the first frame, together with the imports the rest of the UI needs (the
event listener, the permission modal, the widgets that stay hidden until they have
something to show: the completion list, the sidebar's todo panel and file list, which
are mounted with the runtime), and then litellm imports in its own background
thread (only for a real model: the offline demo never needs it). A prompt typed
meanwhile is sent as soon as the runtime is ready.

``continue_last`` (``--continue``) puts a step before the runtime: the session to resume
is read from the store, read-only, in a thread (app.tui.early_session) and its end drawn;
the runtime is built once the chat holds its first screens (or its end, in a full view,
while the turns above wait for a pause in the typing), and when it resumes the same
session the chat keeps what it drew and reads on from the runtime's store.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, TextArea

from app.core import gc_policy
from app.core.errors import OpencodeError
from app.tui.attention import attention_sequence, remembering_driver
from app.tui.hangup import HANGUP_EXIT_CODE, watch_for_hangup
from app.tui.screens.main import MainScreen
from app.tui.screens.palette import AppCommands, PaletteCommand
from app.tui.themes import (
    apply_theme,
    available_themes,
    project_theme,
    register_themes,
    saved_theme,
    start_with_theme,
    theme_variable_defaults,
)
from app.tui.widgets.chat_log import ChatLog
from app.tui.widgets.prompt_input import PromptInput
from app.tui.widgets.queued_messages import QueuedMessages
from app.tui.widgets.sidebar import FilesSidebar
from app.tui.widgets.status_bar import StatusBar
from app.worktrees.restart import WorktreeRestart

if TYPE_CHECKING:
    from textual.driver import Driver

    from app.llm.agent import AgentLoop, ModelProvider
    from app.runtime import Runtime
    from app.store.turns import UndoScope
    from app.tui.config_watch import Fingerprint
    from app.tui.early_session import EarlySession
    from app.tui.message_pages import MessagePages
    from app.tui.prompt_commands import PromptCommands
    from app.tui.widgets.task_view import TaskView

SIDEBAR_MIN_WIDTH = 100
"""Below this many columns the sidebar starts hidden (the toggle key still shows it)."""
QUIT_WINDOW = 2.0
"""Seconds within which a second ctrl+c quits."""
DEFAULT_THEME = "opencode"
_PAST = {"undo": "undone", "rewind": "rewound"}
TURN_OUTCOMES = {
    "stop": "The reply is ready",
    "failed": "The turn failed",
    "cancelled": "The turn was cancelled",
    "length": "The reply was cut at the model's output limit",
    "max_steps": "The turn stopped at its step limit",
}
"""What the desktop notification says at the end of a turn, by its reason."""
ADOPT_MODULES = (
    "app.tui.listener", "app.tui.model_choice", "app.tui.widgets.permission_queue", "app.tui.prompt_commands",
    "app.tui.widgets.completion_list", "app.tui.widgets.sidebar_list", "app.tui.widgets.todo_panel",
    "app.tui.widgets.message_notice", "app.tui.widgets.message_user", "app.tui.hook_trust", "watchfiles",
)
"""What adopting the runtime needs (watchfiles: the workspace watcher the services start):
imported in the start-up thread beside the runtime, so the UI thread does not stall on
them while the user types."""


def import_turn_modules() -> None:
    """What running a turn imports: the agent loop and every built-in tool."""
    from app.tools.registry import import_tool_modules

    importlib.import_module("app.llm.agent")
    import_tool_modules()


class OpencodeApp(App[WorktreeRestart | None]):
    CSS_PATH = "app.tcss"
    TITLE = "opencode"
    COMMANDS = {AppCommands}
    INHERIT_BINDINGS = False
    BINDINGS = [
        Binding("ctrl+p", "command_palette", "Commands", id="app.command_palette", priority=True),
        Binding("ctrl+s", "sessions", "Sessions", id="app.sessions"),
        Binding("ctrl+n", "new_session", "New session", id="app.new_session"),
        Binding("ctrl+o", "models", "Models", id="app.models"),
        Binding("ctrl+b", "toggle_sidebar", "Toggle the files sidebar", id="app.toggle_sidebar"),
        Binding("ctrl+g", "focus_files", "Files sidebar ⇄ prompt", id="app.focus_files"),
        Binding("ctrl+f", "find", "Find in the conversation", id="app.find"),
        Binding("ctrl+l", "copy", "Copy the last reply, a message or a code block", id="app.copy"),
        Binding("ctrl+t", "undo_turn", "Undo the last turn (its prompt comes back)", id="app.undo_turn"),
        Binding("alt+up", "edit_queued", "Take the last queued message back into the prompt", id="app.edit_queued"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("escape", "cancel_turn", "Back to the prompt, or cancel the running reply", id="app.cancel"),
        Binding("ctrl+c", "quit_twice", "Quit (press twice)", id="app.quit", priority=True),
        Binding("ctrl+q", "quit", "Quit now", id="app.quit_now", priority=True),
    ]

    sidebar_open: reactive[bool | None] = reactive(None)
    """None: shown when the terminal is wide enough; True/False: the user's choice."""

    def __init__(
        self,
        root: Path,
        *,
        runtime: Runtime | None = None,
        model: str | None = None,
        continue_last: bool = False,
        env: Mapping[str, str] | None = None,
        user_themes: Path | None = None,
        providers: Callable[[str], ModelProvider] | None = None,
        pause_gc: bool = False,
        terminal_fd: int | None = None,
        driver_class: type[Driver] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``providers`` maps a model to what streams it (default: scripted or litellm);
        benchmarks pass their own. ``pause_gc`` (run_tui's choice, not the tests'): the
        cyclic collector stays off until start-up is done, which makes many objects and
        little garbage, so collections would only slow the first frame; likewise full
        passes wait for litellm's import (see ``_settle_litellm``). ``terminal_fd`` (run_tui's
        stdin): the app exits when that terminal hangs up (see app.tui.hangup).
        ``driver_class``: Textual's own choice when None (a test passes one that records
        what the app writes). ``clock``: seconds that only go forward, for the window in
        which a second ctrl+c quits (a test passes one that stands still)."""
        if pause_gc:
            gc_policy.pause()
        super().__init__(driver_class=driver_class)
        self.terminal: Driver | None = None
        """The driver the app runs on: attention sequences are written through it."""
        self.driver_class = remembering_driver(self.driver_class, self._remember_terminal)
        self.root = Path(root)
        self.runtime = runtime
        self.env = os.environ if env is None else env
        self.cli_model = model
        self.continue_last = continue_last
        self.model = ""
        self.agent = "coder"
        """The primary agent the next prompt goes to (Tab in the prompt switches)."""
        self.session_id: str | None = None
        self.keybindings: dict[str, str] = {}
        self._providers = providers
        self._loops: dict[str, AgentLoop] = {}
        self._turn_session: str | None = None
        self.redrawing: str | None = None
        """The session an undo, redo or rewind is changing: it is drawn again from the store
        once the step is done, so the listener leaves its message events alone meanwhile."""
        self._prompt_waits = False
        """A prompt was sent before the runtime existed: it stays in the box and is sent
        once the runtime is up (after a fixed config, if start-up failed)."""
        self._startup_error: str | None = None
        self._clock = clock
        self._quit_pressed_at = -QUIT_WINDOW
        self._gc_paused = pause_gc
        self._litellm_unsettled = pause_gc
        self._user_themes = user_themes
        self._commands: PromptCommands | None = None
        """Slash commands and the completion list's choices, once the runtime is adopted."""
        self._terminal_fd = terminal_fd
        self._early: EarlySession | None = None
        """The session ``continue_last`` resumes, drawn from the store before the runtime
        existed (app.tui.early_session): the runtime's store takes over its pages."""
        self._resuming = continue_last
        """``continue_last`` still decides what the chat shows: until the runtime resumes
        the session, or the user opens another one (ctrl+n) first, which then stays."""
        self._first_theme(saved_theme(self.root, self.env) or DEFAULT_THEME)

    def _first_theme(self, name: str) -> None:
        """The theme of the first frame: the one saved in the project's or the user's
        config, read before the config package is, else the default. Only its file is loaded now (its
        warnings come again when every theme is)."""
        register_themes(self, self._user_themes, only=name)
        if not start_with_theme(self, name):
            register_themes(self, self._user_themes, only=DEFAULT_THEME)
            start_with_theme(self, DEFAULT_THEME)

    def _remember_terminal(self, driver: Driver) -> None:
        self.terminal = driver

    def call_attention(self, message: str) -> None:
        """A turn ended or a question waits: while the terminal does not have focus, the
        bell and a desktop notification as ``tui.notify`` says (app.tui.attention)."""
        if self.app_focus or self.terminal is None or self.runtime is None:
            return
        sequence = attention_sequence(self.runtime.config.tui.notify, message, self.env)
        if sequence:
            self.terminal.write(sequence)
            self.terminal.flush()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults()

    def get_default_screen(self) -> MainScreen:
        return MainScreen(lambda: self.prompt, id="_default")

    def compose(self) -> ComposeResult:
        # The main screen lays these out side by side (app.tcss), the status bar docked below.
        with Vertical(id="conversation"):
            yield ChatLog(id="chat")
            yield QueuedMessages(id="queued")
            yield PromptInput(id="prompt", placeholder="Ask anything · f1 for keys")
        yield FilesSidebar(id="sidebar")
        yield StatusBar(id="status")

    @property
    def chat(self) -> ChatLog:
        return self.query_one("#chat", ChatLog)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    @property
    def queued(self) -> QueuedMessages:
        return self.query_one("#queued", QueuedMessages)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def sidebar(self) -> FilesSidebar:
        return self.query_one("#sidebar", FilesSidebar)

    @property
    def turn_running(self) -> bool:
        return self._turn_session is not None

    # -- start-up ------------------------------------------------------------------------

    async def on_mount(self) -> None:
        if self._terminal_fd is not None:
            hung_up = partial(self.exit, return_code=HANGUP_EXIT_CODE)
            watch_for_hangup(self._terminal_fd, asyncio.get_running_loop(), hung_up)
        self.prompt.focus()
        self.status.model_label = "starting…"
        self._show_sidebar()
        if self.runtime is not None:
            self._register_themes()
            await self._adopt_runtime(self.runtime)
        else:
            self.call_after_refresh(self._register_themes)
            if not self.continue_last:
                self.call_after_refresh(self._build_runtime)

    def on_ready(self) -> None:
        """The first frame is on screen: ``--continue`` reads the session to resume now,
        as soon as it can (the runtime is built once it is drawn)."""
        if self.continue_last and self.runtime is None:
            self._show_early_session()

    def _register_themes(self) -> None:
        """Every theme, shipped and the user's (the first frame needed only the default),
        before the config's theme is applied."""
        for warning in register_themes(self, self._user_themes):
            self.notify(warning, severity="warning", timeout=8)

    @work(exit_on_error=False, group="startup")
    async def _show_early_session(self) -> None:
        """``--continue``: the end of the session to resume, read from the store while the
        runtime does not exist yet. The runtime is built once the chat holds its first
        screens, or once its end fills the view and the turns above wait for the keyboard
        to be quiet (app.tui.widgets.chat_log), so that drawing the end and building the
        runtime do not compete for the interpreter (the end shows sooner)."""
        try:
            early = await asyncio.to_thread(read_early_session, self.root, self.cli_model, self.env)
            if early is not None and self._resuming and self.runtime is None:
                self._early = early
                await self._draw_session(early.session_id, early.pages)
                if self.session_id == early.session_id:  # else the user opened another meanwhile
                    self._show_title(early.title, early.cost)
                    await self.chat.opened()
            elif early is not None:
                early.database.close()
        except asyncio.CancelledError:
            raise  # the app is closing: no runtime to build
        except Exception:
            self._build_runtime()  # the early view is a head start only: start-up goes on without it
            raise
        self._build_runtime()

    @work(thread=True, exit_on_error=False, group="startup")
    def _build_runtime(self) -> None:
        from app.config import load_config
        from app.runtime import Runtime
        from app.tui.config_watch import fingerprint
        from app.tui.model_choice import demo_fallback, demo_workspace

        warnings: list[str] = []
        read = fingerprint(self.root)  # before reading: a save from now on starts a retry
        try:
            config = load_config(self.root, warn=warnings.append)
            # The offline demo writes files: in a folder of its own, not in the user's.
            demo_root = demo_workspace(self.env) if demo_fallback(self.cli_model, config, self.env) else None
            runtime = Runtime.build(demo_root) if demo_root else Runtime.build(self.root, config=config)
        except OpencodeError as err:
            # mypy solves Textual's `R | Awaitable[R]` callback type as Never for a coroutine function.
            self.call_from_thread(self._startup_failed, str(err), read)  # type: ignore[arg-type]
            return
        for warning in warnings:  # the terminal is the app's: stderr would not show
            self.call_from_thread(self.notify, warning, severity="warning", timeout=8)
        for module in ADOPT_MODULES:
            importlib.import_module(module)
        runtime.commands  # noqa: B018 - read here, off the UI thread (custom command files, YAML)
        runtime.hooks  # noqa: B018 - likewise (the hook files)
        self.call_from_thread(self._adopt_runtime, runtime)  # type: ignore[arg-type]  # as above

    async def _startup_failed(self, message: str, read: Fingerprint) -> None:
        """The core could not start (a broken config): say why and what to do, the status
        first, so the notice never shows beside a status that still says "starting". When
        a config file is to blame, wait for it to be saved and try again; anything else (a
        variable, the database) needs a new start."""
        from app.config import config_files

        first = self._startup_error is None
        self._startup_error = message
        self.status.model_label = "not started"
        in_a_file = any(str(path) in message for path in config_files(self.root))
        todo = (
            "Fix the file and save it: opencode starts as soon as it reads well, then sends a prompt you typed "
            "meanwhile."
            if in_a_file
            else "Fix it and start opencode again."
        )
        await self.chat.add_notice(f"{message}\n{todo}", "error")
        if first:
            self._startup_done()
        if in_a_file:
            self._retry_when_config_saved(read)

    @work(exclusive=True, group="config-watch", exit_on_error=False)
    async def _retry_when_config_saved(self, read: Fingerprint) -> None:
        from app.tui.config_watch import config_saved

        await config_saved(self.root, read)
        self._build_runtime()

    def _runtime_or_why(self, refused: str) -> Runtime | None:
        """The runtime, or None after saying why (``refused``: "Models cannot open")."""
        if self.runtime is None:
            if self._startup_error is not None:
                self.notify(
                    f"{refused}: opencode has not started (fix the configuration shown in the chat "
                    "and save it)",
                    severity="warning",
                )
            else:
                self.notify(f"{refused} yet: opencode is still starting")
        return self.runtime

    async def _adopt_runtime(self, runtime: Runtime) -> None:
        """Everything that needs the core: keys and theme from config, the model, the
        sidebar, the bus listener, the permission queue, the session to continue."""
        from app.llm.catalog import remembered_model
        from app.tui.model_choice import startup_model
        from app.tui.prompt_commands import PromptCommands
        from app.tui.widgets.completion_list import CompletionList
        from app.tui.widgets.permission_queue import PermissionQueue

        self.runtime = runtime
        self.status.unsandboxed = runtime.sandbox.mechanism is None and runtime.config.sandbox.mechanism != "off"
        self._commands = PromptCommands(self)
        # Mounted now rather than composed: it stays hidden until / or @ is typed, and
        # its commands exist only with the runtime, so the first frame need not make it.
        completion = CompletionList(id="completion")
        await self.query_one("#conversation").mount(completion, before=self.prompt)
        self.prompt.completion = completion
        self.prompt.choices_for = self._commands.choices
        self.keybindings = dict(runtime.config.tui.keybindings)
        self.set_keymap(self.keybindings)
        self.call_after_refresh(self._warn_unknown_keybindings)
        if not apply_theme(self, runtime.config.tui.theme):  # mostly already the theme of the first frame
            apply_theme(self, DEFAULT_THEME)
            self.notify(
                f"Unknown theme {runtime.config.tui.theme!r} in tui.theme: using {DEFAULT_THEME}", severity="warning"
            )
        remembered = remembered_model(runtime.config.data_dir(runtime.root))
        model, onboarding = startup_model(self.cli_model, runtime.config, self.env, remembered)
        self.use_model(model)
        if self.continue_last:  # first: the session is what the user waits for
            await self._continue_latest(runtime)
        await self.sidebar.attach(runtime)
        self._listen()
        self._start_services(runtime)
        queue = PermissionQueue(self, runtime.permissions, on_asking=self._asking)
        # A partial, not a coroutine: one made now would be left unawaited (and warned about
        # while the interpreter shuts down) by an app closed before the worker starts.
        # (mypy solves WorkType's union as Never for a partial, as for call_from_thread above.)
        self.run_worker(partial(queue.run, runtime.bus), name="permissions", group="permissions")  # type: ignore[arg-type]
        if self._startup_error is not None:
            await self.chat.add_notice("The configuration reads well now: opencode has started.", "info")
        for notice in [*runtime.notices, *runtime.commands.notices]:
            await self.chat.add_notice(notice, "warning")
        from app.tui.hook_trust import ask_hook_trust

        await ask_hook_trust(self, runtime)
        if onboarding:
            if runtime.root != self.root.resolve():
                onboarding += (
                    f"\n\nThe demo works in a folder of its own, {home_relative(runtime.root, self.env)}: "
                    f"nothing in {home_relative(self.root.resolve(), self.env)} is touched."
                )
            await self.chat.add_notice(onboarding, "info")
        if self._prompt_waits:
            self._prompt_waits = False
            self.prompt.action_submit()  # what the box holds now: the user may have changed it
        if self._startup_error is None:
            self._startup_done()
        self._startup_error = None

    async def _continue_latest(self, runtime: Runtime) -> None:
        """Open the latest session; the one drawn before the runtime existed, when it is
        that session, stays as drawn and reads on from the runtime's store."""
        latest = await asyncio.to_thread(runtime.store.sessions.latest)
        early, self._early = self._early, None
        if not self._resuming:  # the user opened another session first: it stays
            if early is not None:
                early.database.close()
            return
        self._resuming = False
        if early is None:
            if latest is not None:
                await self.open_session(latest.id)
            return
        kept = (
            latest is not None
            and early.matches(runtime, latest.id)
            and await self.chat.read_from(self.message_pages(early.session_id))
        )
        early.database.close()
        if kept:
            self.sidebar.session_id = early.session_id
            self.prompt.earlier_prompts = await asyncio.to_thread(runtime.store.messages.prompts, early.session_id)
        else:  # not what the runtime resumes: its own, or a blank chat
            await self.open_session(latest.id if latest is not None else None)

    def _asking(self, asking: bool) -> None:
        self.status.asking = asking
        if asking:
            self.call_attention("A permission question waits for your answer")

    def _warn_unknown_keybindings(self) -> None:
        """A misspelt id in tui.keybindings would otherwise remap nothing, silently."""
        if not self.keybindings:
            return  # nothing to check: the screens that list every id stay unimported
        known = {row.binding_id for _, rows in self.help_sections() for row in rows}
        unknown = sorted(set(self.keybindings) - known)
        if unknown:
            self.notify(
                f"Unknown key binding id in tui.keybindings: {', '.join(unknown)} (f1 lists every id)",
                severity="warning",
                timeout=8,
            )

    def _startup_done(self) -> None:
        """Start-up is over: when it ran with the cyclic collector paused (``pause_gc``),
        freeze what it made (modules, widgets, services: they live as long as the app, so
        later collections skip them) and turn the collector back on."""
        if self._gc_paused:
            self._gc_paused = False
            gc_policy.resume()

    @work(group="services", exit_on_error=False)
    async def _start_services(self, runtime: Runtime) -> None:
        """The workspace watcher (outside changes reach the sidebar and the chat), MCP
        servers connecting in the background, and the diff highlighter's lexers (in a
        thread, so the first diff in the chat does not stall the UI)."""
        from app.tui.widgets.diff_view_highlight import warm_up

        await runtime.start_watching()
        runtime.mcp.start()
        self.run_worker(warm_up, thread=True, group="warm-up", exit_on_error=False)

    # -- the bus ---------------------------------------------------------------------------

    @work(exclusive=True, group="bus")
    async def _listen(self) -> None:
        from app.tui.listener import listen

        assert self.runtime is not None
        await listen(self, self.runtime)

    # -- prompts and turns -----------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _prompt_typed(self) -> None:
        with suppress(NoMatches):  # the chat is gone once the app is closing
            self.chat.typed()

    @on(PromptInput.Submitted)
    async def _submitted(self, message: PromptInput.Submitted) -> None:
        if self._commands is not None and await self._commands.run(message.text):
            return
        if message.shown != message.text:
            self.chat.shown_as[message.text] = message.shown
        if self._turn_session is not None:
            self._hold(message.text, steer=message.steer)
            return
        await self.send_prompt(message.text)

    # -- steering and queued messages (docs/tui.md, "Steering") ----------------------------

    def _hold(self, text: str, *, steer: bool) -> None:
        """A message sent while a reply runs: with alt+enter, to that reply's next step;
        with enter (or when no reply can take it), queued for after the turn."""
        session_id = self._turn_session
        if steer and session_id is not None and any(loop.steer(session_id, text) for loop in self._loops.values()):
            self.queued.add("steering", text)
        else:
            self.queued.add("queued", text)

    def action_steer(self, text: str = "") -> None:
        """``/steer MESSAGE``: as alt+enter."""
        if not text.strip():
            self.notify("/steer takes the message to give the running reply, e.g. /steer use the v2 API", severity="warning")
        elif self._turn_session is None:
            self.run_worker(self.send_prompt(text.strip()), group="send", exit_on_error=False)
        else:
            self._hold(text.strip(), steer=True)

    def delivered(self, text: str) -> None:
        """The running turn stored a steering message: it shows in the chat now."""
        self.queued.delivered(text)

    def action_edit_queued(self) -> None:
        item = self.queued.pop_last()
        if item is None:
            self.notify("No queued message to edit", timeout=3)
            return
        kind, text = item
        if self.prompt.text.strip():
            self.queued.add(kind, text)
            self.notify("The prompt holds text: send or clear it first, then alt+up", severity="warning")
            return
        if kind == "steering":
            for loop in self._loops.values():
                loop.take_steering(self._turn_session or "")
        self.prompt.load_text(text)
        self.prompt.move_cursor(self.prompt.document.end)

    def _after_turn(self, session_id: str, reason: str) -> None:
        """What the turn did not deliver goes back to the queue; after a turn that ended
        by itself the queue is sent as the next prompt (cancelled: it waits)."""
        leftover = [text for loop in self._loops.values() for text in loop.take_steering(session_id)]
        self.queued.take("steering")
        for text in leftover:
            self.queued.add("queued", text)
        if reason == "cancelled":
            if self.queued.items:
                self.notify("Queued messages wait above the prompt: alt+up takes the last back", timeout=5)
            return
        waiting = self.queued.take("queued")
        if waiting and session_id == self.session_id:
            self.call_after_refresh(self.run_worker, self.send_prompt("\n\n".join(waiting)), group="send", exit_on_error=False)

    async def send_prompt(
        self, text: str, *, agent: str | None = None, model: str | None = None, confined: bool = False
    ) -> None:
        """Start a turn with ``text`` in the current session (created on the first prompt);
        ``agent`` and ``model`` (a custom command's) serve this prompt only; ``confined``:
        it is a repository command's template (its mentions stay inside the workspace)."""
        if self.runtime is None:
            self._prompt_waits = True
            self.prompt.load_text(self.chat.shown_as.get(text, text))
            self.prompt.move_cursor(self.prompt.document.end)
            if self._startup_error is not None:
                self.notify(
                    "opencode has not started (see the chat): your prompt waits here and is sent once the "
                    "configuration is fixed and saved",
                    severity="warning",
                )
            else:
                self.notify("Starting up: your prompt waits here and is sent in a moment")
            return
        if self.turn_running:
            self._hold(text, steer=False)
            return
        from app.llm.preflight import model_problem

        problem = await asyncio.to_thread(model_problem, self.model, self.runtime.config.providers, self.env)
        if problem is not None:  # said at once, and the prompt is kept for once it is fixed
            self.prompt.load_text(text)
            await self.chat.add_notice(problem, "error")
            return
        if self.session_id is None:
            session = await asyncio.to_thread(self.runtime.store.sessions.create, "", None, self.model)
            await self._show_session(session.id)
        await self.chat.show_end()
        self._run_turn(self.session_id, text, agent or self.agent, model or self.model, confined)

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, session_id: str, text: str, agent: str, model: str, confined: bool) -> None:
        self._turn_session = session_id
        outcome, reason = "The turn could not start", "failed"
        try:
            result = await self._loop_for(model).run(session_id, text, agent=agent, model=model, confined=confined)
            outcome, reason = TURN_OUTCOMES.get(result.reason, f"The turn ended ({result.reason})"), result.reason
        except OpencodeError as err:
            await self.chat.add_notice(str(err), "error")
        finally:
            self.call_attention(outcome)
            self._turn_session = None
            self.measure_context()
            self._after_turn(session_id, reason)

    def agent_loop(self) -> AgentLoop:
        """The loop that serves the current model (slash commands act through it)."""
        return self._loop_for(self.model)

    def _loop_for(self, model: str) -> AgentLoop:
        """One agent loop per provider (litellm, or each script), built on first use."""
        from app.llm.agent import AgentLoop
        from app.llm.scripted import is_scripted, provider_for

        assert self.runtime is not None
        key = model if is_scripted(model) else "litellm"
        if key not in self._loops:
            provider = (self._providers or provider_for)(model)
            self._loops[key] = AgentLoop(self.runtime, provider, env=self.env)
        return self._loops[key]

    def action_next_agent(self) -> None:
        """Tab in the prompt: the next primary agent (coder, plan, then custom ones) takes
        the next prompt; a running reply keeps the agent it started with."""
        runtime = self._runtime_or_why("The agent cannot change")
        if runtime is None:
            return
        agents = runtime.agents.primary()
        names = [agent.name for agent in agents]
        chosen = agents[(names.index(self.agent) + 1) % len(agents)] if self.agent in names else agents[0]
        self.agent = chosen.name
        self.status.agent = chosen.name
        self.notify(f"Agent: {chosen.name}" + (f" · {chosen.description}" if chosen.description else ""), timeout=3)

    @work(group="jobs", exit_on_error=False)
    async def action_jobs(self, arguments: str = "") -> None:
        """``/jobs``: the session's background jobs on a screen where a key stops one, also
        while a reply runs; ``/jobs stop N`` stops one at once."""
        from app.prompt.session_commands import jobs
        from app.prompt.slash_commands import CommandCall
        from app.tui.screens.jobs import JobsScreen

        runtime = self._runtime_or_why("The jobs cannot be listed")
        if runtime is None or self.session_id is None:
            return
        if not arguments.strip() and runtime.jobs.of(self.session_id):
            await self.push_screen(JobsScreen(runtime.jobs, self.session_id))
            return
        try:
            line = await jobs(CommandCall(self.agent_loop(), self.session_id, arguments))
        except OpencodeError as err:
            self.notify(str(err), severity="warning")
            return
        await self.chat.add_notice(line, "info")

    @work(group="worktree", exit_on_error=False)
    async def action_worktree(self, arguments: str = "") -> None:
        """``/worktree NAME``: make or reuse the git worktree NAME, then exit for ``run_tui``
        to start opencode again in it (app/worktrees/restart.py); a missing or bad name, or
        a workspace outside git, is one line in the chat and the session goes on."""
        from app.worktrees.restart import prepare_restart

        if self.turn_running:
            await self.chat.add_notice("A reply is still running: wait for it or press escape, then /worktree", "warning")
            return
        try:
            restart = await asyncio.to_thread(prepare_restart, self.root, arguments)
        except OpencodeError as err:
            await self.chat.add_notice(str(err), "warning")
            return
        self.exit(result=restart)

    @work(group="context", exit_on_error=False)
    async def action_context(self) -> None:
        """``/context``: what fills the next request, by part, as a notice in the chat; the
        status bar takes the same total."""
        if self._runtime_or_why("The context cannot be measured") is None:
            return
        if self.session_id is None:
            self.notify("Nothing measured yet: send a prompt first", severity="warning")
            return
        try:
            size = await self.agent_loop().context_size(self.session_id, agent=self.agent, model=self.model)
        except OpencodeError as err:
            self.notify(str(err), severity="warning")
            return
        if not self.turn_running:
            self.status.context_tokens, self.status.context_window = size.total, size.window
        await self.chat.add_notice(size.lines(), "info")

    async def action_agents(self) -> None:
        """``/agents``: the primary agents (the current one marked; tab switches) and the
        sub-agents the task tool starts, as a notice in the chat."""
        runtime = self._runtime_or_why("The agents cannot be listed")
        if runtime is None:
            return
        lines = ["Primary agents (tab in the prompt switches; ▸ takes the next prompt):"]
        lines += [f"{'▸' if a.name == self.agent else ' '} {a.name}: {a.description}" for a in runtime.agents.primary()]
        lines += ["Sub-agents (the task tool starts them):"]
        lines += [f"  {a.name}: {a.description}" for a in runtime.agents.subagents()]
        await self.chat.add_notice("\n".join(lines), "info")

    def action_cancel_turn(self) -> None:
        """Escape: from the files sidebar back to the prompt; at the prompt, cancel the reply."""
        if self._files_focused():
            self.prompt.focus()
            return
        if self._turn_session is None:
            return
        for loop in self._loops.values():
            loop.cancel(self._turn_session)

    # -- find and copy ---------------------------------------------------------------------

    async def action_find(self, text: str | None = None) -> None:
        """The find bar above the prompt, mounted the first time it is asked for."""
        from app.tui.widgets.find_bar import FindBar

        if self.screen is not self.prompt.screen:
            self.notify("Find works in the main chat: escape goes back to it", severity="warning")
            return
        found = self.query(FindBar)
        bar = found.first() if found else FindBar(self.chat, id="find")
        if not found:
            await self.query_one("#conversation").mount(bar, before=self.prompt)
        bar.open(text)

    def on_find_bar_closed(self) -> None:
        self.prompt.focus()

    async def action_copy(self) -> None:
        """A list to pick what to copy: the last reply first, then the prompts, replies and
        code blocks the chat holds, newest first."""
        from app.tui.copying import chat_copyables, first_line, last_reply

        pages = self.chat.pages
        reply = await last_reply(pages) if pages is not None else None
        if reply is None:
            self.notify("Nothing to copy yet: the conversation has no reply", severity="warning")
            return
        choices = [("Copy the last reply", partial(self.copy_text, reply, "the last reply"),
                    first_line(reply))]
        choices += [(f"Copy {item.label}", partial(self.copy_text, item.text, item.label.split(":")[0].lower()),
                     "") for item in chat_copyables(self.chat)]
        self.search_commands(choices, placeholder="Copy…")

    def copy_text(self, text: str, what: str) -> None:
        """``text`` to the system clipboard (OSC 52: through SSH and tmux too)."""
        self.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self.notify(f"Copied {what} ({lines} line{'' if lines == 1 else 's'})", timeout=3)

    def on_task_view_open_requested(self, message: TaskView.OpenRequested) -> None:
        """Enter on a task block in the chat: the sub-agent's transcript, over the chat."""
        self.open_transcript(message.session_id, message.title)

    @work(group="transcript", exclusive=True, exit_on_error=False)
    async def open_transcript(self, session_id: str, title: str) -> None:
        """A sub-agent's session, full screen and live (escape returns)."""
        from app.tui.screens.transcript import TranscriptScreen

        pages = self.message_pages(session_id)
        if pages is not None:
            running = any(loop.is_running(session_id) for loop in self._loops.values())
            await self.push_screen(TranscriptScreen(title, pages, running=running))


    # -- undo, redo and rewind of whole turns (docs/undo.md) ---------------------------------

    def action_undo_turn(self) -> None:
        self._turn_step("undo")

    def action_redo_turn(self) -> None:
        self._turn_step("redo")

    def action_rewind(self, arguments: str = "") -> None:
        """``/rewind``: the session's turns to choose from; ``/rewind 2 files`` acts at once."""
        from app.prompt.turn_undo import UndoError, parse_rewind

        session_id = self._steppable("rewind")
        if session_id is None:
            return
        try:
            number, scope = parse_rewind(arguments)
        except UndoError as err:
            self.notify(str(err), severity="warning")
            return
        if number is None:
            self._pick_rewind(session_id)
        else:
            self._step_turn(session_id, "rewind", number, scope)

    @work(group="turn", exit_on_error=False)
    async def _pick_rewind(self, session_id: str) -> None:
        from app.prompt.turn_undo import rewindable
        from app.tui.screens.rewind import RewindScreen

        assert self.runtime is not None
        entries = await asyncio.to_thread(rewindable, self.runtime, session_id)
        if not entries:
            self.notify("Nothing to rewind: this session has no turn left to take back", severity="warning")
            return
        pick = await self.push_screen_wait(RewindScreen(entries))
        if pick is not None:
            self._step_turn(session_id, "rewind", pick.number, pick.scope)

    def _turn_step(self, action: str) -> None:
        session_id = self._steppable(action)
        if session_id is not None:
            self._step_turn(session_id, action)

    def _steppable(self, action: str) -> str | None:
        """The session to undo, redo or rewind in, or None after saying why not."""
        if self._runtime_or_why(f"Nothing can {action}") is None:
            return None
        if self.session_id is None:
            self.notify(f"Nothing to {action}: this session has no turn yet", severity="warning")
            return None
        if self.turn_running:
            self.notify(f"A reply is still running: press escape to cancel it, then {action}", severity="warning")
            return None
        return self.session_id

    @work(group="turn", exit_on_error=False)
    async def _step_turn(self, session_id: str, action: str, number: int = 0, scope: UndoScope = "both") -> None:
        """Undo, redo or rewind, then show the session again; the prompt of a turn taken
        out of the conversation goes back in the input (unless the input holds something
        else: that is the user's, and kept)."""
        from app.prompt.turn_undo import redo_turn, rewind_to, undo_turn

        assert self.runtime is not None
        self._turn_session = self.redrawing = session_id
        try:
            if action == "rewind":
                step = await rewind_to(self.runtime, session_id, number, scope)
            else:
                step = await (undo_turn if action == "undo" else redo_turn)(self.runtime, session_id)
            await self.open_session(session_id)
        except OpencodeError as err:
            await self.chat.add_notice(str(err), "error")
            return
        finally:
            self._turn_session = self.redrawing = None
            self.measure_context()
        files = f"{len(step.files)} file{'' if len(step.files) == 1 else 's'}"
        what = "Turn" if step.turns == 1 else f"{step.turns} turns"
        typed = self.prompt.text.strip()
        if action == "redo":
            if typed == step.prompt.strip():
                self.prompt.clear()
            self.notify(f"{what} redone: {files} changed again")
        elif step.scope == "files":
            self.notify(f"{what} rewound: {files} put back; the conversation keeps them")
        elif typed and typed != step.prompt.strip():
            self.notify(f"{what} {_PAST[action]}: {files} put back; your prompt was not put in the input, which holds other text")
        else:
            self.prompt.load_text(step.prompt)
            self.prompt.move_cursor(self.prompt.document.end)
            self.notify(f"{what} {_PAST[action]}: {files} put back; its prompt is in the input")
        self.prompt.focus()

    async def action_export(self) -> None:
        """The session's transcript as markdown in a new file in the workspace root, as
        /export does (the palette's "Export session"; docs/export.md)."""
        if self._runtime_or_why("The session cannot be exported") is not None and self._commands is not None:
            await self._commands.run("/export")

    # -- sessions --------------------------------------------------------------------------

    async def open_session(self, session_id: str | None) -> None:
        """Show a stored session (None: a blank one, stored with its first prompt): its
        end at once, earlier pages as the user scrolls up (see ChatLog)."""
        await self._show_session(session_id)
        if session_id is not None and self.runtime is not None:
            messages = self.runtime.store.messages
            self.prompt.earlier_prompts = await asyncio.to_thread(messages.prompts, session_id)

    def message_pages(self, session_id: str | None) -> MessagePages | None:
        """The pages a chat reads ``session_id``'s messages from."""
        from app.tui.message_pages import MessagePages

        if session_id is None or self.runtime is None:
            return None
        return MessagePages(self.runtime.store.messages, session_id)

    async def _show_session(self, session_id: str | None) -> None:
        """Draw the session, then its title and cost in the status bar."""
        self._resuming = False  # chosen (ctrl+n, a first prompt): what --continue would resume no longer replaces it
        await self._draw_session(session_id, self.message_pages(session_id))
        session, cost = None, 0.0
        if session_id is not None and self.runtime is not None:
            sessions = self.runtime.store.sessions
            session = await asyncio.to_thread(sessions.get, session_id)
            cost = (await asyncio.to_thread(sessions.tree_usage, session_id)).cost  # its sub-agents' included
        self._show_title(session.title if session else "", cost)

    async def _draw_session(self, session_id: str | None, pages: MessagePages | None) -> None:
        """Draw the session's end; a keyboard left in the old chat (a block the redraw
        removes) goes to the prompt, not to whatever Textual picks next."""
        self.session_id = session_id
        in_chat = self._focus_within(self.chat)
        await self.chat.show_session(session_id, pages)
        if in_chat:
            self.prompt.focus()

    def _show_title(self, title: str, cost: float) -> None:
        """The shown session's title and cost (its sub-agents' included) in the status bar."""
        status = self.status
        status.title = title
        status.cost = cost
        status.context_tokens = 0  # not measured on opening: /context, and the next turn, measure it
        status.cache_read = status.cache_write = 0
        self.sidebar.session_id = self.session_id

    @work(group="context", exclusive=True, exit_on_error=False)
    async def measure_context(self) -> None:
        """The status bar's token count: the session's next request as the loop measures
        it for compaction and ``/context`` (the provider's count once there is one)."""
        session_id = self.session_id
        if self.runtime is None or session_id is None or not self.model or self.turn_running:
            return
        try:
            size = await self.agent_loop().context_size(session_id, agent=self.agent, model=self.model)
        except OpencodeError:
            return  # no usable model yet: the count waits for one
        if session_id == self.session_id and not self.turn_running:
            self.status.context_tokens, self.status.context_window = size.total, size.window

    def action_sessions(self) -> None:
        runtime = self._runtime_or_why("Sessions cannot open")
        if runtime is None:
            return
        from app.tui.screens.sessions import SessionPick, SessionsScreen

        async def picked(pick: SessionPick | None) -> None:
            if pick is not None:
                await self.open_session(pick.session_id if pick.action == "switch" else None)
                self.prompt.focus()  # a session chosen: what comes next is a prompt

        self.push_screen(SessionsScreen(runtime.store.sessions, self.session_id), picked)

    async def action_new_session(self) -> None:
        await self.open_session(None)

    # -- models, themes, sidebar, help -----------------------------------------------------

    @work(group="models", exclusive=True, exit_on_error=False)
    async def action_models(self) -> None:
        """The models screen, once its list is built (litellm's map, a local Ollama asked)."""
        runtime = self._runtime_or_why("Models cannot open")
        if runtime is None:
            return
        from app.tui.model_choice import available_models
        from app.tui.screens.models import ModelsScreen

        choices = await available_models(runtime.config, self.env, self.model)
        self.push_screen(ModelsScreen(choices, self.model, list(runtime.config.providers)), self.pick_model)

    def pick_model(self, model: str | None) -> None:
        """A model picked on the models screen: used from the next prompt on and
        remembered as this project's last used model."""
        if model and self.runtime is not None:
            from app.llm.catalog import remember_model

            remember_model(self.runtime.config.data_dir(self.runtime.root), model)
        if model:
            self.use_model(model)
            self.prompt.focus()

    def use_model(self, model: str | None) -> None:
        """Talk to ``model`` from the next prompt on. A real (not scripted) model needs
        litellm: its import starts now, in a thread, so the first prompt finds it ready."""
        from app.llm.provider import start_background_import
        from app.llm.scripted import is_scripted
        from app.tui.model_choice import model_label

        if model:
            self.model = model
            self.status.model_label = model_label(model)
            if not is_scripted(model):
                start_background_import()
                if self._litellm_unsettled:
                    self._litellm_unsettled = False
                    self._settle_litellm()

    @work(group="litellm", exit_on_error=False)
    async def _settle_litellm(self) -> None:
        """litellm's import makes some 400,000 objects that live as long as the app. A full
        collection scans them all (the screen and keys stall meanwhile) and the import would
        set off several: none runs until it is done, and then its objects are frozen, so
        later full passes skip them. The agent loop and the tools, which the first turn
        would otherwise import on the event loop as the prompt is sent, are imported then
        too, in a thread, and frozen with it."""
        from app.llm.provider import litellm_imported

        with gc_policy.full_passes_held():
            await litellm_imported()
            await asyncio.to_thread(import_turn_modules)
        gc_policy.freeze()

    def use_theme(self, name: str) -> None:
        if apply_theme(self, name):
            self._save_theme(name)

    @work(thread=True, group="config", exit_on_error=False)
    def _save_theme(self, name: str) -> None:
        """A theme is the user's preference, saved in their global config for every
        project; a project whose own config sets one keeps it there (it asked for it)."""
        from app.config import save_project_setting, save_user_setting

        try:
            if project_theme(self.root) is not None:
                path = save_project_setting(self.root, "tui.theme", name)
            else:
                path = save_user_setting("tui.theme", name, self.env)
        except OpencodeError as err:
            self.call_from_thread(self.notify, f"Theme not saved: {err}", severity="error")
        else:
            self.call_from_thread(self.notify, f"Theme {name} saved in {home_relative(path, self.env)}")

    def on_resize(self, event: events.Resize) -> None:
        """The new width comes from the event: this handler runs before App's own, which
        is what updates ``self.size``."""
        self._show_sidebar(event.size.width)

    def _watch_sidebar_open(self) -> None:
        self._show_sidebar()

    def _show_sidebar(self, width: int | None = None) -> None:
        width = self.size.width if width is None else width
        shown = self.sidebar_open if self.sidebar_open is not None else width >= SIDEBAR_MIN_WIDTH
        for sidebar in self.query(FilesSidebar):  # none yet when a resize comes before compose
            if sidebar.display != shown:  # setting it anyway would cost a layout
                if not shown and self._files_focused():  # keys would go to a hidden list
                    self.prompt.focus()
                sidebar.display = shown

    @on(FilesSidebar.Refreshed)
    def _files_refreshed(self, message: FilesSidebar.Refreshed) -> None:
        """An emptied list hides itself (the last file reverted): keys would go nowhere."""
        if message.hid_focus:
            self.prompt.focus()

    def action_toggle_sidebar(self) -> None:
        self.sidebar_open = not self.sidebar.display

    def action_focus_files(self) -> None:
        """Put the keyboard on the files sidebar (showing it if hidden), or back on the prompt."""
        if self._files_focused():
            self.prompt.focus()
            return
        if not self.sidebar.display:
            self.sidebar_open = True
        self.sidebar.focus_files()

    def _files_focused(self) -> bool:
        return self._focus_within(self.sidebar)

    def on_key(self, event: events.Key) -> None:
        """A character typed while the keyboard is in the chat (after shift+tab or a click
        on a block) goes to the prompt, as in a chat app, rather than nowhere; keys a
        binding uses (space and enter on blocks, say) keep their action."""
        if not (event.is_printable and event.character) or event.key in self.active_bindings:
            return
        if self.screen is not self.prompt.screen or not self._focus_within(self.chat):
            return
        event.stop()
        self.prompt.focus()
        self.prompt.insert(event.character)

    def _focus_within(self, widget: Widget) -> bool:
        """The keyboard is on ``widget`` or inside it, on the main screen."""
        focused = self.prompt.screen.focused
        return focused is not None and widget in focused.ancestors_with_self

    def action_services(self) -> None:
        """The palette's view of the status bar's server marks, with why one failed."""
        lines = [service.line for service in self.status.services]
        self.notify("\n".join(lines) or "No language or MCP servers have started", timeout=10)

    def action_help(self) -> None:
        """Every key binding, then the slash commands (once the runtime is up)."""
        from app.tui.screens.help import HelpRow, HelpScreen

        sections = self.help_sections()
        if self.runtime is not None:
            rows = [
                HelpRow(f"/{command.name} {command.hint}".rstrip(), command.description, "")
                for command in self.runtime.commands.available("tui")
            ]
            sections.append(("Slash commands (type / in the prompt)", rows))
        self.push_screen(HelpScreen(sections))

    def action_themes(self) -> None:
        """The themes to choose from, fuzzy-searched (``/theme``)."""
        self.search_commands(
            [(command.name, command.run, command.help) for command in self.palette_commands()
             if command.name.startswith("Theme: ")],
            placeholder="Search for a theme…",
        )

    def help_sections(self) -> list[tuple[str, list[Any]]]:
        """Every screen's and widget's bindings, as the help screen lists them."""
        from app.tui.screens.confirm import ConfirmScreen
        from app.tui.screens.diff_screen import DiffScreen
        from app.tui.screens.help import HelpScreen, help_rows
        from app.tui.screens.models import ModelsScreen
        from app.tui.screens.permission_screen import PermissionScreen
        from app.tui.screens.sessions import SessionsScreen
        from app.tui.screens.transcript import TranscriptScreen
        from app.tui.widgets.find_bar import FindBar
        from app.tui.widgets.message_user import UserMessage
        from app.tui.widgets.sidebar_list import ModifiedFileList
        from app.tui.widgets.task_view import TaskView
        from app.tui.widgets.tool_render import ToolHeader, ToolOutput

        owners: list[tuple[str, type[Widget] | type[App]]] = [
            ("Anywhere", OpencodeApp),
            ("Prompt", PromptInput),
            ("Chat", ToolOutput),
            ("Chat: tool calls read back", ToolHeader),
            ("Chat: your prompts", UserMessage),
            ("Chat: sub-agent tasks", TaskView),
            ("Find in the conversation", FindBar),
            ("Sub-agent transcript", TranscriptScreen),
            ("Files sidebar", ModifiedFileList),
            ("Diff viewer", DiffScreen),
            ("Permission question", PermissionScreen),
            ("Sessions", SessionsScreen),
            ("Models", ModelsScreen),
            ("Confirmation", ConfirmScreen),
            ("Help", HelpScreen),
        ]
        return [(title, help_rows(owner.BINDINGS, self.keybindings)) for title, owner in owners]

    def palette_commands(self) -> list[PaletteCommand]:
        commands = [
            PaletteCommand("New session", "Start a new conversation", self.action_new_session),
            PaletteCommand("Sessions", "Switch, rename or delete sessions", self.action_sessions),
            PaletteCommand("Model", "Choose the model", self.action_models),
            PaletteCommand("Next agent", "Switch the agent of the next prompt (tab in the prompt)", self.action_next_agent),
            PaletteCommand("Toggle sidebar", "Show or hide the modified files", self.action_toggle_sidebar),
            PaletteCommand("Files", "Move the keyboard to the modified files", self.action_focus_files),
            PaletteCommand("Servers", "Language and MCP servers: their states and errors", self.action_services),
            PaletteCommand("Compact session", "Summarise the conversation to free context", self.action_compact),
            PaletteCommand("Undo turn", "Take back the last turn: its file changes and messages", self.action_undo_turn),
            PaletteCommand("Redo turn", "Bring back the last turn undone", self.action_redo_turn),
            PaletteCommand("Rewind", "Go back to before an earlier turn: files, conversation or both", self.action_rewind),
            PaletteCommand("Find", "Find text in the conversation, its earliest messages included", self.action_find),
            PaletteCommand("Copy", "Copy the last reply, a message or a code block", self.action_copy),
            PaletteCommand("Export session", "Write the transcript to a markdown file in the workspace", self.action_export),
            PaletteCommand("Help", "List every key binding", self.action_help),
            PaletteCommand("Quit", "Leave opencode", self.action_quit),
        ]
        if self.runtime is not None and self.session_id is not None:
            commands += [
                PaletteCommand(
                    f"Sub-agent: {child.title}",
                    "Open the transcript of this task of the session",
                    partial(self.open_transcript, child.id, child.title),
                )
                for child in self.runtime.store.sessions.children(self.session_id)
            ]
        saved_in = "this project's .opencode.json" if project_theme(self.root) else "your global config"
        commands += [
            PaletteCommand(f"Theme: {name}", f"Use this theme (saved in {saved_in})", partial(self.use_theme, name))
            for name in available_themes(self)
        ]
        return commands

    def action_compact(self) -> None:
        if self._runtime_or_why("The session cannot be compacted") is None:
            return
        if self.session_id is None:
            self.notify("Nothing to compact yet: send a prompt first", severity="warning")
            return
        if self.turn_running:
            self.notify("A reply is still running: wait for it or press escape, then compact", severity="warning")
            return
        self._compact(self.session_id)

    @work(group="turn", exit_on_error=False)
    async def _compact(self, session_id: str) -> None:
        """Summarise the session now; the summary shows in the chat like any message."""
        self._turn_session = session_id
        self.status.working = True
        try:
            await self._loop_for(self.model).compact(session_id, model=self.model)
        except OpencodeError as err:
            self.notify(str(err), severity="warning")
        else:
            self.notify("Session compacted: the next request starts from the summary")
        finally:
            self._turn_session = None
            self.status.working = False
            self.measure_context()

    # -- quitting --------------------------------------------------------------------------

    def action_quit_twice(self) -> None:
        """ctrl+c copies a selection, else clears the prompt (ctrl+z brings the text back);
        only from an empty prompt does the first press warn and the second quit."""
        focused = self.focused
        if isinstance(focused, TextArea | Input) and focused.selected_text:
            focused.action_copy()
            return
        if self.prompt.text and self.screen is self.prompt.screen:
            self.prompt.clear()
            self._quit_pressed_at = -QUIT_WINDOW
            self.notify("Prompt cleared (ctrl+z brings it back); ctrl+c on an empty prompt quits", timeout=QUIT_WINDOW)
            return
        now = self._clock()
        if now - self._quit_pressed_at < QUIT_WINDOW:
            self.exit()
            return
        self._quit_pressed_at = now
        self.notify("Press ctrl+c again to quit", timeout=QUIT_WINDOW)


def read_early_session(root: Path, cli_model: str | None, env: Mapping[str, str]) -> EarlySession | None:
    """app.tui.early_session's ``read_latest``, its module imported here too: in the same
    thread, off the UI thread, with one trip there and back."""
    from app.tui.early_session import read_latest

    return read_latest(root, cli_model, env)


def home_relative(path: Path, env: Mapping[str, str]) -> str:
    """``path`` with the home folder written ``~``, as people read it."""
    home = env.get("HOME")
    if home and path.is_relative_to(home):
        return f"~/{path.relative_to(home)}"
    return str(path)


def run_tui(root: Path, *, model: str | None, continue_last: bool) -> int:
    """The `opencode` command without a subcommand: the full-screen app in ``root``. After
    its first frame the app builds the runtime in a thread, then, when the model is a real
    one, starts litellm's background import (app.llm.provider.start_background_import)."""
    terminal = sys.__stdin__.fileno() if sys.__stdin__ is not None else None  # None: stdin closed
    app = OpencodeApp(root, model=model, continue_last=continue_last, pause_gc=True, terminal_fd=terminal)
    try:
        restart = app.run()
    finally:
        if app.runtime is not None:
            app.runtime.close()
    if restart is not None:  # /worktree NAME: the process becomes `opencode --worktree NAME`
        from app.core.child_environment import for_children

        argv = restart.argv()
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(argv[0], argv, for_children())
    return app.return_code or 0
