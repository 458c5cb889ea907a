"""Where a shell reads the script it runs, when that is not a `-c` argument: a file it is
given (`bash x.sh`, `source x.sh`, `. ./x.sh`, `bash --rcfile x`) or its standard input
(`bash <<< 'rm a'`, a here-document, `echo 'rm a' | sh`). `at` and `batch` run theirs
in a shell later, which is the same.

Pure: words in, answers out. The parser (parse) feeds a script it can read from the
command itself (a here-string, a here-document without expansions, the output of `echo`
or `printf` of fixed words) to the judge as parts of their own; the judge (scripts)
reads a named file from the disk. What neither can know is a doubt, and the command asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.permission.shell.effects import ansi_c_text, program_name

# Shells that run a script from a file operand or, without one, from their input.
SCRIPT_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash", "rbash"})
# Builtins that run a file's lines in the shell itself.
_SOURCING = frozenset({"source", "."})
# Programs that run their input (or `-f FILE`) in a shell later: at and batch.
_SCHEDULERS = frozenset({"at", "batch"})
# Shell options that take a value (the next word); the two files bash reads at start.
_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O"})
_START_FILES = frozenset({"--rcfile", "--init-file"})
# Names of the standard input as a file.
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})


@dataclass(frozen=True)
class ShellInput:
    """``files``: the files whose lines it runs ("" for a name known only at run time);
    ``stdin``: it runs what its standard input holds."""

    files: tuple[str, ...] = ()
    stdin: bool = False


def shell_input(words: list[str | None]) -> ShellInput | None:
    """What a shell or `source` named by ``words[0]`` runs, None when it is neither, or
    when its script is a `-c` argument (the parser reads that one)."""
    if not words or words[0] is None:
        return None
    program, rest = program_name(words[0]), words[1:]
    if program in _SOURCING:
        operand = next((word for word in rest if word != "--"), "")
        if operand is None:
            return ShellInput(("",))
        return ShellInput(stdin=True) if operand in STDIN_FILES else ShellInput((operand,)) if operand else None
    if program in _SCHEDULERS:
        scheduled = tuple(rest[i + 1] or "" for i, word in enumerate(rest[:-1]) if word == "-f")
        return ShellInput(scheduled) if scheduled else ShellInput(stdin=True)
    if program not in SCRIPT_SHELLS:
        return None
    files: list[str] = []
    from_input = False
    i = 0
    while i < len(rest):
        word = rest[i]
        if word is None:
            return ShellInput(("",))
        if word in _START_FILES:
            files.append(rest[i + 1] or "" if i + 1 < len(rest) else "")
            i += 2
            continue
        if word == "--":
            i += 1
            break
        if word[:1] in ("-", "+") and len(word) > 1:
            if word[:1] == "-" and not word.startswith("--") and "c" in word:
                return None  # `-c SCRIPT`: read by the parser
            from_input |= word[:1] == "-" and not word.startswith("--") and "s" in word
            i += 2 if word in _VALUE_OPTIONS else 1
            continue
        break
    operand = rest[i] if i < len(rest) and not from_input else None
    if i < len(rest) and not from_input and operand is None:
        return ShellInput((*files, ""))
    if operand is not None and operand not in STDIN_FILES:
        return ShellInput((*files, operand))
    return ShellInput(tuple(files), stdin=True)


def echoed_text(words: list[str | None]) -> str | None:
    """What `echo WORDS` or `printf FORMAT [ARGS]` writes, when its words are known and it
    is one of the two; None otherwise. A format with conversions other than `%s` is not
    followed."""
    if not words or words[0] is None or None in words:
        return None
    program, rest = program_name(words[0]), [word for word in words[1:] if word is not None]
    if program == "echo":
        escapes = False
        while rest and rest[0] in ("-n", "-e", "-E", "-ne", "-en", "-nE", "-En"):
            escapes = "e" in rest[0] if rest[0] != "-n" else escapes
            rest = rest[1:]
        text = " ".join(rest)
        return ansi_c_text(text) if escapes else text
    if program == "printf" and rest:
        return _printed(rest[0], rest[1:])
    return None


def _printed(form: str, arguments: list[str]) -> str | None:
    """printf's output for a format whose only conversions are `%s` (and `%%`): the format
    is used again until every argument is consumed."""
    pieces = ansi_c_text(form).split("%%")
    slots = sum(piece.count("%s") for piece in pieces)
    if any("%" in piece.replace("%s", "") for piece in pieces):
        return None
    if slots == 0:
        return "%".join(pieces)
    out = []
    for start in range(0, max(len(arguments), 1), slots):
        values = iter([*arguments[start : start + slots], *[""] * slots])
        out.append("%".join("".join(_filled(piece, values)) for piece in pieces))
    return "".join(out)


def _filled(piece: str, values: Iterator[str]) -> list[str]:
    chunks = piece.split("%s")
    return [chunks[0], *(next(values) + chunk for chunk in chunks[1:])]
