"""Slash commands: what a prompt starting with ``/name`` does, in every front-end.

A command is one of three kinds:

- ``screen``: something a front-end shows or does itself (the TUI opens the models
  picker for ``/models``). Each front-end maps the command's name to its own method; one
  that has none does not list it, and running it there is one line saying where it works.
- ``session``: an operation on a conversation, the same in the TUI, headless (``-p "/compact"
  --continue``) and over ACP. Its ``handler`` is ``"module:function"``, imported on first
  use (as the tools' table does), with the signature
  ``async def handler(call: CommandCall) -> str``: it returns the one line the user sees,
  and raises ``OpencodeError`` (one line too) when it cannot act. A command registers its
  action by naming that function in ``BUILTIN_COMMANDS`` below.
- ``prompt``: a template sent to the agent as the user's prompt, with ``$ARGUMENTS`` (all
  that follows the name) and ``$1``, ``$2``... (its words; quotes group words) replaced:
  ``/init`` and every custom command (``app/prompt/custom_commands.py``).

This module is core: it imports neither Textual nor litellm.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal

from app.core.errors import OpencodeError

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

Surface = Literal["tui", "headless", "acp"]
Kind = Literal["screen", "session", "prompt"]
EVERYWHERE: frozenset[Surface] = frozenset({"tui", "headless", "acp"})
TUI_ONLY: frozenset[Surface] = frozenset({"tui"})
SURFACE_NAMES: dict[Surface, str] = {"tui": "the TUI", "headless": "headless runs (-p)", "acp": "ACP editors"}
MAX_SUGGESTIONS = 3

_COMMAND = re.compile(r"/(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)(?=\s|$)(?P<rest>.*)", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS\b|(?P<index>[1-9][0-9]*))")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What a command's name may be: a letter or digit, then letters, digits, _ . and -."""


class CommandError(OpencodeError):
    """A slash command that cannot run here: unknown, of another front-end, or refused."""


@dataclass(frozen=True)
class SlashCommand:
    name: str
    description: str
    kind: Kind
    where: frozenset[Surface] = EVERYWHERE
    handler: str | None = None
    """For ``session`` commands: ``"module:function"`` (see the module's docstring)."""
    template: str | None = None
    """For ``prompt`` commands: the text sent, before its placeholders are replaced."""
    agent: str | None = None
    """For ``prompt`` commands: the agent that takes the prompt (default: the current one)."""
    model: str | None = None
    """For ``prompt`` commands: the model for this one prompt (default: the current one)."""
    origin: str = "built-in"
    """Where the command comes from: built-in, or its file."""
    repository: bool = False
    """Its file is the project's (the repository's), not the user's: its template's
    mentions attach files inside the workspace only."""
    hint: str = ""
    """What the command takes after its name, for lists ("[message]")."""
    uses_model: bool = False
    """For ``session`` commands: whether its handler calls the model (``/compact``), so a
    headless run must find a usable one first; the others run with none configured."""

    def works_in(self, surface: Surface) -> bool:
        return surface in self.where

    @property
    def expects_arguments(self) -> bool:
        """A custom command whose template has placeholders: lists insert it for the
        arguments to be typed rather than sending it bare."""
        return self.kind == "prompt" and self.origin != "built-in" and takes_arguments(self.template or "")


@dataclass(frozen=True)
class Invocation:
    """A command as typed: the command and what followed its name."""

    command: SlashCommand
    arguments: str

    def prompt(self) -> str:
        """A ``prompt`` command's text, its placeholders replaced by the arguments."""
        assert self.command.template is not None, f"/{self.command.name} is not a prompt command"
        return expand_template(self.command.template, self.arguments).strip()


@dataclass(frozen=True)
class CommandCall:
    """What a ``session`` command's handler gets."""

    loop: Any
    """The front-end's AgentLoop (typed loosely: this module does not import the loop)."""
    session_id: str
    arguments: str
    model: str | None = None


BUILTIN_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "Start a new conversation", "screen", TUI_ONLY),
    SlashCommand("sessions", "Switch, rename or delete sessions", "screen", TUI_ONLY),
    SlashCommand("models", "Choose the model", "screen", TUI_ONLY),
    SlashCommand("agents", "List the agents: primary ones take your prompts, sub-agents tasks", "screen", TUI_ONLY),
    SlashCommand(
        "undo", "Take back the last turn: its file changes, and the turn itself", "session",
        handler="app.prompt.turn_undo:undo_command",
    ),
    SlashCommand("redo", "Put back what the last /undo or /rewind took back", "session", handler="app.prompt.turn_undo:redo_command"),
    SlashCommand(
        "rewind", "Go back to before an earlier turn: its files, the conversation, or both", "session",
        hint="[turn] [files|conversation]", handler="app.prompt.turn_undo:rewind_command",
    ),
    SlashCommand(
        "compact", "Summarise the conversation to free context", "session",
        handler="app.prompt.session_commands:compact", uses_model=True,
    ),
    SlashCommand(
        "context", "What fills the context: system prompt, tools, MCP tools, instructions files, messages",
        "session", handler="app.prompt.session_commands:context", uses_model=True,
    ),
    SlashCommand(
        "jobs", "The background jobs of the session, with their last lines; /jobs stop N stops one", "session",
        hint="[stop N]", handler="app.prompt.session_commands:jobs",
    ),
    SlashCommand(
        "export", "Save the conversation as Markdown or JSON", "session", hint="[md|json]",
        handler="app.prompt.export:export_command",
    ),
    SlashCommand(
        "init", "Study the repository and write or update AGENTS.md", "prompt", template="", hint="[what to stress]"
    ),
    SlashCommand("hooks", "List the hooks and the file each comes from", "session", handler="app.hooks.commands:hooks_command"),
    SlashCommand("skills", "List the skills the agent can load", "session", handler="app.skills.commands:skills_command"),
    SlashCommand(
        "steer", "Give the running reply a message it reads at its next step (as alt+enter)", "screen",
        frozenset({"tui", "acp"}),
        hint="[message]",
    ),
    SlashCommand("find", "Find text in the conversation, its earliest messages included", "screen", TUI_ONLY,
                 hint="[text]"),
    SlashCommand("copy", "Copy the last reply, a message or a code block", "screen", TUI_ONLY),
    SlashCommand(
        "worktree", "Start again in the git worktree NAME (made on branch NAME when missing)", "screen", TUI_ONLY,
        hint="NAME",
    ),
    SlashCommand("theme", "Choose the colour theme", "screen", TUI_ONLY),
    SlashCommand("help", "List the commands and every key binding", "screen", TUI_ONLY),
    SlashCommand("quit", "Leave opencode", "screen", TUI_ONLY),
)
"""The built-in commands, in the order lists show them. ``/init``'s template is the
packaged prompt ``app/llm/prompts/init.md``, read when the registry is built."""


def parse(text: str) -> tuple[str, str] | None:
    """``("name", "arguments")`` for a prompt that starts with ``/name`` (then a space, a
    new line or nothing); None for any other text, so ``/usr/bin/env is broken`` stays a
    prompt."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return match["name"], match["rest"].strip()


def expand_template(template: str, arguments: str) -> str:
    """``$ARGUMENTS`` -> all the arguments; ``$1``, ``$2``... -> each word (quoted words
    count as one; a missing one is empty). Arguments given to a template without any
    placeholder are added after it on a line of their own, so nothing typed is lost."""
    words = _words(arguments)

    def replace(match: re.Match[str]) -> str:
        index = match["index"]
        if index is None:
            return arguments
        position = int(index) - 1
        return words[position] if position < len(words) else ""

    expanded, count = _PLACEHOLDER.subn(replace, template)
    if count == 0 and arguments:
        return f"{template}\n\n{arguments}" if template else arguments
    return expanded


def takes_arguments(template: str) -> bool:
    """Whether the template has a placeholder for what follows the command's name."""
    return _PLACEHOLDER.search(template) is not None


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words rather than an error
        return arguments.split()


def close_names(typed: str, names: Iterable[str], limit: int = MAX_SUGGESTIONS) -> list[str]:
    """The names nearest ``typed``, best first: those it begins, then fuzzy matches."""
    from rapidfuzz import fuzz, process, utils  # loaded when a command is mistyped

    names = list(names)
    starts = [name for name in names if name.startswith(typed.lower())]
    rest = [name for name in names if name not in starts]
    fuzzy = process.extract(
        typed, rest, scorer=fuzz.ratio, processor=utils.default_process, limit=limit, score_cutoff=50
    )
    return (starts + [name for name, _, _ in fuzzy])[:limit]


@dataclass
class CommandRegistry:
    """The commands of one workspace: built-in ones and the custom ones found on disk
    (``app.prompt.custom_commands.load_registry`` builds it; ``Runtime.commands`` holds it)."""

    commands: dict[str, SlashCommand] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    """One line per custom-command file that could not be used (front-ends show them)."""

    @classmethod
    def of(cls, commands: Iterable[SlashCommand], notices: Iterable[str] = ()) -> CommandRegistry:
        return cls({command.name: command for command in commands}, list(notices))

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(self.commands.values())

    def get(self, name: str) -> SlashCommand | None:
        return self.commands.get(name)

    def available(self, surface: Surface) -> list[SlashCommand]:
        """The commands that work in ``surface``, in list order."""
        return [command for command in self if command.works_in(surface)]

    def resolve(self, text: str, surface: Surface) -> Invocation | None:
        """The command ``text`` runs in ``surface``; None when it is not a command at all.
        CommandError (one line) for an unknown name (with the close ones) or a command of
        another front-end."""
        parsed = parse(text)
        if parsed is None:
            return None
        name, arguments = parsed
        command = self.get(name)
        if command is None:
            raise CommandError(self.unknown_line(name, surface))
        if not command.works_in(surface):
            places = " and ".join(SURFACE_NAMES[where] for where in sorted(command.where))
            raise CommandError(f"/{name} works in {places} only, not in {SURFACE_NAMES[surface]}")
        return Invocation(command, arguments)

    def unknown_line(self, name: str, surface: Surface) -> str:
        """"unknown command /nme: did you mean /new, /models?" (or where to find the list)."""
        close = close_names(name, (command.name for command in self.available(surface)))
        if close:
            return f"unknown command /{name}: did you mean {', '.join('/' + other for other in close)}?"
        listed = ", ".join("/" + command.name for command in self.available(surface))
        return f"unknown command /{name}: the commands here are {listed}"


def session_handler(command: SlashCommand) -> Callable[[CommandCall], Coroutine[Any, Any, str]]:
    """The function behind a ``session`` command; CommandError when it has none yet."""
    if command.handler is None:
        raise CommandError(f"/{command.name} is not available in this version of opencode")
    module, _, function = command.handler.partition(":")
    handler: Callable[[CommandCall], Coroutine[Any, Any, str]] = getattr(import_module(module), function)
    return handler


def builtin_commands(init_prompt: str) -> list[SlashCommand]:
    """The built-in commands, ``/init`` with its packaged prompt."""
    return [
        replace(command, template=init_prompt) if command.name == "init" else command
        for command in BUILTIN_COMMANDS
    ]

