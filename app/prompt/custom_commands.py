"""Custom slash commands: Markdown files in ``.opencode/commands/`` (the project's) and
``~/.config/opencode/commands/`` (the user's, for every project; ``$XDG_CONFIG_HOME``
when set). ``NAME.md`` is the command ``/NAME``; its body is the prompt template and its
optional front matter sets ``description``, ``agent`` and ``model``.

The user's file wins over the project's of the same name (a repository cannot replace
what the user wrote for themselves), with one notice naming both. A built-in command keeps
its name: a file of the same name is refused. Every file that cannot be used is one notice
naming it, and the others still load. A project's command is marked ``repository``: what
its template mentions is attached from inside the workspace only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core import frontmatter
from app.prompt.slash_commands import (
    NAME_PATTERN,
    CommandRegistry,
    SlashCommand,
    builtin_commands,
    takes_arguments,
)

COMMANDS_FOLDER = "commands"
PROJECT_FOLDER = Path(".opencode") / COMMANDS_FOLDER
TEXT_KEYS = ("description", "agent", "model")
MAX_FILES = 500
"""More command files than this in one folder are left out, with a notice."""
INIT_PROMPT = Path(__file__).parents[1] / "llm" / "prompts" / "init.md"


def user_commands_folder(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/opencode/commands`` (or ``~/.config/...``); None without a home."""
    from app.core.config_paths import user_config_file

    config_file = user_config_file(env)
    return config_file.parent / COMMANDS_FOLDER if config_file is not None else None


def load_registry(root: Path, env: Mapping[str, str]) -> CommandRegistry:
    """Built-in commands, then the user's custom ones, then the project's (except those
    of a name the user's already have)."""
    builtins = builtin_commands(INIT_PROMPT.read_text(encoding="utf-8").strip())
    reserved = {command.name for command in builtins}
    notices: list[str] = []
    custom: dict[str, SlashCommand] = {}
    user_folder = user_commands_folder(env)
    if user_folder is not None:
        custom.update((command.name, command) for command in _read_folder(user_folder, reserved, notices))
    for command in _read_folder(root / PROJECT_FOLDER, reserved, notices):
        own = custom.get(command.name)
        if own is None:
            custom[command.name] = replace(command, repository=True)
        else:
            notices.append(f"custom command {command.origin} not loaded: your own /{command.name} ({own.origin}) is used")
    return CommandRegistry.of([*builtins, *sorted(custom.values(), key=lambda c: c.name)], notices)


def _read_folder(folder: Path, reserved: set[str], notices: list[str]) -> Iterable[SlashCommand]:
    for path in frontmatter.markdown_files(folder, "custom commands", MAX_FILES, notices):
        try:
            yield read_command(path, reserved)
        except frontmatter.FrontMatterError as err:
            notices.append(f"custom command not loaded: {err}")


def read_command(path: Path, reserved: Set[str] = frozenset()) -> SlashCommand:
    """The command one file defines; FrontMatterError naming the file when it cannot be used."""
    name = path.stem
    if not NAME_PATTERN.fullmatch(name):
        raise frontmatter.FrontMatterError(
            f"{path}: {name!r} is not a command name: use letters, digits, '_', '.' and '-'"
        )
    if name in reserved:
        raise frontmatter.FrontMatterError(f"{path}: /{name} is a built-in command: rename the file")
    document = frontmatter.read(path)
    meta = _checked_meta(document.meta, path)
    if not document.body:
        raise frontmatter.FrontMatterError(f"{path}: the prompt template is empty: write it below the front matter")
    return SlashCommand(
        name=name,
        description=meta.get("description") or _first_line(document.body),
        kind="prompt",
        template=document.body,
        agent=meta.get("agent"),
        model=meta.get("model"),
        origin=str(path),
        hint="[arguments]" if takes_arguments(document.body) else "",
    )


def _checked_meta(meta: Mapping[str, Any], path: Path) -> dict[str, str]:
    unknown = sorted(set(meta) - set(TEXT_KEYS))
    if unknown:
        raise frontmatter.FrontMatterError(
            f"{path}: unknown front-matter key {unknown[0]!r}: use {', '.join(TEXT_KEYS)}"
        )
    for key, value in meta.items():
        if value is not None and not isinstance(value, str):
            raise frontmatter.FrontMatterError(f"{path}: {key} must be text, not {type(value).__name__}")
    return {key: value.strip() for key, value in meta.items() if value}


def _first_line(body: str) -> str:
    line = body.strip().splitlines()[0]
    return line if len(line) <= 60 else line[:59] + "…"
