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
  only make the check stricter;
- what a part runs through another program is a part too: the command after a wrapper
  (``nohup rm -rf x`` adds ``rm -rf x``), the script of ``sh -c``, ``eval``, ``trap``,
  ``watch``, ``su -c`` and ``env -S``, and each ``find -exec ... ;``. Otherwise
  ``"rm *": "deny"`` would not stop ``timeout 5 rm -rf x``.
"""

from __future__ import annotations

import glob
import posixpath
import re
import shlex
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from app.permission.shell.command_effects import read_program
from app.permission.shell.effects import Touch, ansi_c_text, brace_expanded, find_targets, program_name
from app.permission.shell.program_code import CodeSource, code_source
from app.permission.shell.reads import known
from app.permission.shell.script_input import STDIN_FILES, ShellInput, echoed_text, shell_input

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# Node types that are one part on their own.
_SIMPLE = frozenset(
    {"command", "declaration_command", "unset_command", "test_command", "variable_assignments"}
)
# A `NAME=value` inside these belongs to the command; anywhere else it is a statement.
_ASSIGNMENT_OWNERS = frozenset({"command", "declaration_command", "variable_assignments"})
# Programs that run the program named in their arguments, with the options that take a
# value and the number of plain arguments before that program (`timeout 5 cmd`, `flock
# FILE cmd`). For the banned list every later word counts (`sudo -u root curl x` runs
# curl); for the rules the command after them is a part of its own.
_WRAPPER_SYNTAX: dict[str, tuple[frozenset[str], int]] = {
    name: (frozenset(options.split()), positional)
    for name, options, positional in [
        ("sudo", "-u -g -C -D -h -p -r -t -T -U --user --group --chdir --host --prompt --role --type", 0),
        ("doas", "-u -C", 0),
        ("env", "-u -C -S --unset --chdir --split-string", 0),
        ("command", "", 0),
        ("builtin", "", 0),
        ("exec", "-a", 0),
        ("nohup", "", 0),
        ("time", "-f -o --format --output", 0),
        ("nice", "-n --adjustment", 0),
        ("timeout", "-s -k --signal --kill-after", 1),
        ("xargs", "-I -d -E -L -n -P -s -a --arg-file --delimiter --eof --max-lines --max-args --max-procs", 0),
        ("stdbuf", "-i -o -e --input --output --error", 0),
        ("setsid", "", 0),
        ("watch", "-n -d --interval", 0),
        ("ionice", "-c -n -p -P -u --class --classdata", 0),
        ("taskset", "", 1),
        ("chrt", "", 1),
        ("flock", "-c -w -E --command --timeout --conflict-exit-code", 1),
        ("runuser", "-c -u -g -G --command --user --group --supp-group", 0),
        ("chroot", "--userspec --groups", 1),
        ("nsenter", "-t -S -G --target --setuid --setgid", 0),
        ("unshare", "", 0),
        ("strace", "-e -o -p -s -u -E -a -b -I -O -S -P -X", 0),
        ("ltrace", "-e -o -p -s -u -a -n", 0),
        ("busybox", "", 0),
        ("toybox", "", 0),
        ("coproc", "", 0),
        ("setpriv", "--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits "
         "--selinux-label --apparmor-profile --reset-env --pdeathsig --ruid --euid --rgid --egid", 0),
        ("unbuffer", "", 0),
        ("faketime", "-m -f", 1),
        ("fakeroot", "-l -s -i --lib --faked", 0),
        ("catchsegv", "", 0),
        ("valgrind", "", 0),
        ("eatmydata", "", 0),
        ("nocache", "-n", 0),
        ("chronic", "", 0),
        ("rlwrap", "-f -H -a -p -s -b -C -D -e -g -i -l -m -O -P -q -w -z", 0),
        ("firejail", "", 0),
        ("torsocks", "-u -p -a -P --user --pass --address --port", 0),
        ("proxychains", "-f", 0),
        ("proxychains4", "-f", 0),
        ("numactl", "-C -N -m -p -i -P --physcpubind --cpunodebind --membind --preferred --interleave", 0),
        ("xvfb-run", "-n -e -f -p -s -w --server-num --error-file --auth-file --xauth-protocol "
         "--server-args --wait", 0),
        ("dbus-run-session", "--config-file --dbus-daemon", 0),
        ("systemd-run", "-p -u -E -M -H --property --unit --setenv --uid --gid --machine --host --slice "
         "--description --working-directory -D", 0),
        ("gosu", "", 1),
        ("su-exec", "", 1),
        ("setuidgid", "", 1),
        ("chpst", "-u -U -e -/ -n -l -L -m -d -o -p -f -c", 0),
        ("setarch", "", 1),
        ("linux32", "", 0),
        ("linux64", "", 0),
        ("prlimit", "-p --pid", 0),
        ("trickle", "-u -d -w -t -l -n", 0),
        ("pkexec", "--user", 0),
        ("caffeinate", "-t -w", 0),
        ("parallel", "-j -P -S -n -N -L -I -d -a --jobs --sshlogin --max-args --arg-file --delimiter", 0),
        ("sem", "-j -P --jobs --id", 0),
        ("entr", "", 0),
    ]
}
WRAPPERS = frozenset(_WRAPPER_SYNTAX)
# Words that start or end compound statements: a command named so is a misreading.
_KEYWORDS = frozenset({"{", "}", "then", "do", "done", "fi", "esac", "elif", "else", "in", "!"})
# Programs whose `-c SCRIPT` argument is a command line they run.
_SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "csh", "tcsh", "fish", "su",
     "runuser", "flock", "script"}
)
# Programs whose operands (the arguments that are not options) are mostly paths they read
# or change: the bash tool asks `external_directory` about those outside the workspace.
# Where the first operand is a pattern or a script (grep, sed), one starting with "/" is
# taken for a path too: a needless question, never a file outside read unasked. Not every
# program (`echo /etc` names no file); redirection targets count for every one.
_FILE_COMMANDS = frozenset(
    {"cd", "pushd", "rm", "rmdir", "cp", "mv", "ln", "install", "mkdir", "touch", "chmod", "chown",
     "chgrp", "truncate", "tee", "cat", "head", "tail", "less", "more", "ls", "source", ".",
     "find", "grep", "egrep", "fgrep", "rg", "sed", "sort", "uniq", "wc", "diff", "cmp", "stat", "file",
     "du", "tac", "nl", "od", "xxd", "hexdump", "strings", "base64", "md5sum", "sha1sum", "sha256sum",
     "tar", "zip", "unzip", "gzip", "gunzip", "xz", "unxz", "bzip2", "rsync", "shred", "unlink",
     "readlink", "realpath", "vi", "vim", "nano"}
)
# Programs and builtins whose operands are names, modes, signals or text, not files whose
# content they show: not judged as reads (_named_files). The file changes among them are
# write or delete effects (effects).
_NOT_READING = frozenset(
    """echo printf ls dir vdir stat touch chmod chown chgrp chattr lsattr setfacl getfacl mkdir rmdir rm unlink
    shred srm trash trash-put test [ [[ cd pushd popd dirs basename dirname realpath readlink true false kill
    pkill killall sleep which type hash whereis du df find locate mkfifo mknod truncate export declare typeset
    local readonly unset alias unalias set shopt trap wait jobs fg bg disown exit return break continue shift
    let read mapfile readarray getopts umask ulimit history help logout source . eval exec mktemp tee yes seq
    date cal id whoami groups uname hostname pwd env printenv tput clear reset stty tty nproc free uptime ps
    top pgrep rename prename gio touch sync fc builtin enable compgen complete""".split()
)
# Builtins that change the working directory of the rest of the command.
_DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_BLANK = re.compile(r"\s")
MAX_WORDS = 256
"""Words of a part kept in SimpleCommand.words: a longer command is judged on its first ones."""
SYSTEM_FOLDERS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
_GLOB = re.compile(r"[*?[]")
_KNOWN_VARIABLE = re.compile(r"^(\"?)\$(\{PWD\}|PWD\b|\{HOME\}|HOME\b)")
_PLAIN = re.compile(r"[^\s'\"\\$`#]+")
_ANSI_C = re.compile(r"\$'((?:[^'\\]++|\\.)*+)'", re.DOTALL)


@dataclass(frozen=True)
class SimpleCommand:
    """One part of a command line. ``programs`` are the names it may run, for the banned
    list: the program (basename, quotes removed) and, for a wrapper such as ``sudo`` or a
    ``sh -c 'script'``, the names found after it. Empty when the name is computed
    (``$TOOL x``): the permission rules still judge the text.

    ``paths`` are the paths it names as a file command's operands or as redirection
    targets (quotes removed, `~` kept; "" for one computed at run time). ``directory`` is set for
    ``cd``/``pushd``/``popd``: where it goes, ``~`` for a bare ``cd``, ``""`` when that
    cannot be known (``cd "$X"``, ``cd -``, ``popd``)."""

    text: str
    programs: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    directory: str | None = None
    normal: str = ""
    """The command as the shell runs it, for the rules: quotes and backslashes removed, the
    program by its name (`/bin/rm` is `rm`), words separated by one space. Empty when
    the same as ``text``."""
    touches: tuple[Touch, ...] = ()
    """The files it writes or deletes (effects), redirection targets included."""
    named_elsewhere: bool = False
    """Its program is a path outside the system's program folders (`./git`, `/tmp/x/rm`):
    ``normal`` names it by its file name, which a deny holds against, but an allow for
    that name does not cover a file that only shares it."""
    script_files: tuple[str, ...] = ()
    """Files whose lines it runs as a shell script (`bash x.sh`, `source x.sh`, `sh < x.sh`);
    "" for one named only at run time. The judge reads them (scripts)."""
    program_file: str = ""
    """Its program as a path to a file (`./x`, `bin/tool`), or, when the command changed
    PATH, its name: the judge looks at what that file is (scripts)."""
    code_files: tuple[str, ...] = ()
    """Files an interpreter or `make` runs code from (`python3 x.py`, the Makefile): one
    the command itself writes cannot be judged in advance (scripts)."""
    words: tuple[str, ...] = ()
    """Its literal words (those computed at run time left out), at most ``MAX_WORDS``: what
    a program the judge has no table for may run or change (opaque_programs)."""


@dataclass(frozen=True)
class ParsedCommand:
    """``complete`` is False when the command has a syntax error (an unbalanced quote...):
    ``parts`` then holds only what could be recognised, and the caller must ask."""

    parts: tuple[SimpleCommand, ...]
    complete: bool
    doubts: tuple[str, ...] = ()
    """Why what the command runs cannot be known (it defines a function or an alias, a git
    alias defined elsewhere, ...): the caller asks, even when every part is allowed."""


# tree-sitter-bash 0.25 crashes the process (a segfault, not every time) on `{` followed
# by a character outside the Basic Multilingual Plane (found by fuzzing). Such characters
# (4 bytes in UTF-8) are parsed as four ASCII letters, which keeps every byte offset, and
# the texts of parts are cut from the real command.
_FOUR_BYTE_CHARACTER = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_SOURCE: ContextVar[bytes] = ContextVar("shell_parse_source")
# How many scripts deep the current parse is (`sh -c "sh -c '...'"`), and the limit.
_DEPTH: ContextVar[int] = ContextVar("shell_parse_depth", default=0)
_MAX_SCRIPT_DEPTH = 8
# The variables the command line sets, in source order, as far as known (None where computed).
_ENVIRONMENT: ContextVar[dict[str, str | None] | None] = ContextVar("shell_parse_environment", default=None)
# Paths the command being parsed receives at run time besides its words (see _inner_scripts).
_IMPLICIT: ContextVar[tuple[str, ...]] = ContextVar("shell_parse_implicit", default=())


@dataclass
class _Found:
    """What a walk of the syntax tree collects. ``opaque`` is set when something runs that
    the grammar did not parse (see ``_backquoted``)."""

    parts: list[SimpleCommand] = field(default_factory=list)
    opaque: bool = False
    doubts: list[str] = field(default_factory=list)


def parse_command(command: str) -> ParsedCommand:
    """Every simple command in ``command``, in source order (outer before inner).

    Scripts run by other programs (`sh -c '...'`) are parsed in turn, at most
    ``_MAX_SCRIPT_DEPTH`` deep; a command nested deeper than that, or than Python's stack
    can walk (`$($($(...)))` hundreds deep), is reported incomplete, so it is asked about."""
    depth = _DEPTH.get()
    if depth >= _MAX_SCRIPT_DEPTH:
        return ParsedCommand((), complete=False)
    source = command.encode("utf-8")
    tree = _parser().parse(_FOUR_BYTE_CHARACTER.sub(b"wwww", source))
    tokens = _SOURCE.set(source), _DEPTH.set(depth + 1)
    environment = _ENVIRONMENT.set({}) if _ENVIRONMENT.get() is None else None
    found = _Found()
    try:
        _collect(tree.root_node, found)
    except RecursionError:
        found.opaque = True
    finally:
        _SOURCE.reset(tokens[0])
        _DEPTH.reset(tokens[1])
        if environment is not None:
            _ENVIRONMENT.reset(environment)
    # Error recovery may invent an empty command (`a |`); the command is incomplete anyway.
    # A part found twice (`nohup echo $(id)` finds `id` in the command and in `echo $(id)`)
    # is judged once.
    braces = brace_expanded(command)  # `{rm,x}` runs `rm x`
    extra = [braces.text] if braces is not None and braces.whole else []
    if braces is not None and not braces.whole:  # read again, it would grow again
        found.doubts.append("its brace expansions make too many words to judge")
    extra += _alias_expanded(found.parts)
    if "\\\n" in command:  # a backslash before a line break joins the lines: `r\⏎m x` runs `rm x`
        extra.append(command.replace("\\\n", ""))
    for line in extra:
        inner = parse_command(line)
        found.parts += inner.parts
        found.doubts += inner.doubts
    parts = dict.fromkeys(p for p in found.parts if p.text)
    return ParsedCommand(
        tuple(parts),
        complete=not (tree.root_node.has_error or found.opaque),
        doubts=tuple(dict.fromkeys(found.doubts)),
    )


@cache
def _parser() -> Parser:
    """Loaded on first use: importing the grammar is a cost that `opencode tool patch`
    (measured as a whole process) must not pay."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _raw(node: Node) -> str:
    return _SOURCE.get()[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _text(node: Node) -> str:
    return _source(node.start_byte, node.end_byte)


def _collect(node: Node, found: _Found) -> None:
    parts = found.parts
    if node.type == "command_substitution" and _backquoted(node, found):
        return
    if node.type == "heredoc_redirect":
        _heredoc_backquotes(node, found)
    if node.type == "command_substitution" and any(child.type == "file_redirect" for child in node.children):
        # `$(< file)`: bash reads the file itself, no command runs
        parts.append(SimpleCommand(_text(node), paths=_redirect_targets(node), touches=_redirect_effects(node)))
    name = node.child_by_field_name("name") if node.type == "command" else None
    if name is not None and _text(name) in _KEYWORDS:
        found.opaque = True  # `! { a; }` is read as a command named "{": the grammar went wrong
    if node.type == "function_definition":
        found.doubts.append("it defines a shell function, whose name can stand for any program")
    if node.type in _SIMPLE or (
        node.type == "variable_assignment" and node.parent is not None and node.parent.type not in _ASSIGNMENT_OWNERS
    ):
        _add_simple(node, node, found)
    elif node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type in _SIMPLE:
            _add_simple(node, body, found)
            for child in node.children:
                _collect_inside(child, found) if child == body else _collect(child, found)
            return
        parts.append(SimpleCommand(_text(node), paths=_redirect_targets(node), touches=_redirect_effects(node)))
    _collect_inside(node, found)


def _add_simple(whole: Node, command: Node, found: _Found) -> None:
    """The part for ``command`` (its text that of ``whole``, redirections included), then
    the parts of what it runs through another program."""
    written = _words(command)
    scripts = _inner_scripts(whole, command, written)
    words = _globbed_program(written)
    values = [value for value, _ in words]
    text = _text(whole)
    normal = _normal(words) if words else " ".join(text.split())
    assignments = _assignments(command)
    environment = _ENVIRONMENT.get()
    runs = read_program(values, assignments, _IMPLICIT.get(), environment)
    path_changed = any(name == "PATH" for name, _ in assignments) or (environment is not None and "PATH" in environment)
    if environment is not None and (command.type != "command" or not values):  # `export A=b`, `A=b`
        environment.update(assignments)
    shell = shell_input(values)
    fed = _fed_script(whole, command) if shell is not None and shell.stdin else None
    if _IMPLICIT.get() and _runs_its_input(values, shell):
        found.doubts.append("xargs or find -exec runs a program or script its input names")
    code = code_source(program_name(values[0]), values[1:]) if values and values[0] is not None else None
    if code is not None and code.stdin and _fed_script(whole, command) is not None:
        found.doubts.append(f"{program_name(values[0] or '')} runs code given on its input, whose effects cannot be known")
    program_file = _program_file(values[0], path_changed) if values and values[0] is not None else ""
    found.parts.append(
        SimpleCommand(
            text,
            _programs_in_words(values),
            _file_operands(values) + _redirect_targets(whole),
            _directory(values),
            "" if normal == text else normal,
            runs.touches + _redirect_effects(whole) + _files_run(shell, code, program_file) + _named_files(values),
            bool(values) and values[0] is not None and (
                _named_elsewhere(values[0]) or path_changed  # `./git`, or a PATH the command changed: `PATH=. git`
            ),
            (shell.files if shell else ()) + ((fed.file,) if fed and fed.file is not None else ()),
            program_file,
            code.files if code is not None else (),
            tuple(value for value in values[:MAX_WORDS] if value is not None),
        )
    )
    found.doubts += runs.doubts
    if fed is not None and fed.doubt:
        found.doubts.append(fed.doubt)
    if fed is not None and fed.text:
        scripts.append((fed.text, ()))
    if command.type in ("test_command", "declaration_command", "unset_command"):
        scripts += [(f': "{text}"', ()) for text in _quoted_substitutions(command)]
    if words and values[0] is None:  # `$TOOL x`, `$(echo rm) x`
        name = " ".join(_text(words[0][1]).split())
        found.doubts.append(f"its program is named by {name if len(name) <= 60 else name[:59] + '…'}, known only at run time")
    elif words and _runs_computed_script(program_name(values[0] or ""), values[1:]):  # `eval "$X"`, `sh -c "$X"`
        found.doubts.append(f"{program_name(values[0] or '')} runs a command line known only at run time")
    for script, implicit in [*scripts, *((script, ()) for script in runs.scripts)]:
        token = _IMPLICIT.set(implicit)
        try:
            inner = parse_command(script)
        finally:
            _IMPLICIT.reset(token)
        found.parts.extend(inner.parts)
        found.doubts += inner.doubts
        found.opaque |= not inner.complete


def _quoted_substitutions(node: Node) -> list[str]:
    """The quoted texts holding a command substitution in a `[ ... ]`, `[[ ... ]]`,
    `declare` or `unset`, which evaluate them as names or arithmetic (`[ -v 'a[$(rm x)]' ]`,
    `declare -a 'x=($(rm x))'`), so the substitution runs; escaped for double quotes."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type in ("raw_string", "ansi_c_string"):
            value = _static_word(current)
            if value is not None and ("$(" in value or "`" in value):
                found.append(value.replace('"', '\\"'))
        else:
            stack.extend(current.children)
    return found


@dataclass(frozen=True)
class _Fed:
    """What a shell reading its standard input gets: a script known from the command
    (``text``), a file (``file``, "" when computed), or neither (``doubt`` says why)."""

    text: str = ""
    file: str | None = None
    doubt: str = ""


_UNKNOWN_INPUT = "a shell runs what its input holds, which cannot be known here"


def _fed_script(whole: Node, command: Node) -> _Fed | None:
    """The script a shell reading its standard input runs (`bash <<< 'rm a'`, a
    here-document, `bash < x.sh`, `echo 'rm a' | sh`); None when nothing feeds it (the
    bash tool's commands read an empty input)."""
    own = [child for child in command.children if child.type == "herestring_redirect"]
    if whole != command:
        own += [child for child in whole.children if child.type in ("heredoc_redirect", "file_redirect")]
    for redirect in reversed(own):
        fed = _redirected_input(redirect)
        if fed is not None:
            return fed
    node = whole
    while node.parent is not None and node.parent.type != "program":
        parent = node.parent
        if parent.type == "pipeline" and node != parent.named_children[0]:
            left = node.prev_named_sibling
            text = echoed_text([value for value, _ in _words(left)]) if node == whole and left is not None else None
            return _Fed(text=text) if text is not None else _Fed(doubt=_UNKNOWN_INPUT)
        if parent.type == "pipeline" and parent.parent is not None and parent.parent.type == "heredoc_redirect":
            return _Fed(doubt=_UNKNOWN_INPUT)  # `cat <<EOF | sh`: fed by the command the document is for
        if parent.type == "redirected_statement" and node == parent.child_by_field_name("body") and any(
            _redirected_input(child) is not None for child in parent.children if child != node
        ):
            return _Fed(doubt=_UNKNOWN_INPUT)
        node = parent
    return None


def _redirected_input(redirect: Node) -> _Fed | None:
    """The input one redirection gives, None when it gives none (`> out`, `2>&1`)."""
    if redirect.type == "herestring_redirect":
        value = next((_static_word(child) for child in redirect.named_children), None)
        return _Fed(text=value + "\n") if value is not None else _Fed(doubt=_UNKNOWN_INPUT)
    if redirect.type == "heredoc_redirect":
        start = next((child for child in redirect.children if child.type == "heredoc_start"), None)
        body = next((child for child in redirect.children if child.type == "heredoc_body"), None)
        text = _raw(body) if body is not None else ""
        quoted = start is not None and any(quote in _text(start) for quote in "'\"\\")
        if quoted or not any(sign in text for sign in "$`\\"):
            return _Fed(text=text)
        return _Fed(doubt=_UNKNOWN_INPUT)
    if redirect.type != "file_redirect":
        return None
    destination = redirect.child_by_field_name("destination")
    operator = "".join(_text(c) for c in redirect.children if c != destination and c.type != "file_descriptor")
    if destination is None or destination.type == "number" or operator not in ("<", "<>"):
        return None
    target = _static_word(destination)
    return _Fed(doubt=_UNKNOWN_INPUT) if target in STDIN_FILES else _Fed(file=target or "")


def _runs_its_input(values: list[str | None], shell: ShellInput | None) -> bool:
    """Whether a command run by xargs or find -exec runs what it is handed: a program
    named `{}`, a shell whose script (`-c`, or a file after it) comes from the names."""
    if not values or values[0] is None or "{}" in values[0]:
        return True
    flag = _c_flag_index(values[1:])
    if program_name(values[0]) in _SHELLS and _is_c_flag(values[-1]):
        return True  # `xargs sh -c`: the first name is the script
    if flag is not None and "{}" in (values[flag + 2] or "{}"):
        return True
    return shell is not None and not shell.files and shell.stdin  # `xargs bash`: the names are scripts


def _program_file(program: str, path_changed: bool) -> str:
    """The program as a file the judge looks at: a path outside the system's folders, or
    any name when the command changed PATH (`PATH=.:$PATH x` may run `./x`)."""
    if "/" in program.rstrip("/"):
        return program if _named_elsewhere(program) else ""
    return program if path_changed and program not in _KEYWORDS else ""


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


def _words(node: Node) -> list[tuple[str | None, Node]]:
    """The name and arguments of a ``command`` node: (value after quote removal, or None
    where it expands at run time; the node). Empty for other kinds of parts."""
    if node.type != "command":
        return []
    name = node.child_by_field_name("name")
    nodes = ([name] if name is not None else []) + node.children_by_field_name("argument")
    return [(_static_word(word), word) for word in nodes]


def _alias_expanded(parts: list[SimpleCommand]) -> list[str]:
    """The parts that use an alias the command defines (`alias r=rm; r x`), with the alias
    replaced (`rm x`): judged besides, so a deny on what the alias stands for holds."""
    aliases: dict[str, str] = {}
    for part in parts:
        if (part.normal or part.text).startswith("alias "):
            words = (split_words(part.text) or [])[1:]  # an unclosed quote: no alias to follow
            for word in words:
                name, assigns, value = word.partition("=")
                if assigns:
                    aliases[name] = value
    lines = []
    for part in parts if aliases else ():
        first, _, rest = (part.normal or part.text).partition(" ")
        unused = dict(aliases)  # an alias may name another, but not itself again
        while first in unused:
            first, _, more = unused.pop(first).partition(" ")
            rest = f"{more} {rest}".strip()
            lines.append(f"{first} {rest}".strip())
    return lines


def _globbed_program(words: list[tuple[str | None, Node]]) -> list[tuple[str | None, Node]]:
    """A program named by a pattern (`/bin/r? x`) is what the pattern matches on disk, as
    the shell expands it: the first match runs, the others are its first arguments."""
    if not words or words[0][0] is None or not _GLOB.search(words[0][0]) or not _unquoted(words[0][1]):
        return words
    matches = sorted(glob.glob(words[0][0]))
    return [(match, words[0][1]) for match in matches] + words[1:] if matches else words


def _named_elsewhere(program: str) -> bool:
    """A program path outside the folders the system's programs live in."""
    folder = program.rstrip("/").rpartition("/")[0]
    return "/" in program.rstrip("/") and posixpath.normpath(folder or "/") not in SYSTEM_FOLDERS


def _unquoted(node: Node) -> bool:
    """A word whose patterns the shell expands: a bare one, or bare words and quoted texts
    side by side (the grammar splits `/bin/[r]m` at the brackets; `"/bin/"r?` globs too),
    as long as no quoted text holds a pattern character, which would match only itself."""
    while node.type == "command_name" and node.child_count == 1:
        node = node.children[0]
    if node.type == "concatenation":
        return all(
            c.type == "word" or (c.type in ("string", "raw_string") and not _GLOB.search(_text(c))) for c in node.children
        )
    return node.type == "word"


def _normal(words: list[tuple[str | None, Node]]) -> str:
    """The words as the shell passes them (see SimpleCommand.normal); one computed at run
    time is kept as written."""
    values = [value if value is not None else _text(node) for value, node in words]
    if words[0][0] is not None:
        values[0] = program_name(values[0])
    # A word holding blanks stays one word (quoted), so no rule reads it as two.
    return " ".join(shlex.quote(v) if value is not None and _BLANK.search(v) else v for v, (value, _) in zip(values, words, strict=True))


def _assignments(command: Node) -> list[tuple[str, str | None]]:
    """The `NAME=value` assignments of a part (before a command, after `export`, or on
    their own): the name and the value (None where computed at run time)."""
    nodes = [command] if command.type == "variable_assignment" else command.children
    found = []
    for node in nodes:
        if node.type != "variable_assignment":
            continue
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None:
            found.append((_text(name), "" if value is None else _static_word(value)))
    return found


def _programs_in_words(words: list[str | None]) -> tuple[str, ...]:
    """``words`` are the literal words of one simple command (None where computed)."""
    if not words or words[0] is None:
        return ()
    program = program_name(words[0])
    rest = words[1:]
    if program in _KEYWORDS:  # a misread compound statement (`{ curl x`): the next word runs
        return (program, *_programs_in_words(rest))
    if program in WRAPPERS:
        # Options and NAME=value assignments are skipped; every other word may be the program.
        names = (program_name(word) for word in rest if word and not word.startswith("-") and "=" not in word)
        return (program, *names)
    if program == "eval":
        script = " ".join(word for word in rest if word)
        return (program, *_programs_in_script(script))
    flag = _c_flag_index(rest)
    inner = rest[flag + 1] if program in _SHELLS and flag is not None else None
    if inner:
        return (program, *_programs_in_script(inner))
    return (program,)


def _inner_scripts(
    whole: Node, command: Node, words: list[tuple[str | None, Node]]
) -> list[tuple[str, tuple[str, ...]]]:
    """The command lines ``command`` runs through another program: the rest of the line
    after a wrapper (as written), a shell's or `su`'s `-c` script, `eval`'s and `watch`'s
    arguments, `trap`'s action, `env -S`'s string, each `find -exec` clause; each with the
    paths it receives at run time besides its words (`xargs rm` gets names from its input,
    judged as the tree they come from; a `find -exec` clause, find's starting points)."""
    values = [value for value, _ in words]
    if not values or values[0] is None:
        return []
    program, rest = program_name(values[0]), values[1:]
    scripts: list[str | tuple[str, tuple[str, ...]]] = []
    start = _wrapped_start(program, rest) if program in _WRAPPER_SYNTAX else None
    if start is not None and program == "watch":  # watch joins its arguments into a `sh -c` line
        scripts += _joined(rest[start:])
    elif start is not None:
        wrapped = _source(words[start + 1][1].start_byte, whole.end_byte)  # with the here-documents
        scripts.append((wrapped, (".",)) if program == "xargs" else wrapped)
    if program == "env":
        scripts.append(_env_split_string(rest) or "")
    if program == "eval":
        scripts += _joined(rest)
    if program == "trap":
        scripts.append(_trap_action(rest))
    if program == "find":
        targets = find_targets(rest)
        scripts += [(clause, targets) for clause in _find_exec_clauses(words)]
    flag = _c_flag_index(rest)
    if program in _SHELLS and flag is not None:
        scripts.append(rest[flag + 1] or "")
    pairs = [script if isinstance(script, tuple) else (script, ()) for script in scripts]
    return [(script, implicit) for script, implicit in pairs if script]


def _runs_computed_script(program: str, rest: list[str | None]) -> bool:
    """`eval "$X"`, `sh -c "$X"`: a command line only known at run time."""
    if program == "eval":
        return None in rest
    flag = _c_flag_index(rest)
    return program in _SHELLS and flag is not None and rest[flag + 1] is None


def _joined(words: list[str | None]) -> list[str]:
    """The words as one command line, or none when one of them is computed at run time."""
    return [] if None in words else [" ".join(word for word in words if word)]


def _trap_action(rest: list[str | None]) -> str:
    """The command `trap ACTION SIGNALS` runs later; "" for `trap - INT`, `trap -p`."""
    operands = [word for word in rest if word is None or word == "-" or not word.startswith("-")]
    if len(operands) < 2 or operands[0] == "-":
        return ""
    return operands[0] or ""


def _wrapped_start(program: str, rest: list[str | None]) -> int | None:
    """The index in ``rest`` of the program a wrapper runs, or None when there is none
    (`nohup` alone, `command -v curl`, which only prints where curl is)."""
    value_options, positional = _WRAPPER_SYNTAX[program]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            i += 1
            break
        if program == "command" and word in ("-v", "-V"):
            return None
        if word is not None and word.startswith("-") and word != "-":
            i += 2 if word in value_options else 1
        elif program == "env" and word is not None and "=" in word:  # NAME=value
            i += 1
        elif positional:
            positional -= 1
            i += 1
        else:
            break
    return i if i < len(rest) else None


def _env_split_string(rest: list[str | None]) -> str | None:
    """The command line of `env -S STRING` (also `-SSTRING`, `--split-string=STRING`)."""
    for i, word in enumerate(rest):
        if word is None:
            continue
        if word in ("-S", "--split-string") and i + 1 < len(rest):
            return rest[i + 1]
        for prefix in ("--split-string=", "-S=", "-S"):
            if word.startswith(prefix) and len(word) > len(prefix):
                return word[len(prefix) :]
    return None


def _find_exec_clauses(words: list[tuple[str | None, Node]]) -> list[str]:
    """The commands of `find ... -exec CMD ARGS ;` (or `+`), as written."""
    clauses, start = [], None
    for i, (value, _) in enumerate(words):
        if start is None and value in _FIND_EXEC:
            start = i + 1
        elif start is not None and value in (";", "+"):
            if i > start:
                clauses.append(_source(words[start][1].start_byte, words[i - 1][1].end_byte))
            start = None
    return clauses


def _file_operands(words: list[str | None]) -> tuple[str, ...]:
    """The non-option arguments of a file command (`cat /etc/hosts`), which name paths;
    after `--` every argument is one. A path computed at run time (`cat $HOME/x`) is
    "": where it leads cannot be judged, so it is asked about."""
    if words and words[0] is not None and program_name(words[0]) == "git":
        return _git_folders(words[1:])
    if not words or words[0] is None or program_name(words[0]) not in _FILE_COMMANDS:
        return ()
    operands, options_done = [], False
    for word in words[1:]:
        if word is None:
            operands.append("")
        elif word == "--" and not options_done:
            options_done = True
        elif options_done or not word.startswith("-"):
            operands.append(word)
    return tuple(operands)


def _git_folders(rest: list[str | None]) -> tuple[str, ...]:
    """The folders git's options before its subcommand point it at (`-C ..`,
    `--git-dir=X`, `--work-tree X`): git reads and changes what is there."""
    found = []
    for i, word in enumerate(rest):
        if word is None or not word.startswith("-"):
            break
        name, has_value, value = word.partition("=")
        if name in ("-C", "--git-dir", "--work-tree"):
            found.append(value if has_value else (rest[i + 1] or "") if i + 1 < len(rest) else "")
    return tuple(found)


# Wrappers that run their program in another folder, and the options saying which.
_CHDIR_OPTIONS = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir"), "systemd-run": ("--working-directory",)}


def _directory(words: list[str | None]) -> str | None:
    """Where a `cd`/`pushd`/`popd` goes: the operand, `~` without one, "" when unknown;
    where a wrapper runs its program (`env -C DIR`, `sudo -D DIR`)."""
    if words and words[0] is not None and program_name(words[0]) in _CHDIR_OPTIONS:
        return _chdir_option(words[1:], _CHDIR_OPTIONS[program_name(words[0])])
    if not words or words[0] is None or words[0] not in _DIRECTORY_CHANGES:
        return None
    if words[0] == "popd" or None in words[1:]:
        return ""
    operands = [
        word for word in words[1:] if word is not None and word != "--" and not (word.startswith("-") and len(word) > 1)
    ]
    if not operands:
        return "~"
    return "" if operands[0] == "-" else operands[0]


def _chdir_option(rest: list[str | None], names: tuple[str, ...]) -> str | None:
    """The folder a wrapper's option names (`-C DIR`, `-CDIR`, `--chdir=DIR`), None without
    one, "" when computed at run time. Only the wrapper's options are read: they end at
    its first operand."""
    for i, word in enumerate(rest):
        if word is None:
            return ""
        if not word.startswith("-") or word == "--":
            return None
        name, has_value, value = word.partition("=")
        if name in names:
            return value if has_value else (rest[i + 1] or "") if i + 1 < len(rest) else None
        short = next((n for n in names if len(n) == 2 and word.startswith(n) and len(word) > 2), None)
        if short is not None:
            return word[2:]
    return None


def _redirect_effects(node: Node) -> tuple[Touch, ...]:
    """Effects of ``node``'s own redirections to files: a write for those that write
    (`>`, `>>`, `&>`, `>|`, `<>`, `>&` to a file), a read for those that read (`<`,
    `<>`); "" for a target computed at run time. A here-string or here-document reads
    no file."""
    touches = []
    for child in node.children:
        destination = child.child_by_field_name("destination") if child.type == "file_redirect" else None
        if destination is None or destination.type == "number":
            continue
        operator = "".join(_text(c) for c in child.children if c != destination and c.type != "file_descriptor")
        target = _static_word(destination)
        if target == "-":
            continue
        if "<" in operator:
            touches.append(Touch("read", target or ""))
        if ">" in operator:
            touches.append(Touch("write", target or ""))
    return tuple(touches)


def _named_files(values: list[str | None]) -> tuple[Touch, ...]:
    """The operands of a program not known to read them or not to (reads knows
    `cat`, `grep`, ...; _NOT_READING lists those that only name, list, move or change
    the modes of files; a wrapper's program is a part of its own): each that is a file,
    and each option's `=FILE`, is judged as read, as the program may print it (`node
    x.js`, `openssl enc -in x`, `cpp x`). A folder is judged by its own name only: a build or a linter given `.` is
    not taken to read every file under it."""
    if not values or values[0] is None:
        return ()
    program = program_name(values[0])
    if program in WRAPPERS or program in _NOT_READING or known(program):
        return ()
    words = [word.partition("=")[2] if word.startswith("-") else word for word in values[1:] if word]
    return tuple(Touch("read", word, named=True) for word in words if word)  # `--input=FILE` too


def _files_run(shell: ShellInput | None, code: CodeSource | None, program_file: str) -> tuple[Touch, ...]:
    """Reads of the files a shell, `source`, an interpreter or `make` runs (`bash x.sh`,
    `. x`, `python3 x.py`), and of a program run by its path (`./x.sh`): they are read
    to be run."""
    files = (*(shell.files if shell else ()), *(code.files if code else ()), *([program_file] if program_file else ()))
    return tuple(Touch("read", path) for path in files)


def _redirect_targets(node: Node) -> tuple[str, ...]:
    """The files ``node``'s own redirections read or write (`> out.txt`), not descriptors
    (`2>&1`); "" for a target computed at run time (`> "$OUT"`), which is asked about."""
    targets = []
    for child in node.children:
        destination = child.child_by_field_name("destination") if child.type == "file_redirect" else None
        if destination is not None and destination.type != "number":
            targets.append(_static_word(destination) or "")
    return tuple(targets)


def _source(start: int, end: int) -> str:
    """The command's text between two byte offsets, without surrounding shell blanks."""
    return _SOURCE.get()[start:end].decode("utf-8", errors="replace").strip(" \t\r\n")


def _c_flag_index(rest: list[str | None]) -> int | None:
    """The index of a `-c` flag followed by its script, in a shell's arguments."""
    return next((i for i, word in enumerate(rest[:-1]) if _is_c_flag(word)), None)


def _is_c_flag(word: str | None) -> bool:
    """``-c``, or short flags combined with it (``-lc``, ``-ec``)."""
    return word is not None and word.startswith("-") and not word.startswith("--") and "c" in word


def _programs_in_script(script: str) -> tuple[str, ...]:
    return tuple(name for part in parse_command(script).parts for name in part.programs)


def _static_word(node: Node) -> str | None:
    """The word's value after quote removal, or None when it expands at run time."""
    raw = _text(node)
    if raw[:2] in ("~+", "~-") and raw[2:3] in ("", "/"):  # bash's $PWD and $OLDPWD
        if raw[1] == "-":
            return None
        raw = "." + raw[2:]
    if _PLAIN.fullmatch(raw):  # nothing to remove or expand: the common case, without shlex
        return raw
    raw = _ANSI_C.sub(lambda match: shlex.quote(ansi_c_text(match.group(1))), raw)
    # Where these lead is known: the folder the command is in (judged from every folder it
    # may be in), and the home folder.
    raw = _KNOWN_VARIABLE.sub(lambda match: match.group(1) + ("." if "PWD" in match.group(2) else "~"), raw)
    if ("$" in raw or "`" in raw) and _expands(raw):
        return None
    return unquote_word(raw)


def _expands(raw: str) -> bool:
    """Whether a `$` or a backquote outside single quotes, not escaped, expands in ``raw``
    (`'$1'` and `\\$1` are plain text)."""
    single = double = False
    i = 0
    while i < len(raw):
        char = raw[i]
        if single:
            single = char != "'"
        elif char == "\\":
            i += 1
        elif char == "'" and not double:
            single = True
        elif char == '"':
            double = not double
        elif char in "$`":
            return True
        i += 1
    return False


# One piece of a word, quotes kept: '...', "..." (backslash escapes inside), a backslash
# escape, a run of plain characters; or blanks (shlex's: space, tab, CR, LF) between words.
# Each piece is told by its first character and every run is possessive, so a match never
# backtracks: an unclosed quote fails in time linear in the text.
# (No capturing group inside the possessive repeat: Python 3.11's re fails on those.)
_PIECES = (r"'[^']*+'", r'"(?:[^"\\]++|\\.)*+"', r"\\.", r"[^'\"\\ \t\r\n]++", r"[ \t\r\n]++")
_WORD_PIECE = re.compile("|".join(f"({piece})" for piece in _PIECES), re.DOTALL)
_WELL_QUOTED = re.compile(f"(?:{'|'.join(_PIECES)})*+", re.DOTALL)
_QUOTING = re.compile(r"""['"\\]""")
_BLANKS = re.compile(r"[ \t\r\n]+")
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\(["\\])')


def unquote_word(raw: str) -> str | None:
    """``raw`` as one word after quote removal, or None when it is not exactly one word
    (blanks outside quotes, an unclosed quote)."""
    words = split_words(raw)
    return words[0] if words is not None and len(words) == 1 else None


def split_words(text: str) -> list[str] | None:
    """``text`` split into words with quotes removed, as POSIX ``shlex.split`` does it;
    None for an unclosed quote or a trailing backslash. In time linear in its length:
    shlex grows each token one character at a time, quadratic in its length (a 400 KB
    word took seconds)."""
    if not _QUOTING.search(text):
        return [word for word in _BLANKS.split(text) if word]
    if _WELL_QUOTED.fullmatch(text) is None:
        return None
    words: list[str] = []
    pieces: list[str] | None = None  # the word being read, None between words
    for single, double, escaped, plain, blank in _WORD_PIECE.findall(text):
        if blank:
            if pieces is not None:
                words.append("".join(pieces))
            pieces = None
            continue
        if pieces is None:
            pieces = []
        if single:
            pieces.append(single[1:-1])
        elif double:
            pieces.append(_DOUBLE_QUOTED_ESCAPE.sub(r"\1", double[1:-1]))
        else:
            pieces.append(escaped[1:] or plain)
    if pieces is not None:
        words.append("".join(pieces))
    return words
