"""Split a shell command into the simple commands it runs, for the bash tool's permission
check and banned list.

A rule such as ``"git *": "allow"`` must not allow ``git log; rm -rf src``: the bash tool
evaluates every simple command on its own, including those inside ``$(...)``, backticks,
``<(...)``, subshells, groups, loops and functions. The parsing is done by the
tree-sitter-bash grammar (a real parser of bash, not a guess with regular expressions); a
command it cannot parse, or one of the forms it is known to misread (backquote corner cases,
a keyword read as a command name), is reported as incomplete, and the bash tool asks about it.

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
from dataclasses import dataclass, field
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
     "xargs", "stdbuf", "setsid", "watch", "coproc"}
)
# Words that start or end compound statements: a command named so is a misreading.
_KEYWORDS = frozenset({"{", "}", "then", "do", "done", "fi", "esac", "elif", "else", "in", "!"})
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


@dataclass
class _Found:
    """What a walk of the syntax tree collects. ``opaque`` is set when something runs that
    the grammar did not parse (see ``_backquoted``)."""

    parts: list[SimpleCommand] = field(default_factory=list)
    opaque: bool = False


def parse_command(command: str) -> ParsedCommand:
    """Every simple command in ``command``, in source order (outer before inner)."""
    source = command.encode("utf-8")
    tree = _parser().parse(_FOUR_BYTE_CHARACTER.sub(b"wwww", source))
    token = _SOURCE.set(source)
    try:
        found = _Found()
        _collect(tree.root_node, found)
    finally:
        _SOURCE.reset(token)
    # Error recovery may invent an empty command (`a |`); the command is incomplete anyway.
    return ParsedCommand(
        tuple(p for p in found.parts if p.text), complete=not (tree.root_node.has_error or found.opaque)
    )


@cache
def _parser() -> Parser:
    """Loaded on first use: importing the grammar costs ~20 ms that `opencode tool patch`
    (measured as a whole process) must not pay."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _raw(node: Node) -> str:
    return _SOURCE.get()[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _text(node: Node) -> str:
    return _raw(node).strip(" \t\r\n")  # shell blanks only


def _collect(node: Node, found: _Found) -> None:
    parts = found.parts
    if node.type == "command_substitution" and _backquoted(node, found):
        return
    if node.type == "heredoc_redirect":
        _heredoc_backquotes(node, found)
    name = node.child_by_field_name("name") if node.type == "command" else None
    if name is not None and _text(name) in _KEYWORDS:
        found.opaque = True  # `! { a; }` is read as a command named "{": the grammar went wrong
    if node.type in _SIMPLE or (
        node.type == "variable_assignment" and node.parent is not None and node.parent.type not in _ASSIGNMENT_OWNERS
    ):
        parts.append(SimpleCommand(_text(node), _programs(node)))
    elif node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type in _SIMPLE:
            parts.append(SimpleCommand(_text(node), _programs(body)))
            for child in node.children:
                _collect_inside(child, found) if child == body else _collect(child, found)
            return
        parts.append(SimpleCommand(_text(node)))
    _collect_inside(node, found)


def _collect_inside(node: Node, found: _Found) -> None:
    """The parts nested in ``node`` (substitutions, bodies), not ``node`` itself."""
    for child in node.children:
        _collect(child, found)


def _backquoted(node: Node, found: _Found) -> bool:
    """Handle a `...` substitution the grammar cannot be trusted with; False to walk it as usual.

    Inside backquotes bash removes the backslash of \\$, \\` and \\\\ before running the text,
    so `echo \\`id\\`` runs a nested substitution the grammar reads as a plain word; and
    tree-sitter-bash 0.25 merges two backquoted substitutions of one command
    (`echo `a` `b``) into one. Either way the grammar's parts are wrong: the whole
    substitution becomes one part, the command is marked opaque (so it is asked about),
    and the scripts bash would run still feed the banned list."""
    raw = _raw(node)
    if not (raw.startswith("`") and raw.endswith("`") and len(raw) > 1):
        return False
    inner = raw[1:-1]
    scripts = _backquote_scripts(inner)
    if scripts == [inner]:
        return False
    _opaque(node, scripts, found)
    return True


def _heredoc_backquotes(node: Node, found: _Found) -> None:
    """An unquoted here-document runs the `...` substitutions of its body, which the
    grammar leaves as text: the command is opaque, and they feed the banned list."""
    start = next((child for child in node.children if child.type == "heredoc_start"), None)
    if start is None or any(quote in _text(start) for quote in "'\"\\"):  # quoted: no expansion
        return
    scripts = _backquote_scripts(_raw(node).partition("\n")[2], inside=False)
    if scripts:
        _opaque(node, scripts, found)


def _opaque(node: Node, scripts: list[str], found: _Found) -> None:
    """``node`` as one part whose programs are those of the ``scripts`` it runs, and the
    command marked opaque."""
    programs = tuple(name for script in scripts for name in _programs_in_script(script))
    found.parts.append(SimpleCommand(_text(node), programs))
    found.opaque = True


def _backquote_scripts(text: str, *, inside: bool = True) -> list[str]:
    """The scripts bash runs for backquoted text (``inside``: ``text`` starts inside the
    backquotes): escapes removed, split where an unescaped backquote opens or closes one."""
    scripts, current = [], []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and text[i + 1 : i + 2] in ("$", "`", "\\"):
            current.append(text[i + 1])
            i += 2
            continue
        if char == "`":
            if inside:
                scripts.append("".join(current))
            current, inside = [], not inside
        elif inside:
            current.append(char)
        i += 1
    if inside:
        scripts.append("".join(current))
    return scripts


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
    if program in _KEYWORDS:  # a misread compound statement (`{ curl x`): the next word runs
        return (program, *_programs_in_words(rest))
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
