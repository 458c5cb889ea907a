"""What one simple command runs and changes, beyond its own name: the files it writes or
deletes (effects), what git runs for it (git_effects), what other programs run for
it (program_code: `tar --to-command`, `python -c`), the command lines held in variables
that programs run (`GIT_EXTERNAL_DIFF=...`, `EDITOR=...`), and the builtins that make a
name stand for another program (alias, `hash -p`), which cannot be judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.permission.shell.effects import Touch, file_effects, program_name
from app.permission.shell.git_effects import GitReading, read_git
from app.permission.shell.program_code import read_code

# Variables whose value is a command line some program runs (git, man, less, editors...).
COMMAND_VARIABLES = frozenset(
    {"GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
     "GIT_SEQUENCE_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
     "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER", "PROMPT_COMMAND"}
)
# Variables a shell expands as prompts (`PS4` before each traced command of `bash -x`):
# their command substitutions run.
PROMPT_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4"})
# Variables that make programs load code or settings from elsewhere: their effect cannot be judged.
UNKNOWABLE_VARIABLES = frozenset(
    {"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
     "GIT_DIR", "GIT_WORK_TREE", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
     "BASH_ENV", "ENV", "LD_PRELOAD",
     "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS",
     "RUBYOPT", "HOME", "XDG_CONFIG_HOME", "ZDOTDIR", "PYTHONPATH", "PERL5LIB", "RUBYLIB", "NODE_PATH"}
)
# Variables naming a file a program writes to: git's traces (an absolute path; a number
# or `true` is a descriptor), git's index, the shell's history.
OUTPUT_VARIABLES = frozenset(
    {"GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE_PACKET", "GIT_TRACE_PERFORMANCE",
     "GIT_TRACE_SETUP", "GIT_TRACE_CURL", "GIT_TRACE_PACK_ACCESS", "GIT_TRACE_SHALLOW", "GIT_TRACE_PACKFILE",
     "GIT_TRACE_REFS", "GIT_TRACE_FSMONITOR", "GIT_INDEX_FILE", "HISTFILE"}
)


@dataclass(frozen=True)
class ProgramReading:
    touches: tuple[Touch, ...] = ()
    scripts: tuple[str, ...] = ()
    """Command lines it makes run, judged as parts of their own."""
    doubts: tuple[str, ...] = ()
    """Why part of what it does cannot be known: the command is asked about."""


def read_program(
    words: list[str | None],
    assignments: list[tuple[str, str | None]],
    implicit: tuple[str, ...] = (),
    env: Mapping[str, str | None] | None = None,
) -> ProgramReading:
    """``words``: the command's words (None where computed); ``assignments``: its `NAME=value`
    pairs (before it, after `export`, or alone); ``implicit``: paths it receives at run time;
    ``env``: variables set earlier in the command line (None where computed)."""
    reading = GitReading()
    program = program_name(words[0]) if words and words[0] is not None else None
    if program == "env":
        assignments = [*assignments, *_env_assignments(words[1:])]
    for name, value in assignments:
        _variable(name, value, reading)
    if program == "git":
        git = read_git(words[1:], {**(env or {}), **dict(assignments)})
        reading.scripts += git.scripts
        reading.touches += git.touches
        reading.doubts += git.doubts
    elif program is not None:
        reading.doubts += _renaming(program, words[1:])
        code = read_code(program, words[1:])
        reading.scripts += code.scripts
        reading.doubts += code.doubts
        reading.touches += code.touches
    touches = file_effects(words, implicit) if program is not None else ()
    return ProgramReading(
        tuple(reading.touches) + touches, tuple(s for s in reading.scripts if s.strip()), tuple(reading.doubts)
    )


def _variable(name: str, value: str | None, reading: GitReading) -> None:
    if value is not None and ("$(" in value or "`" in value):
        if name in PROMPT_VARIABLES:
            reading.scripts.append(f': "{value}"')
        else:  # arithmetic (`(( x ))`), `${!x}` or eval may run it
            reading.doubts.append(f"{name} holds a command substitution that the shell may run later")
    if name in OUTPUT_VARIABLES and value not in ("", "0", "1", "2", "true", "false", "yes", "no"):
        if value is None or not value.isdigit():
            reading.touches.append(Touch("write", value or ""))
    if name in COMMAND_VARIABLES:
        if value is None:
            reading.doubts.append(f"{name} holds a command known only at run time")
        elif value:
            reading.scripts.append(value)
    elif name in UNKNOWABLE_VARIABLES or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
        reading.doubts.append(f"{name} makes programs load settings or code that cannot be judged here")


def _env_assignments(rest: list[str | None]) -> list[tuple[str, str | None]]:
    """`env [-i] [-u NAME] NAME=value ... PROGRAM`: the assignments before the program."""
    found: list[tuple[str, str | None]] = []
    for word in rest:
        if word is None:
            break
        if word.startswith("-"):
            continue
        name, has_value, value = word.partition("=")
        if not has_value:
            break
        found.append((name, value))
    return found


def _renaming(program: str, rest: list[str | None]) -> list[str]:
    """Builtins after which a name runs something else: `alias r=rm`, `shopt -s
    expand_aliases`, `hash -p /bin/rm ls`, `enable -f lib.so x`."""
    words = [word or "" for word in rest]
    if program == "alias" and any("=" in word for word in words):
        return ["it defines an alias, whose name can stand for any program"]
    if program == "shopt" and "expand_aliases" in words and any(w.startswith("-") and "s" in w for w in words):
        return ["it turns on alias expansion"]
    if program == "hash" and any(w.startswith("-") and "p" in w for w in words):
        return ["hash -p makes a name run another program"]
    if program == "enable" and words:
        return ["enable changes what a builtin's name runs"]
    return []
