"""What a program the bash judge has no table for may do with its arguments.

Wrappers (`nohup`, `timeout`, ...), shells, git and the programs of effects and
program_code are read word by word. Any other program may be one more wrapper (`perf
stat rm x`, `ssh-agent rm x`, `start-stop-daemon -x /bin/rm -- x`), may take a command
line as an argument (`sg root 'rm x'`, `npx -c 'rm x'`, `vimdiff -c '!rm x'`) or may
change a file it is given (`fallocate -p secrets/key.txt`). Its arguments are therefore
read as what it may run and change: when a deny rule covers one of them, the command is
asked about as one whose effects cannot be known (only a person approves it while such a
deny applies), never run unasked. A rule that denies nothing they name leaves the
command as its own rule says.

Pure: words in, candidate command lines and paths out; judge judges them.
"""

from __future__ import annotations

import shlex

from app.permission.shell.effects import KNOWN_PROGRAMS, program_name
from app.permission.shell.parse import MAX_WORDS, WRAPPERS
from app.permission.shell.program_code import interpreter

# Programs whose arguments are only data (text to print or search, names to look up), or
# that the judge reads with a table of its own (git, wrappers unwrapped by parse
# whose every use is understood): reading their words as commands would only ask needlessly.
_DATA_PROGRAMS = frozenset(
    """echo printf git grep egrep fgrep rg ag ack cat tac head tail wc sort uniq cut tr paste column
    nl od xxd hexdump strings base64 md5sum sha1sum sha256sum sha512sum cksum diff cmp comm file stat
    du df ls tree basename dirname realpath readlink pwd date true false : test [ [[ cd pushd popd
    export declare local typeset readonly unset read set shift exit return type which command hash
    whatis apropos help man info tldr jq yq""".split()
)
# Programs whose file effects are read elsewhere (the files they change are judged there;
# a wrapper's program is a part of its own), and pagers and viewers, which only read the
# files they are given.
_EFFECTS_KNOWN = frozenset(
    {*KNOWN_PROGRAMS, *WRAPPERS, "make", "gmake", "less", "more", "most", "pager", "bat", "batcat", "zcat", "zless",
     "bzcat", "xzcat", "zstdcat", "xmllint", "glow"}
)
# Characters an editor or pager puts before a shell command (`vimdiff -c '!rm x'`,
# `more '+!rm x'`, `ex ':!rm x'`).
_COMMAND_PREFIXES = "+!: "
_MAX_LINES = 32
_MAX_LINE = 4096


def opaque(program: str) -> bool:
    """Whether ``program``'s arguments are read here (see the module's docstring). Not an
    interpreter's: a known program running code from a file that is already there is
    judged by its own rule (docs/permissions.md)."""
    return program not in _DATA_PROGRAMS and not interpreter(program)


def command_lines(words: list[str]) -> list[str]:
    """Command lines the program ``words[0]`` may run: the words from each argument on
    that is not an option (`perf stat rm x` may run `stat rm x` or `rm x`), and each
    argument or option value holding a blank or `;` (`sg root 'rm x'`,
    `--command='rm x'`), without an editor's `!` before it."""
    if not words or not opaque(program_name(words[0])):
        return []
    rest = words[1:MAX_WORDS]
    lines: list[str] = []
    for i, word in enumerate(rest):
        value = word.partition("=")[2] if word.startswith("-") else word
        if any(blank in value for blank in " \t\n;"):
            lines.append(value.lstrip(_COMMAND_PREFIXES))
        elif value and value != word:  # `--shell=/bin/rm -- x`
            lines.append(_joined([value, *rest[i + 1 :]]))
        if not word.startswith(("-", "+")) and "=" not in word:
            lines.append(_joined(rest[i:]))
        if len(lines) >= _MAX_LINES:
            break
    return [line for line in dict.fromkeys(lines) if line]


def _joined(words: list[str]) -> str:
    """``words`` as a command line, cut after ``_MAX_LINE`` characters (a rule judges a
    command by its start: the program and its first arguments)."""
    line, length = [], 0
    for word in words:
        line.append(word)
        length += len(word) + 1
        if length > _MAX_LINE:
            break
    return shlex.join(line)


def named_paths(words: list[str]) -> list[str]:
    """Paths the program ``words[0]`` may write or remove: its arguments that are not
    options, and options' values after `=` (`--output=FILE`)."""
    if not words:
        return []
    program = program_name(words[0])
    if not opaque(program) or program in _EFFECTS_KNOWN:
        return []
    found = [word.partition("=")[2] if word.startswith("-") else word for word in words[1:MAX_WORDS]]
    return [path for path in dict.fromkeys(found) if path and not any(c in path for c in " \t\n")]
