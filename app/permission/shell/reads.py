"""What one simple shell command reads, from its words: the read effects the bash tool
judges with the `view` rules, which judge every read whatever tool or program makes it
(`cat secrets/key.txt` is a read of `secrets/key.txt`, as `view secrets/key.txt` is).

Pure: words in, read effects out, as effects gives the writes and deletes. A word
computed at run time is reported as "" (it may be any file). A value option known to
take the next word keeps that word from being taken for a file; an option this table
does not know leaves its value among the operands, a read judged needlessly rather than
one missed. Listings (`ls`, `find`, `stat`) show names, not content: not reads here.
The files a shell or an interpreter runs (`bash x.sh`, `source x`, `python3 x.py`) and
input redirections (`< file`) are reads too; the parser adds those (parse).
"""

from __future__ import annotations

import posixpath

Read = tuple[str, bool]
"""A path read, and whether everything under it is read too (a folder's tree)."""

# Programs that read every operand as a file.
_READERS = frozenset(
    """cat tac nl head tail less more most bat batcat view sort uniq cut wc diff diff3 sdiff cmp od xxd hexdump
    hd strings base64 base32 basenc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum rev
    fold fmt pr paste join comm column iconv file expand unexpand shuf tsort look zcat zless zmore bzcat bzless
    xzcat lzcat zstdcat gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 lzma unlzma compress uncompress vi vim
    nvim view nano emacs ed ex split csplit unzip zipinfo readelf objdump nm hexyl jless xmllint""".split()
)
# Programs whose first operand is a pattern, a script or a filter, unless an option gives
# it (`grep -e PATTERN`, `sed -f SCRIPT`): the operands after it are files.
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk",
                            "nawk", "jq", "gojq", "yq"})  # fmt: skip
# Options giving the pattern or script, which leave every operand a file.
_GIVEN_FIRST = frozenset({"-e", "-f", "--regexp", "--file", "--expression", "--from-file", "--source", "--exec"})
# Programs that search a folder's whole tree: always, or with a recursive option.
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "scp"})
_RECURSIVE_LETTERS = {"grep": "rR", "egrep": "rR", "fgrep": "rR", "zgrep": "rR", "diff": "r", "zip": "r",
                      "cp": "rRa", "rsync": "ra", "scp": "r"}  # fmt: skip
# Programs that search the folder they run in when given no file.
_SEARCH_HERE = frozenset({"rg", "ag", "ack"})
# Options taking the next word as a value, per program; those whose value is a file read
# are in _FILE_OPTIONS.
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for names, options in {
        "head tail": "-n -c --lines --bytes",
        "grep egrep fgrep zgrep": "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context "
        "--before-context --context --label --devices --directories --exclude --include --exclude-dir",
        "rg": "-e -f -g -t -T -m -A -B -C -M -j -d -E --regexp --file --glob --iglob --type --type-not --max-count "
        "--after-context --before-context --context --max-columns --threads --max-depth --encoding --sort --sortr",
        "ag ack": "-A -B -C -G -m --after --before --context --file-search-regex --max-count",
        "sed": "-e -f -l --expression --file --line-length",
        "awk gawk mawk nawk": "-f -v -F -i -e -l -E --file --assign --field-separator --include --source --load --exec",
        "jq gojq": "-f -L --from-file --indent",
        "cut": "-d -f -c -b --delimiter --fields --characters --bytes --output-delimiter",
        "sort": "-o -k -t -T -S --output --key --field-separator --temporary-directory --buffer-size",
        "uniq": "-f -s -w --skip-fields --skip-chars --check-chars",
        "diff": "-U -C -L -I -x -X -S --label",
        "cmp": "-i -n --ignore-initial --bytes",
        "od": "-A -j -N -S -t -w",
        "xxd": "-c -g -l -o -s -n",
        "hexdump hd": "-n -s -e -f",
        "strings": "-n -t -e -T",
        "base64 base32 basenc": "-w --wrap",
        "fold fmt": "-w -p -g --width",
        "paste": "-d --delimiters",
        "join": "-1 -2 -j -t -o -e -a -v",
        "column": "-s -c -o -N -E -H -W -R -T",
        "iconv": "-f -t -o --from-code --to-code --output",
        "file": "-m -e -F -P",
        "nl": "-b -d -f -h -i -l -n -s -v -w",
        "shuf": "-n -o --random-source",
        "split": "-a -b -C -l -n -t",
        "csplit": "-b -f -n",
        "cp mv install": "-t -S -m -o -g --target-directory --suffix",
        "ln": "-t -S --target-directory --suffix",
        "rsync": "-e --rsh --exclude --include --filter",
        "zip": "-x -i -b -n -t -tt",
        "unzip": "-d -x",
        "scp": "-P -i -o -F -l -c -S -J",
        "curl": "-o -H -A -e -u -X -w --output --header --user-agent --referer --user --request --write-out",
        "xargs": "-a -I -d -E -L -n -P -s --arg-file --delimiter --eof --max-lines --max-args --max-procs",
    }.items()
    for name in names.split()
}
# Options whose value is a file the program reads: a pattern, script or format file, an
# input list.
_FILE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for names, options in {
        "grep egrep fgrep zgrep rg sed": "-f --file",
        "awk gawk mawk nawk": "-f --file -i --include -E --exec",
        "jq gojq": "-f --from-file",
        "sort wc": "--files0-from",
        "diff": "-X --exclude-from",
        "shuf": "--random-source",
        "file": "-m",
        "hexdump hd": "-f",
    }.items()
    for name in names.split()
}
# Programs that copy, move, link or pack their sources (the last operand, or `-t DIR`, is where).
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_KNOWN = _READERS | _PATTERN_FIRST | _COPIERS | {"tar", "zip", "dd", "curl", "wget", "git", "xargs"}


def known(program: str) -> bool:
    """Whether ``reads`` knows what ``program`` reads (the others are in parse's hands)."""
    return program in _KNOWN


def reads(program: str, rest: list[str | None]) -> list[Read]:
    """The reads of one simple command: ``program`` its name, ``rest`` its other words
    (None where computed)."""
    if program == "dd":
        return [(word[3:], False) for word in rest if word is not None and word.startswith("if=")]
    if program == "curl" or program == "wget":
        return _uploads(rest)
    if program == "xargs":  # `xargs -a FILE`: the names (or any text) it hands on come from FILE
        _, values, _ = _split(program, rest)
        return [(value, False) for option, value in values if option in ("-a", "--arg-file")]
    reader = program in _READERS or program in _PATTERN_FIRST or program in _COPIERS
    if not reader and program not in ("tar", "zip"):
        return []
    options, values, operands = _split(program, rest)
    tree = program in _ALWAYS_RECURSIVE or _recursive(program, options)
    file_options = _FILE_OPTIONS.get(program, frozenset())
    files = [value for option, value in values if option in file_options]
    if program == "yq" and operands[:1] in (["e"], ["eval"], ["ea"], ["eval-all"]):
        operands = operands[1:]  # `yq e EXPR FILE`: the command word, then the expression
    if program in _PATTERN_FIRST:
        given = any(option in _GIVEN_FIRST for option, _ in values) or any(o.startswith(("--regexp=", "--file=",
                    "--expression=", "--from-file=")) for o in options)  # fmt: skip
        operands = operands if given else operands[1:]
        if program in ("awk", "gawk", "mawk", "nawk"):
            operands = [word for word in operands if not _assignment(word)]
    elif program in _COPIERS:
        operands = _sources(program, options, values, operands)
    elif program == "tar":
        return _tar(rest, options, values, operands)
    elif program == "zip":
        operands = operands[1:]  # the archive is written; the files after it are read
    if not operands and (program in _SEARCH_HERE or (tree and program in _RECURSIVE_LETTERS)):
        operands = ["."]
    # What is moved, or reached through a link, is all that lies under it.
    whole = tree or program in ("mv", "ln")
    return [(path, whole) for path in operands] + [(path, False) for path in files]


def split_words(
    rest: list[str | None], takes_value: frozenset[str], *, value_in_option: bool = False
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """A program's words after its name as (options, (option, value) pairs, operands):
    "" stands for a computed word, and after `--` every word is an operand. ``takes_value``
    names the options whose value may be the next word; such a value is in the pairs,
    and in the options too, as `-o=VALUE`, when ``value_in_option``. `--name=value` and
    `-nVALUE` of those options are options as written, their values in the pairs as well."""
    options: list[str] = []
    values: list[tuple[str, str]] = []
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
        elif word in takes_value and i + 1 < len(rest):
            values.append((word, rest[i + 1] or ""))
            if value_in_option:
                options.append(f"{word}={rest[i + 1] or ''}")
            i += 1
        else:
            name, has_value, value = word.partition("=")
            if has_value and name in takes_value:
                values.append((name, value))
            elif not word.startswith("--") and word[:2] in takes_value and len(word) > 2:
                values.append((word[:2], word[2:]))  # `-fFILE`, `-n5`
            options.append(word)
        i += 1
    return options, values, operands


def _split(program: str, rest: list[str | None]) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    return split_words(rest, _VALUE_OPTIONS.get(program, frozenset()))


def _recursive(program: str, options: list[str]) -> bool:
    letters = _RECURSIVE_LETTERS.get(program, "")
    if not letters:
        return False
    return any(
        o in ("--recursive", "--dereference-recursive", "--archive", "--directories=recurse", "-d=recurse")
        or (o[:1] == "-" and o[1:2] != "-" and any(letter in o[1:] for letter in letters))
        for o in options
    )


def _assignment(word: str) -> bool:
    """An awk operand `NAME=value`, which sets a variable rather than naming a file."""
    name, has_value, _ = word.partition("=")
    return bool(has_value) and name.isidentifier()


def _sources(program: str, options: list[str], values: list[tuple[str, str]], operands: list[str]) -> list[str]:
    """What cp, mv, install, ln, rsync and scp copy, move or link: every operand but the
    last, or all of them with `-t DIR`. A link's target is read through the link; a
    symbolic one's is named from the link's folder, so it is read from there too."""
    folder = next((value for option, value in values if option in ("-t", "--target-directory")), None)
    folder = folder or next((o.partition("=")[2] for o in options if o.startswith("--target-directory=")), None)
    sources = operands if folder is not None else operands[:-1]
    links = program == "ln" or (program == "cp" and any(o in ("-s", "--symbolic-link") or (
        o[:1] == "-" and o[1:2] != "-" and "s" in o) for o in options))  # fmt: skip
    if not links or not sources:
        return sources
    if folder is None:
        target = operands[-1]
        folder = target if len(sources) > 1 or target.endswith("/") else posixpath.dirname(target)
    return [*sources, *(posixpath.join(folder, source) for source in sources if source and folder)]


def _tar(rest: list[str | None], options: list[str], values: list[tuple[str, str]], operands: list[str]) -> list[Read]:
    """`tar -c` reads the files it packs (whole folders); any other mode reads its archive
    (`tar -xOf` prints what it holds)."""
    first = rest[0] if rest else None
    mode = first if first and not first.startswith("-") else ""
    named = operands[1:] if mode else operands
    short = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-") + mode
    archive = next((value for option, value in values if option in ("-f", "--file")), None)
    if archive is None and "f" in short and named:
        archive, named = named[0], named[1:]
    creates = any(letter in short for letter in "cru") or any(o in ("--create", "--append", "--update") for o in options)
    if creates:
        return [(path, True) for path in named]
    return [(archive, False)] if archive else []


_UPLOAD_OPTIONS = frozenset({"-T", "--upload-file", "--post-file", "--body-file"})
_DATA_OPTIONS = frozenset({"-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "-F", "--form",
                           "--json"})  # fmt: skip


def _uploads(rest: list[str | None]) -> list[Read]:
    """The files curl or wget sends: `-T FILE`, `--post-file=FILE`, `-d @FILE`, `-F x=@FILE`
    or `x=<FILE`."""
    found: list[str] = []
    for i, word in enumerate(rest):
        if word is None:
            continue
        name, has_value, value = word.partition("=") if word.startswith("--") else (word, False, "")
        if not has_value:
            if word[:2] in ("-T", "-d", "-F") and len(word) > 2:
                name, value = word[:2], word[2:]
            elif i + 1 < len(rest):
                value = rest[i + 1] or ""
        if name in _UPLOAD_OPTIONS:
            found.append(value)
        elif name in _DATA_OPTIONS:
            at = value.find("@") if "@" in value else value.find("<")
            if at >= 0 and (at == 0 or name in ("-F", "--form", "--data-urlencode")):
                found.append(value[at + 1 :].split(";", 1)[0])
    return [(path, False) for path in found if path != "-"]
