"""Split a shell command into the simple commands it runs, for the bash tool's permission
check and banned list.

A rule such as ``"git *": "allow"`` must not allow ``git log; rm -rf src``: the bash tool
evaluates every simple command on its own, including those inside ``$(...)``, backticks,
``<(...)``, subshells, groups, loops and functions. The parsing is done by the
tree-sitter-bash grammar (a real parser of bash, not a guess with regular expressions); a
command it cannot parse is reported as incomplete, and the bash tool asks about it.

What counts as one part (its text, exactly as written, is the permission subject):
- a simple command with its arguments, leading ``NAME=value`` assignments and its own
  redirections (``echo hi > out.txt`` is one part);
- ``export``/``declare``/``local``/``unset``, ``[ ... ]``/``[[ ... ]]``, and a bare
  assignment (``PATH=.`` changes what later parts run, so it is judged too);
- a redirection of something bigger (``{ a; b; } > f``, ``for ...; done < f``) adds the
  whole redirected statement as a part, besides the commands inside it: one more part can
  only make the check stricter.
"""

from __future__ import annotations

import re
import shlex
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# Node types that are one part on their own.
_SIMPLE = frozenset(
    {"command", "declaration_command", "unset_command", "test_command", "variable_assignments"}
)
# A `NAME=value` inside these belongs to the command; anywhere else it is a statement.
_ASSIGNMENT_OWNERS = frozenset({"command", "declaration_command", "variable_assignments"})
# Programs that run the program named in their arguments: every later word is checked
# against the banned list (`sudo -u root curl x` runs curl).
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout",
     "xargs", "stdbuf", "setsid", "watch"}
)
# Shells whose `-c SCRIPT` argument (and `eval`'s arguments) are parsed for the banned list.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})


@dataclass(frozen=True)
class SimpleCommand:
    """One part of a command line. ``programs`` are the names it may run, for the banned
    list: the program (basename, quotes removed) and, for a wrapper such as ``sudo`` or a
    ``sh -c 'script'``, the names found after it. Empty when the name is computed
    (``$TOOL x``): the permission rules still judge the text."""

    text: str
    programs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedCommand:
    """``complete`` is False when the command has a syntax error (an unbalanced quote...):
    ``parts`` then holds only what could be recognised, and the caller must ask."""

    parts: tuple[SimpleCommand, ...]
    complete: bool


# tree-sitter-bash 0.25 crashes the process (a segfault, not every time) on `{` followed
# by a character outside the Basic Multilingual Plane (found by fuzzing). Such characters
# (4 bytes in UTF-8) are parsed as four ASCII letters, which keeps every byte offset, and
# the texts of parts are cut from the real command.
_FOUR_BYTE_CHARACTER = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_SOURCE: ContextVar[bytes] = ContextVar("shell_parse_source")


def parse_command(command: str) -> ParsedCommand:
    """Every simple command in ``command``, in source order (outer before inner)."""
    source = command.encode("utf-8")
    tree = _parser().parse(_FOUR_BYTE_CHARACTER.sub(b"wwww", source))
    token = _SOURCE.set(source)
    try:
        parts: list[SimpleCommand] = []
        _collect(tree.root_node, parts)
    finally:
        _SOURCE.reset(token)
    # Error recovery may invent an empty command (`a |`); the command is incomplete anyway.
    return ParsedCommand(tuple(p for p in parts if p.text), complete=not tree.root_node.has_error)


@cache
def _parser() -> Parser:
    """Loaded on first use: importing the grammar costs ~20 ms that `opencode tool patch`
    (measured as a whole process) must not pay."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    raw = _SOURCE.get()[node.start_byte : node.end_byte]
    return raw.decode("utf-8", errors="replace").strip(" \t\r\n")  # shell blanks only


def _collect(node: Node, parts: list[SimpleCommand]) -> None:
    if node.type in _SIMPLE or (
        node.type == "variable_assignment" and node.parent is not None and node.parent.type not in _ASSIGNMENT_OWNERS
    ):
        parts.append(SimpleCommand(_text(node), _programs(node)))
    elif node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type in _SIMPLE:
            parts.append(SimpleCommand(_text(node), _programs(body)))
            for child in node.children:
                _collect_inside(child, parts) if child == body else _collect(child, parts)
            return
        parts.append(SimpleCommand(_text(node)))
    _collect_inside(node, parts)


def _collect_inside(node: Node, parts: list[SimpleCommand]) -> None:
    """The parts nested in ``node`` (substitutions, bodies), not ``node`` itself."""
    for child in node.children:
        _collect(child, parts)


def _programs(node: Node) -> tuple[str, ...]:
    if node.type != "command":
        return ()
    name = node.child_by_field_name("name")
    words = [_static_word(name)] if name is not None else []
    words += [_static_word(arg) for arg in node.children_by_field_name("argument")]
    return _programs_in_words(words)


def _programs_in_words(words: list[str | None]) -> tuple[str, ...]:
    """``words`` are the literal words of one simple command (None where computed)."""
    if not words or words[0] is None:
        return ()
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program in WRAPPERS:
        # Options and NAME=value assignments are skipped; every other word may be the program.
        names = (word.rsplit("/", 1)[-1] for word in rest if word and not word.startswith("-") and "=" not in word)
        return (program, *names)
    if program == "eval":
        script = " ".join(word for word in rest if word)
        return (program, *_programs_in_script(script))
    flag = next((i for i, word in enumerate(rest[:-1]) if _is_c_flag(word)), None)
    if program in _SHELLS and flag is not None and rest[flag + 1]:
        return (program, *_programs_in_script(rest[flag + 1]))
    return (program,)


def _is_c_flag(word: str | None) -> bool:
    """``-c``, or short flags combined with it (``-lc``, ``-ec``)."""
    return word is not None and word.startswith("-") and not word.startswith("--") and "c" in word


def _programs_in_script(script: str) -> tuple[str, ...]:
    return tuple(name for part in parse_command(script).parts for name in part.programs)


def _static_word(node: Node) -> str | None:
    """The word's value after quote removal, or None when it expands at run time."""
    raw = _text(node)
    if "$" in raw or "`" in raw:
        return None
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return None
    return tokens[0] if len(tokens) == 1 else None
