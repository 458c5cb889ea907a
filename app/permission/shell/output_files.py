"""Files that downloaders, compilers, converters and formatters write, read from their
words: the value of an output option (`curl -o FILE`, `gcc -o FILE`, `pandoc -o FILE`),
or the operands a formatter rewrites in place (`black FILE`, `prettier --write FILE`,
`clang-format -i FILE`, `sponge FILE`). effects turns each into a write effect.

Pure: words in (None where computed, reported as ""), paths out.
"""

from __future__ import annotations

import posixpath

# Options whose value is a file the program writes.
_OUTPUT_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for names, options in [
        (("curl",), "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl"),
        (("wget",), "-O --output-document -o --output-file -a --append-output"),
        (("shuf",), "-o --output"),
        (("openssl",), "-out -keyout"),
        (("gpg", "gpg2"), "-o --output"),
        (("ssh-keygen",), "-f"),
        (("pandoc",), "-o --output"),
        (("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "nasm", "rustc", "tcc", "go"), "-o"),
        (("strip", "objcopy"), "-o"),
    ]
    for name in names
}
# Options that say a formatter only reports, leaving the files alone.
_CHECKING = frozenset({"--check", "--diff", "-c", "--dry-run", "-n", "-l", "--list-different", "-d"})
# The files a formatter given a folder rewrites in it (any, when not listed).
_SUFFIXES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("black", "isort", "ruff", "autopep8", "yapf"), (".py", ".pyi", ".ipynb")),
    **dict.fromkeys(("gofmt", "goimports"), (".go",)),
    "rustfmt": (".rs",),
    "shfmt": (".sh", ".bash"),
    "stylua": (".lua",),
    "clang-format": (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".m", ".mm", ".java", ".proto"),
    **dict.fromkeys(("eslint", "standard"), (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".vue")),
    "prettier": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".json", ".css", ".scss", ".less", ".html",
                 ".vue", ".md", ".mdx", ".yaml", ".yml", ".graphql"),
}
# Formatters that rewrite their operands: always (None), or when given one of the options.
_IN_PLACE: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(("black", "isort", "rustfmt", "dos2unix", "unix2dos", "sponge", "stylua", "strip"), None),
    **dict.fromkeys(("prettier",), frozenset({"--write", "-w"})),
    **dict.fromkeys(("gofmt", "goimports", "shfmt"), frozenset({"-w", "--write"})),
    **dict.fromkeys(("clang-format", "autopep8", "yapf", "yq"), frozenset({"-i", "--in-place", "--inplace"})),
    **dict.fromkeys(("eslint", "standard"), frozenset({"--fix"})),
}


def output_files(program: str, rest: list[str | None]) -> tuple[list[str], tuple[str, ...]]:
    """The files ``program`` writes given the words ``rest`` ("" for a computed one), and
    the suffixes of the files it rewrites in a folder it is given (any when empty)."""
    suffixes = _SUFFIXES.get(program, ())
    found = _option_values(rest, _OUTPUT_OPTIONS.get(program, frozenset()))
    if program == "ruff" and (rest[:1] == ["format"] or (rest[:1] == ["check"] and "--fix" in rest)):
        return found + _rewritten(rest[1:], None), suffixes
    if program == "curl":
        found += [_url_name(word) for word in _urls(rest)] if _any(rest, "-O", "--remote-name", "--remote-name-all") else []
        directory = _option_values(rest, frozenset({"--output-dir"}))
        found = [posixpath.join(directory[0], path) for path in found] if directory and directory[0] else found
    elif program == "wget":
        prefix = _option_values(rest, frozenset({"-P", "--directory-prefix"}))
        if not _option_values(rest, frozenset({"-O", "--output-document"})):
            found += [posixpath.join(prefix[0] if prefix else "", _url_name(url)) for url in _urls(rest)]
    elif program == "xxd" and "-r" in rest:
        operands = [word for word in rest if word is None or word == "-" or not word.startswith("-")]
        found += ["" if word is None else word for word in operands[1:2]]
    if program in _IN_PLACE:
        found += _rewritten(rest, _IN_PLACE[program])
    return found, suffixes


def _rewritten(rest: list[str | None], triggers: frozenset[str] | None) -> list[str]:
    """A formatter's operands, when it rewrites them."""
    if any(word in _CHECKING for word in rest if word is not None):
        return []
    if triggers is not None and not any(word in triggers for word in rest):
        return []
    return ["" if word is None else word for word in rest if word is None or not word.startswith("-")] or ["."]


def _option_values(rest: list[str | None], options: frozenset[str]) -> list[str]:
    found = []
    for i, word in enumerate(rest):
        if word is None:
            continue
        name, has_value, value = word.partition("=")
        if name in options:
            found.append(value if has_value else ("" if i + 1 >= len(rest) else rest[i + 1] or ""))
        elif word[:2] in options and len(word) > 2 and not word.startswith("--"):
            found.append(word[2:])  # `-oFILE`
    return found


def _urls(rest: list[str | None]) -> list[str]:
    return [word for word in rest if word is not None and "://" in word]


def _url_name(url: str) -> str:
    """The file name a download takes from its URL (`index.html` for a folder)."""
    path = url.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
    name = posixpath.basename(path.partition("/")[2]) if "/" in path else ""
    return name or "index.html"


def _any(rest: list[str | None], *names: str) -> bool:
    return any(word in names for word in rest)
