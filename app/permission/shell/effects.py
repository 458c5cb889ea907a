"""What one simple shell command does to files, read from its words: the read, write and
delete effects the bash tool judges with the `view`, `edit` and `delete` rules (the reads
are found by reads).

Pure: words in, effects out. A word is its value after quote removal, or None where it
expands at run time; such a path is reported as "" (it cannot be judged, so it is asked
about). Paths are kept as written, relative to where the command runs; the judge resolves
them. ``tree`` marks an effect that reaches everything under a folder (`rm -r`, `find
-delete`, `git clean`): the judge then judges every file inside it too.

Programs that write or delete files named only at run time (`xargs rm`, a `find -exec`
clause) are given the operands they will receive by the caller (parse), as the
trees those names come from.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, NamedTuple

from app.permission.shell.output_files import output_files
from app.permission.shell.reads import reads, split_words

Kind = Literal["read", "write", "delete"]


@dataclass(frozen=True, slots=True)
class Touch:
    """One effect on a path: ``kind`` read, write or delete; ``tree``: and all under it."""

    kind: Kind
    path: str
    tree: bool = False
    by_git: bool = False
    """Git's own work on the tree, which leaves `.git` alone."""
    untracked_kept: bool = False
    """It leaves alone what git does not track, such as opencode's data folder (all but
    `git clean -x`)."""
    suffixes: tuple[str, ...] = ()
    """For a tree: only the files ending so change (a formatter's `.py` files)."""
    named: bool = False
    """A read only if it names a file there is: an operand of a program that may or may
    not read it (parse)."""


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
        "script": "-c -t -T -I -O -B -E -m --command --timing --log-in --log-out --log-io --echo --logging-format",
        "split": "-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number --separator "
        "--additional-suffix --filter",
        "csplit": "-b -f -n --suffix-format --prefix --digits",
        "mkfifo": "-m --mode --context",
        "mknod": "-m --mode --context",
        "iconv": "-f -t -o --from-code --to-code --output",
        "awk": "-f -v -i -F -e -l -E --include --file --assign --field-separator --exec --source --load",
        "gawk": "-f -v -i -F -e -l -E --include --file --assign --field-separator --exec --source --load",
        "uniq": "-f -s -w --skip-fields --skip-chars --check-chars",
        "mktemp": "-p --suffix",
        "cpio": "-H -E -F -I -O -R -M --format --pattern-file --file --owner --message",
    }.items()
}
# `rename FROM TO FILES` (or `rename EXPRESSION FILES`): every operand counts, the
# expressions too (a needless question rather than a missed file).
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "gio", "rename", "prename"})
_WRITERS = frozenset({"touch", "truncate", "tee", "mkdir", "ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "mkfifo"})
_MODE_FIRST = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})  # the first operand is not a path
_COPIERS = frozenset({"cp", "install", "ln", "mv"})
_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma", "unlzma", "compress"}
)


def commands_in_options(
    who: str, words: list[str | None], options: Collection[str], scripts: list[str], doubts: list[str]
) -> None:
    """Command lines given as the value of one of ``options`` (`--opt=CMD` or `--opt CMD`)
    go to ``scripts``, to be judged as parts of the command; a value computed at run time
    goes to ``doubts`` (what ``who`` runs then cannot be known)."""
    for i, word in enumerate(words):
        if word is None:
            continue
        name, has_value, value = word.partition("=")
        if name not in options:
            continue
        given = value if has_value else (words[i + 1] if i + 1 < len(words) else "")
        if given is None:
            doubts.append(f"{who} {name} runs a command known only at run time")
        elif given:
            scripts.append(given)


def program_name(word: str) -> str:
    """`/usr/bin/rm`, `./rm` and `/usr/bin/rm/` all run `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1]


def file_effects(words: list[str | None], implicit: tuple[str, ...] = ()) -> tuple[Touch, ...]:
    """The effects of one simple command (``words[0]`` its program). ``implicit``: paths
    the program receives at run time besides its words (xargs, find -exec): any file
    there may be one of them, so each reaches its whole tree."""
    if implicit and any(word is not None and "{}" in word for word in words[1:]):
        # `find -exec cp x {} ;`, `xargs -I{} mv {} x`: the names go where `{}` stands
        placed = [words[0], *(word for each in words[1:] for word in _placed(each, implicit))]
        effects = _program_effects(placed, ())
    else:
        effects = _program_effects(words, implicit)
    if not implicit:
        return effects
    return tuple(Touch(t.kind, t.path, True) if t.path in implicit else t for t in effects)


def _placed(word: str | None, implicit: tuple[str, ...]) -> list[str | None]:
    """``word`` with `{}` replaced by each path the program receives."""
    if word is None or "{}" not in word:
        return [word]
    return [word.replace("{}", path) for path in implicit]


def _program_effects(words: list[str | None], implicit: tuple[str, ...]) -> tuple[Touch, ...]:
    if not words or words[0] is None:
        return ()
    program = program_name(words[0])
    read = tuple(Touch("read", path, tree) for path, tree in reads(program, [*words[1:], *implicit]))
    return read + _changes(program, words, implicit)


def _changes(program: str, words: list[str | None], implicit: tuple[str, ...]) -> tuple[Touch, ...]:
    """The writes and deletes of one simple command."""
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
        return _compressor_effects(program, options, operands)
    handler = _PROGRAMS.get(program) or (_python_module if _PYTHON.match(program) else None)
    effects = handler(options, operands, words[1:]) if handler else ()
    written, suffixes = output_files(program, words[1:])
    return effects + tuple(Touch("write", path, True, True, True, suffixes) for path in written)


# What each compressor adds to a file's name; the programs that take it off.
_SUFFIXES = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst", "lz4": ".lz4", "lzma": ".lzma",
             "compress": ".Z"}  # fmt: skip
_UNCOMPRESSORS = {"gunzip": "gzip", "bunzip2": "bzip2", "unxz": "xz", "unzstd": "zstd", "unlzma": "lzma"}


def _compressor_effects(program: str, options: list[str], operands: list[str]) -> tuple[Touch, ...]:
    """A compressor writes each file's packed (or unpacked) copy beside it and removes
    the file, unless it keeps it (`-k`) or writes to its output (`-c`, a listing, a test)."""
    def given(long: tuple[str, ...], letter: str) -> bool:  # `-k`, `--keep`, or in a cluster (`-dk`)
        return any(o in long or ("=" not in o and _short(o, letter)) for o in options)

    if given(("--stdout", "--list", "--test"), "c") or given((), "l") or given((), "t"):
        return ()
    keeps = given(("--keep",), "k")
    packer = _UNCOMPRESSORS.get(program, program)
    unpacks = program in _UNCOMPRESSORS or given(("--decompress", "--uncompress"), "d")
    suffix = _SUFFIXES.get(packer, "")
    recursive = _recursive(options)
    effects = [] if keeps else [Touch("delete", path, tree=recursive) for path in operands]
    for path in operands:
        if recursive or not path:
            continue
        written = path.removesuffix(suffix) if unpacks else path + suffix
        effects.append(Touch("write", written))
    return tuple(effects)


_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")


def _python_module(_options: list[str], _operands: list[str], words: list[str | None]) -> tuple[Touch, ...]:
    """The standard library's archive modules unpack as unzip and tar do: `python3 -m
    zipfile -e ARCHIVE DIR` and `python3 -m tarfile -e ARCHIVE [DIR]` write the whole folder."""
    if len(words) < 4 or words[0] != "-m" or words[1] not in ("zipfile", "tarfile"):
        return ()
    rest = words[2:]
    if not rest or rest[0] not in ("-e", "--extract"):
        return ()
    operands = rest[1:]
    target = operands[1] if len(operands) > 1 else "." if words[1] == "tarfile" else None
    return () if target is None else (Touch("write", target or "", tree=True),)


def _split(program: str, rest: list[str | None]) -> tuple[list[str], list[str]]:
    """(options, operands): options as written (a value-taking option's value is kept
    with it as `-o=VALUE`), operands with "" for a computed word. After `--`, all operands."""
    options, _, operands = split_words(rest, _VALUE_OPTIONS.get(program, frozenset()), value_in_option=True)
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
    # A folder copied in lands under its own name, or (`x/.`, `x/`) as its contents: all
    # that is already there may be overwritten.
    recursive = program == "mv" or (program == "cp" and _copies_folders(options))
    effects = [Touch("write", target)]
    effects += [
        Touch("write", posixpath.join(target, posixpath.basename(s.rstrip("/"))), tree=recursive) for s in sources if s
    ]
    no_target_folder = any(o == "--no-target-directory" or ("=" not in o and _short(o, "T")) for o in options)
    contents = no_target_folder or any(_contents_of(s) for s in sources)
    if recursive and contents:
        effects.append(Touch("write", target, tree=True))
    if program == "mv":
        effects += [Touch("delete", source, tree=True) for source in sources]
    links = program == "ln" or (
        program == "cp" and any(o in ("-l", "-s", "--link", "--symbolic-link") or _short(o, "l") or _short(o, "s")
                                for o in options)
    )  # fmt: skip
    if links:
        # A second name for the same file or folder (a hard link, or a symbolic one, whose
        # target is read from the link's folder): writing through it changes the source,
        # and everything under a linked folder.
        effects += [Touch("write", source, tree=True) for source in sources if source]
        link_folder = target if len(sources) > 1 or target.endswith("/") else posixpath.dirname(target)
        effects += [Touch("write", posixpath.join(link_folder, source), tree=True) for source in sources if source]
    return tuple(effects)


def _copies_folders(options: list[str]) -> bool:
    """cp's and rsync's `-r`, `-R`, `-a` (alone or in a cluster: `-rf`, `-av`), or their long names."""
    return any(
        o in ("--recursive", "--archive") or ("=" not in o and any(_short(o, letter) for letter in "rRa"))
        for o in options
    )


def _contents_of(source: str) -> bool:
    """Whether copying ``source`` puts what is inside it into the target, not the folder
    itself: `x/`, `x/.`, `.` and `..` have no name of their own to land under."""
    return source.endswith(("/", "/.")) or posixpath.basename(source.rstrip("/")) in (".", "..")


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
    creates = "c" in mode or "r" in mode or "u" in mode or any(
        o in ("-c", "--create", "-r", "--append", "-u", "--update")
        or (o[:1] == "-" and o[1:2] != "-" and any(letter in o for letter in "cru"))
        for o in options
    )
    named = operands[1:] if mode else operands  # the mode word (`cf`) is not a file
    combined_f = any(o[:1] == "-" and o[1:2] != "-" and o.endswith("f") and len(o) > 2 for o in options)
    archive = _option_value(options, "-f", "--file") or (named[0] if ("f" in mode or combined_f) and named else None)
    if creates and archive:
        effects.append(Touch("write", archive))
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
    # A folder's contents copied in (`x/`, `.`) may overwrite what is already there.
    contents = _copies_folders(options) and any(_contents_of(s) for s in sources if s)
    effects = [Touch("write", target, tree=contents or any(o.startswith("--delete") for o in options))]
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


def _first_operand(_options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`zip ARCHIVE FILES`, `script FILE`: the first operand is written."""
    return (Touch("write", operands[0]),) if operands else ()


def _zip(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`zip ARCHIVE FILES`: the archive is written; with `-m` (move) the files are deleted."""
    moves = any(o == "--move" or (o[:1] == "-" and o[1:2] != "-" and "m" in o) for o in options)
    removed = tuple(Touch("delete", path, tree=True) for path in operands[1:]) if moves else ()
    return _first_operand(options, operands, _words) + removed


def _in_place(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`perl -pi -e SCRIPT FILES` (or `ruby -i`): the files after the script are rewritten."""
    edits = any(o.startswith("-") and not o.startswith("--") and "i" in o for o in options)
    return tuple(Touch("write", path) for path in operands[1:]) if edits else ()


def _history(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`history -w FILE` / `-a FILE` writes the shell's history into FILE."""
    writes = any(o in ("-w", "-a") for o in options)
    return tuple(Touch("write", path) for path in operands) if writes else ()


def _database(_options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`sqlite3 FILE [SQL]` changes the database file (opencode's own, for one)."""
    return (Touch("write", operands[0]),) if operands else ()


def _second_operand(_options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`uniq INPUT OUTPUT`, `mknod NAME TYPE` (the first): the file it writes."""
    return (Touch("write", operands[1]),) if len(operands) > 1 else ()


def _node(_options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    return (Touch("write", operands[0]),) if operands else ()


def _split_files(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`split INPUT PREFIX` (`x` by default), `csplit -f PREFIX INPUT ...` (`xx`): the files
    named PREFIX and a suffix."""
    prefix = _option_value(options, "-f", "--prefix")
    if prefix is None:
        prefix = operands[1] if len(operands) > 1 else "x"
    return (Touch("write", f"{prefix}*"),)


def _output_option(options: list[str], _operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`iconv -o FILE`: the file named by its output option."""
    output = _option_value(options, "-o", "--output")
    return () if output is None else (Touch("write", output),)


def _awk(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """gawk's `-i inplace` rewrites its input files (after the program, unless `-f` gave it)."""
    if _option_value(options, "-i", "--include") not in ("inplace", "inplace.awk"):
        return ()
    files = operands if _option_value(options, "-f", "--file", "-e", "--source") is not None else operands[1:]
    return tuple(Touch("write", path) for path in files)


def _extract(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """Archives unpacked where the command runs or into `-o`/`-d`: `cpio -i`, `7z x`,
    `unrar x`, `ar x`, `jar x`: the whole folder (the names come from the archive).
    `7z a -sdel` deletes the files it packs."""
    mode = operands[0] if operands else ""
    if mode == "a" and "-sdel" in options:
        return tuple(Touch("delete", path, tree=True) for path in operands[2:])
    extracting = any(o in ("-i", "--extract") or (o[:1] == "-" and o[1:2] != "-" and "i" in o) for o in options) or mode in (
        "x", "e", "xf", "xvf", "xv"
    )
    if not extracting:
        return ()
    where = next((o[2:] for o in options if o.startswith("-o") and len(o) > 2), None)
    where = where or _option_value(options, "-d", "-C", "--directory") or "."
    return (Touch("write", where, tree=True),)


def _mktemp(options: list[str], operands: list[str], _words: list[str | None]) -> tuple[Touch, ...]:
    """`mktemp [-d] [-p DIR] [TEMPLATE]`: a new file or folder named after the template."""
    folder = _option_value(options, "-p", "--tmpdir")
    if not operands and folder is None:
        return ()
    template = operands[0] if operands else "tmp.XXXXXXXXXX"
    stem = template.rstrip("X")
    name = stem + "*" if len(template) - len(stem) >= 3 else template
    return (Touch("write", posixpath.join(folder, name) if folder and not name.startswith("/") else name),)


_PROGRAMS = {
    "cpio": _extract,
    "7z": _extract,
    "7za": _extract,
    "7zr": _extract,
    "unrar": _extract,
    "ar": _extract,
    "jar": _extract,
    "mktemp": _mktemp,
    "uniq": _second_operand,
    "mknod": _node,
    "split": _split_files,
    "csplit": _split_files,
    "iconv": _output_option,
    "awk": _awk,
    "gawk": _awk,
    "sqlite3": _database,
    "zip": _zip,
    "script": _first_operand,
    "perl": _in_place,
    "ruby": _in_place,
    "history": _history,
    "sed": _sed,
    "dd": _dd,
    "sort": _sort,
    "tar": _tar,
    "unzip": _unzip,
    "rsync": _rsync,
    "find": _find,
    "patch": _patch,
}
KNOWN_PROGRAMS = frozenset(
    {*_DELETERS, *_WRITERS, *_MODE_FIRST, *_COPIERS, *_COMPRESSORS, *_PROGRAMS, *_VALUE_OPTIONS}
)
"""The programs whose file effects are read here from their words."""


_WORD_END = frozenset(" \t\n;|&()<>")


class BraceExpansion(NamedTuple):
    """A command with its brace expansions done; ``whole`` is False when they stopped
    short because the text grew past what is judged (`{,,,…}` repeated multiplies it)."""

    text: str
    whole: bool


_EXPANSION_GROWTH = 4
"""How many times its own length (and at least 64 KiB) an expanded command may grow."""


def brace_expanded(command: str, limit: int = 32) -> BraceExpansion | None:
    """``command`` with its unquoted brace expansions done as bash does them before
    anything runs (`{rm,x}` is `rm x`, `a{b,c}` is `ab ac`), or None when it has none.
    The grammar reads `{rm,x}` as a syntax error; judged expanded, a deny on `rm *` holds.
    Not whole when lists remain after ``limit`` expansions or the text would outgrow
    ``_EXPANSION_GROWTH`` times its length: lists multiply (`{a,b}` twenty times is a
    million words)."""
    text, changed = command, False
    most = max(_EXPANSION_GROWTH * len(command), 65_536)
    for _ in range(limit):
        found = _first_brace(text)
        if found is None:
            return BraceExpansion(text, whole=True) if changed else None
        start, open_at, close_at, end = found
        prefix, body, suffix = text[start:open_at], text[open_at + 1 : close_at], text[close_at + 1 : end]
        choices = _top_level_split(body)
        if len(text) + len(choices) * (len(prefix) + len(suffix) + 1) > most:
            return BraceExpansion(text, whole=False)
        words = " ".join(prefix + choice + suffix for choice in choices)
        text, changed = text[:start] + words + text[end:], True
    return BraceExpansion(text, whole=_first_brace(text) is None)


def _first_brace(text: str) -> tuple[int, int, int, int] | None:
    """(word start, `{`, its `}`, word end) of the first unquoted `{a,b}` not after `$`."""
    lists: dict[int, int] = {}
    run_end = 0  # the lists of the text before this are in ``lists``
    quote, i, word_start = "", 0, 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                i += 1
        elif char == "\\":
            i += 1
        elif char in "'\"":
            quote = char
        elif char in _WORD_END:
            word_start = i + 1
        elif char == "{" and (i == 0 or text[i - 1] != "$"):
            if i >= run_end:
                run_end = _run_end(text, i)
                lists = _brace_lists(text, i, run_end)
            if (close := lists.get(i)) is not None:
                end = close + 1
                while end < len(text) and text[end] not in _WORD_END:
                    end += 1
                return word_start, i, close, end
        i += 1
    return None


_RUN_BREAK = re.compile(r"""[ \t\n'"\\]""")


def _run_end(text: str, start: int) -> int:
    """Where the run of text from ``start`` ends: at a blank, quote or backslash, which no
    brace list spans."""
    found = _RUN_BREAK.search(text, start)
    return len(text) if found is None else found.start()


def _brace_lists(text: str, start: int, end: int) -> dict[int, int]:
    """Where each `{` of ``text[start:end]`` with a comma at its own level has its
    matching `}`: `{a,b}` is a list bash expands, `{a}` is not. One pass with a stack of
    the open braces, so a run of unclosed ones costs no more than its length."""
    lists: dict[int, int] = {}
    open_braces: list[tuple[int, bool]] = []  # (where, whether a comma is at its level)
    for i in range(start, end):
        char = text[i]
        if char == "{":
            open_braces.append((i, False))
        elif char == "}" and open_braces:
            at, comma = open_braces.pop()
            if comma:
                lists[at] = i
        elif char == "," and open_braces:
            open_braces[-1] = (open_braces[-1][0], True)
    return lists


def _top_level_split(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return parts


_ANSI_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip
_ANSI_C_CODE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)


def ansi_c_text(body: str) -> str:
    """The text of bash's `$'...'` quoting (its body given): `$'\\x72m'` is `rm`."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1].upper()) ^ 0x40)
        return _ANSI_C_ESCAPES.get(code, "\\" + code)

    return _ANSI_C_CODE.sub(one, body)
