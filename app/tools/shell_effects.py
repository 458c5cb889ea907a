"""What one simple shell command does to files, read from its words: the write and delete
effects the bash tool judges with the `edit` and `delete` rules.

Pure: words in, effects out. A word is its value after quote removal, or None where it
expands at run time; such a path is reported as "" (it cannot be judged, so it is asked
about). Paths are kept as written, relative to where the command runs; the judge resolves
them. ``tree`` marks an effect that reaches everything under a folder (`rm -r`, `find
-delete`, `git clean`): the judge then judges every file inside it too.

Programs that write or delete files named only at run time (`xargs rm`, a `find -exec`
clause) are given the operands they will receive by the caller (shell_parse), as the
trees those names come from.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass
from typing import Literal

Kind = Literal["write", "delete"]


@dataclass(frozen=True, slots=True)
class Touch:
    """One effect on a path: ``kind`` write or delete; ``tree``: and all under it."""

    kind: Kind
    path: str
    tree: bool = False
    by_git: bool = False
    """Git's own work on the tree, which leaves `.git` alone."""
    untracked_kept: bool = False
    """It leaves alone what git does not track, such as opencode's data folder (all but
    `git clean -x`)."""


# Options that take a value (the next word), per program: the value is not an operand.
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for name, options in {
        "cp": "-t -S --target-directory --suffix",
        "mv": "-t -S --target-directory --suffix",
        "install": "-t -S -m -o -g --target-directory --suffix --mode --owner --group",
        "ln": "-t -S --target-directory --suffix",
        "truncate": "-s -r --size --reference",
        "touch": "-d -r -t --date --reference",
        "mkdir": "-m --mode",
        "shred": "-n -s --iterations --size",
        "sed": "-e -f -l --expression --file --line-length",
        "sort": "-o -k -t -T -S --output --key --field-separator --temporary-directory --buffer-size",
        "tar": "-C -f -b -T -X --directory --file --files-from --exclude-from",
        "unzip": "-d -x",
        "rsync": "-e --rsh --exclude --include --filter",
        "chmod": "--reference",
        "chown": "--reference",
        "chgrp": "--reference",
    }.items()
}
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "gio"})
_WRITERS = frozenset({"touch", "truncate", "tee", "mkdir", "ed", "ex", "vi", "vim", "nvim", "nano", "emacs"})
_MODE_FIRST = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})  # the first operand is not a path
_COPIERS = frozenset({"cp", "install", "ln", "mv"})
_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma", "unlzma", "compress"}
)


def program_name(word: str) -> str:
    """`/usr/bin/rm`, `./rm` and `/usr/bin/rm/` all run `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1]


def file_effects(words: list[str | None], implicit: tuple[str, ...] = ()) -> tuple[Touch, ...]:
    """The effects of one simple command (``words[0]`` its program). ``implicit``: paths
    the program receives at run time besides its words (xargs, find -exec): any file
    there may be one of them, so each reaches its whole tree."""
    effects = _program_effects(words, implicit)
    if not implicit:
        return effects
    return tuple(Touch(t.kind, t.path, True) if t.path in implicit else t for t in effects)


def _program_effects(words: list[str | None], implicit: tuple[str, ...]) -> tuple[Touch, ...]:
    if not words or words[0] is None:
        return ()
    program = program_name(words[0])
    options, operands = _split(program, words[1:])
    operands += list(implicit)
    if program in _DELETERS:
        return tuple(Touch("delete", path, tree=True) for path in operands)
    if program in _WRITERS:
        return tuple(Touch("write", path, tree="-R" in options) for path in operands)
    if program in _MODE_FIRST:
        return tuple(Touch("write", path, tree=_recursive(options)) for path in operands[1:])
    if program in _COPIERS:
        return _copy_effects(program, options, operands)
    if program in _COMPRESSORS:
        keeps = any(option in ("-c", "-k", "--keep", "--stdout", "-l", "--list", "-t", "--test") for option in options)
        return () if keeps else tuple(Touch("delete", path, tree=_recursive(options)) for path in operands)
    handler = _PROGRAMS.get(program)
    return handler(options, operands, words[1:]) if handler else ()


def _split(program: str, rest: list[str | None]) -> tuple[list[str], list[str]]:
    """(options, operands): options as written (a value-taking option's value is kept
    with it as `-o=VALUE`), operands with "" for a computed word. After `--`, all operands."""
    value_options = _VALUE_OPTIONS.get(program, frozenset())
    options: list[str] = []
    operands: list[str] = []
    i, done = 0, False
    while i < len(rest):
        word = rest[i]
        if word is None:
            operands.append("")
        elif done or word == "-" or not word.startswith("-"):
            operands.append(word)
        elif word == "--":
            done = True
        elif word in value_options and i + 1 < len(rest):
            options.append(f"{word}={rest[i + 1] or ''}")
            i += 1
        else:
            options.append(word)
        i += 1
    return options, operands


def _option_value(options: list[str], *names: str) -> str | None:
    """The value of the last of ``names`` given (`-t DIR`, `--target-directory=DIR`, `-tDIR`)."""
    found = None
    for option in options:
        for name in names:
            if option.startswith(f"{name}="):
                found = option[len(name) + 1 :]
            elif len(name) == 2 and option.startswith(name) and len(option) > 2 and not option.startswith("--"):
                found = option[2:]
    return found


def _recursive(options: list[str]) -> bool:
    return any(o in ("-R", "-r", "--recursive") or (o[:1] == "-" and o[1:2] != "-" and "R" in o) for o in options)


def _copy_effects(program: str, options: list[str], operands: list[str]) -> tuple[Touch, ...]:
    """cp/install/ln/mv: the target is written, and so is each source's name inside it
    (the target may be a folder); mv also deletes its sources."""
    target = _option_value(options, "-t", "--target-directory")
    if target is None:
        if len(operands) < 2:
            return ()
        *sources, target = operands
    else:
        sources = operands
    effects = [Touch("write", target)]
    effects += [Touch("write", posixpath.join(target, posixpath.basename(s.rstrip("/")))) for s in sources if s]
    if program == "mv":
        effects += [Touch("delete", source, tree=True) for source in sources]
    hard_link = program == "ln" and not any(o in ("-s", "--symbolic") or _short(o, "s") for o in options)
    if hard_link or (program == "cp" and any(o in ("-l", "--link") or _short(o, "l") for o in options)):
        # A second name for the same file: writing through it changes the source.
        effects += [Touch("write", source) for source in sources]
    return tuple(effects)


def _short(option: str, letter: str) -> bool:
    return option[:1] == "-" and option[1:2] != "-" and letter in option[1:]


def _sed(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    in_place = any(o == "-i" or o.startswith(("-i", "--in-place")) for o in options) or any(
        o.startswith("-") and not o.startswith("--") and "i" in o[1:] and "=" not in o for o in options
    )
    if not in_place:
        return ()
    scripted = any(o.startswith(("-e=", "-f=", "--expression=", "--file=")) for o in options)
    return tuple(Touch("write", path) for path in (operands if scripted else operands[1:]))


def _dd(_options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    return tuple(Touch("write", word[3:]) for word in operands if word.startswith("of="))


def _sort(options: list[str], _operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    output = _option_value(options, "-o", "--output")
    return () if output is None else (Touch("write", output),)


def _tar(options: list[str], operands: list[str], words: list[str | None]) -> tuple[Touch, ...]:
    first = words[0] if words else None
    mode = (first or "") if first and not first.startswith("-") else ""
    extracts = "x" in mode or any(
        o in ("-x", "--extract", "--get") or (o[:1] == "-" and o[1:2] != "-" and "x" in o) for o in options
    )
    where = _option_value(options, "-C", "--directory") or "."
    effects = [Touch("write", where, tree=True)] if extracts else []
    if "--remove-files" in options:
        effects += [Touch("delete", path, tree=True) for path in operands[1 if mode else 0 :]]
    return tuple(effects)


def _unzip(options: list[str], _operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    listing = any(o in ("-l", "-t", "-v", "-p", "-Z") for o in options)
    return () if listing else (Touch("write", _option_value(options, "-d") or ".", tree=True),)


def _rsync(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    if len(operands) < 2:
        return ()
    *sources, target = operands
    effects = [Touch("write", target, tree=any(o.startswith("--delete") for o in options))]
    effects += [Touch("write", posixpath.join(target, posixpath.basename(s.rstrip("/")))) for s in sources if s]
    if "--remove-source-files" in options:
        effects += [Touch("delete", source, tree=True) for source in sources]
    return tuple(effects)


def _find(_options: list[str], _operands: list[str], words: list[str | None]) -> tuple[Touch, ...]:
    """`find START... -delete` deletes under its starting points; `-fprint FILE` writes."""
    effects = [Touch("delete", path, tree=True) for path in find_targets(words)] if "-delete" in words else []
    for i, word in enumerate(words[:-1]):
        if word in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            effects.append(Touch("write", words[i + 1] or ""))
    return tuple(effects)


def find_starts(words: list[str | None]) -> tuple[str, ...]:
    """The starting points of `find` (its words after the program): the operands before
    the first expression word; `.` when none is given."""
    starts: list[str] = []
    for word in words:
        if word is not None and (word.startswith(("-", "(", "!", ")")) or word in (",",)):
            if word in ("-H", "-L", "-P") and not starts:
                continue
            break
        starts.append(word or "")
    return tuple(starts) or (".",)


def find_targets(words: list[str | None]) -> tuple[str, ...]:
    """What `find` hands to `-delete` or `-exec`: its starting points, narrowed, when the
    expression is a plain `-name PATTERN` test, to the matching entries below them
    (`START/**/PATTERN`, which the judge globs). Any other expression: the whole trees."""
    starts = find_starts(words)
    expression = words[len(starts) :] if words[: len(starts)] == list(starts) else words
    names = [expression[i + 1] for i, word in enumerate(expression[:-1]) if word == "-name"]
    alternatives = any(word in ("-o", "-or", "!", "-not", "(", ",") for word in expression)
    if len(names) != 1 or names[0] is None or alternatives or "/" in names[0]:
        return starts
    pattern = names[0]
    found = []
    for start in starts:
        if fnmatch.fnmatchcase(posixpath.basename(start.rstrip("/")) or start, pattern):
            found.append(start)
        found.append(posixpath.join(start, "**", pattern))
    return tuple(found)


def _patch(options: list[str], _operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`patch` changes the files its input names, unknown here: the whole tree it runs in."""
    if any(o in ("--dry-run", "-C", "--check") for o in options):
        return ()
    return (Touch("write", _option_value(options, "-d", "--directory") or ".", tree=True),)


_PROGRAMS = {
    "sed": _sed,
    "dd": _dd,
    "sort": _sort,
    "tar": _tar,
    "unzip": _unzip,
    "rsync": _rsync,
    "find": _find,
    "patch": _patch,
}
