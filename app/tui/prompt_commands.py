"""The TUI's side of slash commands and @ mentions: what the prompt's completion list
offers, and what a sent ``/command`` does here.

Commands come from the runtime's registry (app/prompt/slash_commands.py). A ``screen`` command
runs the app action ``SCREEN_ACTIONS`` names; a ``session`` command runs the app action
named there if the app has its own (``/compact`` shows progress in the status bar, ``/undo``
puts the prompt back), else the registry's handler with the arguments typed (``/export
json``), whose line is shown as a notification; a ``prompt`` command sends its text as the
prompt.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from app.core.errors import OpencodeError
from app.prompt.completion import prepare, rank, workspace_paths
from app.prompt.slash_commands import CommandCall, CommandError, SlashCommand, session_handler
from app.tui.completion import Choice, Trigger

if TYPE_CHECKING:
    from textual.worker import Worker

    from app.runtime import Runtime
    from app.tui.app import OpencodeApp

SCREEN_ACTIONS = {
    "new": "new_session",
    "sessions": "sessions",
    "models": "models",
    "agents": "agents",
    "theme": "themes",
    "help": "help",
    "quit": "quit",
    "compact": "compact",
    "undo": "undo_turn",
    "redo": "redo_turn",
    "rewind": "rewind",
    "context": "context",
    "steer": "steer",
    "jobs": "jobs",
    "copy": "copy",
    "worktree": "worktree",
}
"""Command name -> the app action that runs it in the TUI."""
TAKES_ARGUMENTS = frozenset({"rewind", "steer", "jobs", "worktree"})
"""Commands whose app action gets what was typed after the name (``/rewind 2 files``)."""
SYNC_RANK_LIMIT = 2_000
"""Up to this many paths the file list is filtered at each key on the spot; a larger
workspace is ranked in a thread (the list shows the choices before meanwhile)."""


class PromptCommands:
    """Built with the app; knows the workspace's files once the runtime is up."""

    def __init__(self, app: OpencodeApp) -> None:
        self.app = app
        self.paths: list[str] | None = None
        """The workspace's files and folders, as last listed (None: not yet)."""
        self._listing: Worker[None] | None = None
        self._reading: Worker[None] | None = None

    # -- the completion list -----------------------------------------------------------------

    def choices(self, trigger: Trigger) -> list[Choice]:
        runtime = self.app.runtime
        if runtime is None:
            return []
        if trigger.kind == "command":
            if trigger.query == "":  # a new /: read the command files again, what is known meanwhile
                self._reload_commands(runtime)
            commands = {command.name: command for command in runtime.commands.available("tui")}
            return [_command_choice(commands[name]) for name in rank(trigger.query, commands)]
        if self.paths is None or trigger.query == "":  # a new @: list again, what is known meanwhile
            self._list_paths(runtime)
        paths = self.paths or []
        if len(paths) <= SYNC_RANK_LIMIT:
            return [_path_choice(path) for path in rank(trigger.query, paths)]
        self.app.run_worker(
            partial(self._ranked, trigger, paths), thread=True, group="rank", exclusive=True, exit_on_error=False
        )
        return self.app.prompt.completion.choices if self.app.prompt.completion else []

    def _ranked(self, trigger: Trigger, paths: list[str]) -> None:
        """In a thread: rank the paths, then offer them if the token is still the one typed."""
        found = [_path_choice(path) for path in rank(trigger.query, paths)]
        self.app.call_from_thread(self._offer, trigger, found)

    def _offer(self, trigger: Trigger, found: list[Choice]) -> None:
        prompt = self.app.prompt
        if prompt.trigger == trigger and prompt.completion is not None:
            prompt.completion.offer(found)

    def _list_paths(self, runtime: Runtime) -> None:
        if self._listing is None or self._listing.is_finished:
            self._listing = self.app.run_worker(self._listed(runtime), group="paths", exit_on_error=False)

    async def _listed(self, runtime: Runtime) -> None:
        data_dir = runtime.config.data_dir(runtime.root).resolve()
        skip = [data_dir.relative_to(runtime.root).as_posix()] if data_dir.is_relative_to(runtime.root) else []
        paths = await asyncio.to_thread(workspace_paths, runtime.root, skip)
        await asyncio.to_thread(prepare, paths)
        self.paths = paths
        self.app.prompt.refresh_completion()

    def _reload_commands(self, runtime: Runtime) -> None:
        if self._reading is None or self._reading.is_finished:
            self._reading = self.app.run_worker(self._reloaded(runtime), group="commands", exit_on_error=False)

    async def _reloaded(self, runtime: Runtime) -> None:
        """The commands as the files now say; a file newly broken is one warning."""
        known = set(runtime.commands.notices)
        registry = await asyncio.to_thread(runtime.reload_commands)
        for notice in registry.notices:
            if notice not in known:
                self.app.notify(notice, severity="warning", timeout=8)
        self.app.prompt.refresh_completion()

    # -- a command sent ----------------------------------------------------------------------

    async def run(self, text: str) -> bool:
        """Run ``text`` when it is a slash command (True); False for a plain prompt. A
        command that cannot run here is one warning, and the text stays in the prompt."""
        app = self.app
        if app.runtime is None:
            return False  # it waits in the prompt like any text, and comes back here once started
        try:
            invocation = app.runtime.commands.resolve(text, "tui")
        except CommandError as err:
            app.prompt.load_text(text)
            app.prompt.move_cursor(app.prompt.document.end)
            app.notify(str(err), severity="warning")
            return True
        if invocation is None:
            return False
        command = invocation.command
        if command.kind == "prompt":
            agent = app.runtime.agents.command_agent(app.agent, command.agent)
            await app.send_prompt(invocation.prompt(), agent=agent, model=command.model, confined=command.repository)
        elif command.name == "find":
            await app.action_find(invocation.arguments.strip() or None)
        elif command.name in SCREEN_ACTIONS:
            action = SCREEN_ACTIONS[command.name]
            if command.name in TAKES_ARGUMENTS:
                action = f"{action}({invocation.arguments!r})"
            await app.run_action(action)
        else:
            self._run_session_command(command, invocation.arguments)
        return True

    def _run_session_command(self, command: SlashCommand, arguments: str) -> None:
        app = self.app
        if app.session_id is None:
            app.notify(f"/{command.name} acts on a conversation: send a prompt first", severity="warning")
            return
        if app.turn_running:
            app.notify(f"A reply is still running: wait for it or press escape, then /{command.name}", severity="warning")
            return
        call = CommandCall(app.agent_loop(), app.session_id, arguments, model=app.model)
        app.run_worker(self._session_command(command, call), group="turn", exit_on_error=False)

    async def _session_command(self, command: SlashCommand, call: CommandCall) -> None:
        try:
            line = await session_handler(command)(call)
        except OpencodeError as err:
            self.app.notify(str(err), severity="warning")
        else:
            self.app.notify(line)


def _command_choice(command: SlashCommand) -> Choice:
    label = f"/{command.name} {command.hint}".rstrip()
    return Choice(f"/{command.name} ", label, command.description, runs=not command.expects_arguments)


def _path_choice(path: str) -> Choice:
    return Choice(f"@{path}" if path.endswith("/") else f"@{path} ", path)
