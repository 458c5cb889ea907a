"""Code that programs other than the shell and git run for a command, read from its words.

Three kinds:
- a command line given as an option, which the program hands to a shell: `tar
  --to-command=CMD`, `tar --checkpoint-action=exec=CMD`, `rsync -e CMD`, `zip -TT CMD`,
  `man -P CMD`, `less '+!CMD'`, `vim -c '!CMD'`, `gdb -ex 'shell CMD'`, `hyperfine CMD`,
  `entr -s CMD`, `sed`'s `e` command. These are scripts: judged as parts of their own,
  so a deny holds in them.
- code in another language given inline or on the input: `python -c`, `perl -e`,
  `node -e`, `ruby -e`, `php -r`, an awk program that runs commands or writes files,
  `expect -c`. What it does cannot be known: a doubt, and the command asks (see
  judge for --yes).
- files it writes that its words name: sed's `w FILE`.

Besides: database shells whose inline text reaches beyond the database (sqlite3's
`.shell`, psql's `\\!`), ed, dc and vim fed commands on their input, tmux, screen, crontab
and the history builtins (doubts); builtins that evaluate a quoted word as a name or as
arithmetic, where a `$(...)` in it runs (`printf -v 'a[$(rm x)]'`: a script).

Pure: words in, a reading out. Words are values after quote removal, None where computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.permission.shell.effects import Touch, commands_in_options

# Interpreters and the options that give them code inline.
_INLINE: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for names, options in [
        (("perl",), "-e -E"),
        (("ruby", "jruby"), "-e"),
        (("node", "nodejs", "bun"), "-e -p --eval --print"),
        (("deno",), "eval"),
        (("php",), "-r"),
        (("lua", "luajit"), "-e"),
        (("Rscript",), "-e"),
        (("julia",), "-e -E --eval --print"),
        (("osascript",), "-e"),
        (("pwsh", "powershell"), "-c -Command -command -EncodedCommand -e -ec"),
        (("expect",), "-c"),
        (("tclsh", "wish"), ""),
    ]
    for name in names
}
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
# Programs that run the command line an option gives (`--to-command=CMD`, `-e CMD`).
_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "tar": frozenset({"--to-command", "-I", "--use-compress-program", "--rsh-command", "--info-script",
                      "--new-volume-script", "-F"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "man": frozenset({"-P", "--pager"}),
    "hyperfine": frozenset({"-p", "--prepare", "-c", "--cleanup", "-s", "--setup", "--conclude"}),
    "entr": frozenset({"-s"}),
}
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
# Awk that runs a program (system, a pipe to or from a command) or loads code (@include),
# or a statement that writes a file (print or printf with `>`): what it touches is
# computed by the awk program. The statements are read one by one (a pattern for "print,
# then `>` before the statement ends" would rescan a statement from each of its prints).
_AWK_EFFECT = re.compile(r"system|\|\s*(getline|\")|\"\s*\||@include|@load")
_AWK_PRINT = re.compile(r"\bprintf?\b")
_AWK_STATEMENT_END = re.compile(r"[;{}\n]")
_EDITORS = frozenset({"vi", "vim", "nvim", "ex", "view", "gvim"})
# Database shells and the inline texts that run commands or write files: sqlite3's dot
# commands (.shell, .system, .output) and ATTACH, psql's backslash commands (\! runs a
# shell) and COPY ... PROGRAM, mysql's system and tee.
_MYSQL_EFFECT = re.compile(
    r"\bsystem\b|\\|\btee\b|\bsource\b|outfile|dumpfile|load_file|load\s+data|\bpager\b", re.IGNORECASE
)
_QUERY_TOOLS: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {
    "sqlite3": (frozenset({"-cmd"}), re.compile(
        r"(?:^|[;\n])[^\S\n]*+\.|\battach\b|\bvacuum\b|writefile|load_extension|\bedit\s*\(", re.IGNORECASE)),
    "psql": (frozenset({"-c", "--command"}), re.compile(r"\\|\bprogram\b|lo_export|lo_import", re.IGNORECASE)),
    "mysql": (frozenset({"-e", "--execute"}), _MYSQL_EFFECT),
    "mariadb": (frozenset({"-e", "--execute"}), _MYSQL_EFFECT),
}
# Programs that take commands on their input: ed's and ex's `!CMD`, dc's `!CMD`, the
# database shells' escapes; and vim in Ex mode (`vim -es`).
_INPUT_COMMANDS = frozenset({"ed", "red", "ex", "dc", "sqlite3", "psql", "mysql", "mariadb"})
_EX_MODE = frozenset({"-e", "-es", "-E", "-Es", "-s"})
# Builtins that evaluate a name or an arithmetic expression given as text: a subscript
# there (`printf -v 'a[$(rm x)]'`, `let 'a[$(rm x)]=1'`, `[ -v 'a[$(rm x)]' ]`) runs its
# command substitutions although the word was quoted.
_EVALUATING = frozenset(
    {"let", "printf", "read", "test", "[", "declare", "typeset", "local", "export", "readonly", "unset", "mapfile",
     "readarray", "wait", "getopts", "shift", "return", "exit", "ulimit", "umask"}
)
# Builtins whose option gives a command line they run: `mapfile -C CMD`, `complete -C CMD`.
_CALLBACKS = {"mapfile": "-C", "readarray": "-C", "complete": "-C", "compgen": "-C"}
# tmux commands that run a shell command or type into a shell.
_TMUX_RUNS = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "send-keys", "send", "run-shell", "run",
     "respawn-pane", "respawnp", "respawn-window", "respawnw", "pipe-pane", "pipep", "if-shell", "if",
     "display-popup", "popup", "source-file", "source"}
)
# A sed command's address: a line number, `$`, a /regex/ or \cregexc, a range of two.
_SED_ADDRESS = re.compile(r"(?:[0-9]++(?:~[0-9]++)?|\$|/(?:[^/\\\n]++|\\.)*+/I?M?|\\(.)(?:(?!\1).)*+\1)")
# Commands whose argument runs to the end of the line.
_SED_LINE_COMMANDS = frozenset("aicewWrRbtTv:")


@dataclass
class CodeReading:
    scripts: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    touches: list[Touch] = field(default_factory=list)


def interpreter(program: str) -> bool:
    """Whether ``program`` runs code in another language than the shell's."""
    return bool(_PYTHON.match(program)) or program in _INLINE


_STDIN = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


@dataclass(frozen=True)
class CodeSource:
    """Where a program's code comes from: ``files`` it reads it from (a script, a
    makefile), or (``stdin``) its input."""

    files: tuple[str, ...] = ()
    stdin: bool = False


def code_source(program: str, rest: list[str | None]) -> CodeSource:
    """The files or input an interpreter or `make` runs code from (none for code given
    inline, which ``read_code`` reports, or a module run with `python -m`)."""
    if program in _INPUT_COMMANDS or (program in _EDITORS and any(word in _EX_MODE for word in rest)):
        return CodeSource(stdin=True)
    if program == "make":
        given = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-f", "--file", "--makefile")]
        given += [w.partition("=")[2] for w in rest if w and w.startswith(("--file=", "--makefile="))]
        if any(word in _STDIN for word in given if word is not None):
            return CodeSource(stdin=True)
        return CodeSource(tuple(word for word in given if word) or _MAKEFILES)
    if not interpreter(program) or read_code(program, rest).doubts:
        return CodeSource()
    if _PYTHON.match(program) and any(word and word.startswith("-m") for word in rest):
        return CodeSource()
    operand = next((word for word in rest if word is None or word == "-" or not word.startswith("-")), "-")
    if operand is None:
        return CodeSource()
    return CodeSource(stdin=True) if operand in _STDIN else CodeSource((operand,))


def read_code(program: str, rest: list[str | None]) -> CodeReading:
    """What ``program`` (its name) run with the words ``rest`` runs besides itself."""
    reading = CodeReading()
    if interpreter(program):
        options = _INLINE.get(program, frozenset({"-c"}))
        clustered = "c" if _PYTHON.match(program) else "eE" if program in ("perl", "ruby", "jruby") else ""
        if any(word in options or _joined_option(word, options) or _in_cluster(word, clustered) for word in rest):
            reading.doubts.append(f"{program} runs code given inline, whose effects cannot be known")
    elif program in _COMMAND_OPTIONS:
        _command_options(program, rest, reading)
    elif program in _AWKS:
        _awk(program, rest, reading)
    elif program == "sed":
        _sed(rest, reading)
    elif program == "less":
        reading.scripts += [word[2:] for word in rest if word and word.startswith("+!")]
    elif program in _EDITORS:
        _editor(program, rest, reading)
    elif program in ("gdb", "lldb"):
        _debugger(program, rest, reading)
    elif program in _QUERY_TOOLS:
        _query(program, rest, reading)
    elif program == "dc":
        _dc(rest, reading)
    elif program == "tmux" and any(word in _TMUX_RUNS for word in rest):
        reading.doubts.append("tmux runs a shell command, or types into a shell, which cannot be judged here")
    elif program == "screen" and any(word is None or not word.startswith("-") for word in rest):
        reading.doubts.append("screen runs a command in a window of its own, which cannot be judged here")
    elif program == "crontab" and not any(word in ("-l", "-r", "-e") for word in rest):
        reading.doubts.append("crontab schedules commands, which cannot be judged here")
    elif program == "history" and "-s" in rest:
        reading.doubts.append("history -s adds a command that fc or a key may run later")
    elif program == "fc" and "-l" not in rest:
        reading.doubts.append("fc runs commands from the history, which cannot be judged here")
    elif program == "bind" and any(word and word.startswith("-x") for word in rest):
        reading.doubts.append("bind -x makes a key run a command")
    if program in _CALLBACKS:
        option = _CALLBACKS[program]
        reading.scripts += [rest[i + 1] or "" for i, word in enumerate(rest[:-1]) if word == option]
    if program in _EVALUATING:
        reading.scripts += [f': "{word.replace(chr(34), chr(92) + chr(34))}"' for word in rest if word and _substitutes(word)]
        if program == "let" and None in rest:
            reading.doubts.append("let evaluates an expression known only at run time")
    return reading


def _substitutes(text: str) -> bool:
    """Whether ``text`` holds a command substitution (`$(...)`, backquotes)."""
    return "$(" in text or "`" in text


def _query(program: str, rest: list[str | None], reading: CodeReading) -> None:
    """A database shell's inline text: judged for the commands that reach beyond the database."""
    options, effect = _QUERY_TOOLS[program]
    texts = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in options]
    texts += [word.partition("=")[2] for word in rest if word and word.partition("=")[0] in options]
    if program == "sqlite3":
        operands = _operands(rest, frozenset({"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs"}))
        texts += operands[1:]  # after the database file: SQL and dot commands
    if any(word in ("-init", "-f", "--file", "-A", "-Ax", "-Ac", "--archive") for word in rest):
        texts.append(None)
    if any(text is None or effect.search(text) for text in texts):
        reading.doubts.append(f"{program} runs commands that may reach beyond its database, which cannot be judged here")


def _dc(rest: list[str | None], reading: CodeReading) -> None:
    """dc's `!CMD` runs CMD in a shell."""
    texts = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-e", "--expression")]
    texts += [word.partition("=")[2] for word in rest if word and word.startswith("--expression=")]
    if any(word in ("-f", "--file") for word in rest):
        reading.doubts.append("dc runs a program from a file, which cannot be judged here")
    for text in texts:
        if text is None:
            reading.doubts.append("dc runs a program known only at run time")
        elif "!" in text:
            reading.scripts += [line for line in re.findall(r"!([^\n]*)", text) if line.strip()]


def _joined_option(word: str | None, options: frozenset[str]) -> bool:
    """`-cprint(1)`, `-e'...'`, `--eval=...`: an option with its value in the same word."""
    if word is None:
        return False
    return any(word.startswith(f"{option}=") or (len(option) == 2 and word.startswith(option) and len(word) > 2
               and not word.startswith("--")) for option in options)


def _in_cluster(word: str | None, letters: str) -> bool:
    """`perl -pe CODE`, `python -Bc CODE`: short flags run together, one of them giving code."""
    if not letters or word is None or not word.startswith("-"):
        return False
    flags = word[1:]
    return flags.isascii() and flags.isalpha() and any(letter in flags for letter in letters)


def _command_options(program: str, rest: list[str | None], reading: CodeReading) -> None:
    options = _COMMAND_OPTIONS[program]
    if program == "tar":  # --checkpoint-action=exec=CMD
        for word in rest:
            name, has_value, value = (word or "").partition("=")
            action, _, command = value.partition("=")
            if name == "--checkpoint-action" and has_value and action == "exec":
                reading.scripts.append(command)
    commands_in_options(program, rest, options, reading.scripts, reading.doubts)
    if program == "hyperfine":  # its operands are command lines too
        reading.scripts += [word for word in _operands(rest, options) if word]


def _awk(program: str, rest: list[str | None], reading: CodeReading) -> None:
    texts = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-e", "--source")]
    if any(word in ("-f", "--file") or (word or "").startswith("--file=") for word in rest):
        reading.doubts.append(f"{program} runs a program from a file, whose effects cannot be known")
    operands = _operands(rest, frozenset({"-f", "-v", "-F", "-i", "-e", "-l", "--file", "--assign",
                                          "--field-separator", "--include", "--source", "--load"}))
    if not texts and operands:
        texts.append(operands[0])
    if any(text is None or _AWK_EFFECT.search(text) or _awk_writes(text) for text in texts):
        reading.doubts.append(f"{program}'s program may run commands or write files, which cannot be judged here")


def _awk_writes(text: str) -> bool:
    """Whether a statement of the awk program prints to a file (`print x > "f"`)."""
    for statement in _AWK_STATEMENT_END.split(text):
        found = _AWK_PRINT.search(statement)
        if found is not None and ">" in statement[found.end() :]:
            return True
    return False


def _sed(rest: list[str | None], reading: CodeReading) -> None:
    """GNU sed's `e` command and `s///e` run shell commands; `w FILE` writes FILE."""
    scripts = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-e", "--expression")]
    scripts += [word.partition("=")[2] for word in rest if word and word.startswith("--expression=")]
    if any(word in ("-f", "--file") or (word or "").startswith("--file=") for word in rest):
        reading.doubts.append("sed runs a script from a file, whose effects cannot be known")
    if not scripts:
        operands = _operands(rest, frozenset({"-l", "--line-length", "-s"}))
        scripts = operands[:1]
    for script in scripts:
        if script is None:
            reading.doubts.append("sed runs a script known only at run time")
        else:
            _sed_script(script, reading)


def _sed_script(script: str, reading: CodeReading) -> None:
    """Walk a sed script command by command: `e CMD` runs CMD (bare `e`, and `s///e`, run
    text computed from the input); `w FILE`, `W FILE` and `s///w FILE` write FILE."""
    i, end = 0, len(script)
    while i < end:
        while i < end and script[i] in " \t\n;{}!":
            i += 1
        for _ in range(2):  # an address, and the second of a range
            match = _SED_ADDRESS.match(script, i)
            if match is not None:
                i = match.end()
            while i < end and script[i] in " \t,!":
                i += 1
        if i >= end:
            return
        letter = script[i]
        i += 1
        if letter in _SED_LINE_COMMANDS:
            line_end = script.find("\n", i)
            line_end = end if line_end < 0 else line_end
            argument = script[i:line_end].strip()
            if letter in "bt:T":  # a label runs to `;` too
                line_end = min(line_end, script.find(";", i) if ";" in script[i:line_end] else line_end)
            elif letter == "e":
                _sed_runs(argument, reading)
            elif letter in "wW" and argument:
                reading.touches.append(Touch("write", argument))
            i = line_end
        elif letter in "sy" and i < end:
            i = _sed_substitution(script, i, letter, reading)


def _sed_substitution(script: str, i: int, letter: str, reading: CodeReading) -> int:
    """Past `s/RE/TEXT/FLAGS` (or `y/A/B/`) from its delimiter at ``i``; its flags judged."""
    delimiter = script[i]
    i += 1
    for _ in range(2):
        while i < len(script) and script[i] != delimiter:
            i += 2 if script[i] == "\\" else 1
        i += 1
    if letter == "y":
        return i
    flags_end = i
    while flags_end < len(script) and script[flags_end] not in ";\n}":
        if script[flags_end] in "wW":
            line_end = script.find("\n", flags_end)
            line_end = len(script) if line_end < 0 else line_end
            reading.touches.append(Touch("write", script[flags_end + 1 : line_end].strip()))
            return line_end
        if script[flags_end] == "e":
            reading.doubts.append("sed's s///e runs the replaced text as a command")
        flags_end += 1
    return flags_end


def _sed_runs(command: str, reading: CodeReading) -> None:
    if command:
        reading.scripts.append(command)
    else:
        reading.doubts.append("sed's e command runs the text it reads as a command")


def _editor(program: str, rest: list[str | None], reading: CodeReading) -> None:
    """`vim -c CMD`, `+CMD`, `--cmd CMD`: ex commands; `!CMD` runs a shell command, and any
    other (`:w`, `system()`) cannot be judged here, but a line number (`+10`) is harmless."""
    commands = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-c", "--cmd")]
    commands += [word[1:] for word in rest if word and word.startswith("+")]
    sourced = any(word in ("-S", "-s") for word in rest) or any(
        word == "-u" and rest[i + 1] not in ("NONE", "NORC") for i, word in enumerate(rest[:-1])
    )
    if sourced:
        reading.doubts.append(f"{program} runs commands from a file, which cannot be judged here")
    for command in commands:
        text = (command or "").lstrip(": ")
        if command is None:
            reading.doubts.append(f"{program} runs an editor command known only at run time")
        elif text.startswith("!"):
            reading.scripts.append(text[1:])
        elif text and not text.isdigit() and not text.startswith(("/", "?")):
            reading.doubts.append(f"{program} runs the editor command {text!r}, which cannot be judged here")


def _debugger(program: str, rest: list[str | None], reading: CodeReading) -> None:
    """`gdb -ex 'shell CMD'` runs CMD; other commands (`run`, `call system(...)`) cannot be judged."""
    for i, word in enumerate(rest[:-1]):
        if word not in ("-ex", "-iex", "-o", "--one-line", "-x", "-ix", "--batch-cmds"):
            continue
        command = rest[i + 1]
        if command is not None and command.startswith(("shell ", "!")):
            reading.scripts.append(command.removeprefix("shell ").removeprefix("!"))
        else:
            reading.doubts.append(f"{program} runs debugger commands, which cannot be judged here")


def _operands(rest: list[str | None], value_options: frozenset[str]) -> list[str | None]:
    found: list[str | None] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word is not None and word.startswith("-") and word != "-":
            skip = word in value_options
        else:
            found.append(word)
    return found
