"""What a `git` command does, read from its words: the commands git will run for it, the
files it writes or deletes, and what cannot be known from the command line.

`"git *": "allow"` must not run anything through git: a `-c alias.x='!rm a'`, a
`core.fsmonitor`, a pager or an `--upload-pack` program is a command line git runs, so
it is judged as a part of its own; a `!` alias defined elsewhere (any subcommand that is
not one of git's own could be one), `core.hooksPath`, an included config file or another
repository's folder cannot be judged, so they ask; `git rm`, `clean`, `checkout -- PATH`,
`restore`, `reset --hard`, `stash drop` delete or overwrite the files they name (the
whole tree when none is named). Pure: words in, a reading out.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from app.permission.shell.effects import Kind, Touch, commands_in_options

# git's own commands (`git help -a`, git 2.4x), which an alias can never replace.
_BUILTINS = frozenset(
    """add am annotate apply archimport archive backfill bisect blame branch bugreport bundle cat-file
    check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
    citool clean clone column commit commit-graph commit-tree config count-objects credential
    credential-cache credential-store cvsexportcommit cvsimport cvsserver daemon describe diagnose diff
    diff-files diff-index diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack
    filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects fsmonitor--daemon
    gc get-tar-commit-id grep gui hash-object help hook http-backend imap-send index-pack init init-db
    instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge
    merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv
    name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push
    quiltimport range-diff read-tree rebase receive-pack reflog refs remote repack replace replay
    request-pull rerere reset restore rev-list rev-parse revert rm scalar send-email send-pack
    sh-i18n sh-setup shell shortlog show show-branch show-index show-ref sparse-checkout stage stash
    status stripspace submodule svn switch symbolic-ref tag unpack-file unpack-objects update-index
    update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag
    version whatchanged worktree write-tree""".split()
)
# Global options before the subcommand that take a value as the next word.
_GLOBAL_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                   "--super-prefix", "--exec-path", "--list-cmds", "--attr-source"})
# Config keys (lowercase) whose value is a command line git runs, by their last part.
_COMMAND_KEYS = frozenset(
    {"cmd", "command", "program", "editor", "pager", "sshcommand", "textconv", "clean", "smudge", "process",
     "driver", "helper", "askpass", "fsmonitor", "gitproxy", "uploadpack", "receivepack", "external",
     "browser", "packobjectshook", "tocmd", "cccmd", "sendmailcmd", "tunnel", "alternaterefscommand",
     "defaultkeycommand", "difffilter", "update", "sequenceeditor"}
)
# Config keys whose effect cannot be judged here: where hooks, config or templates come
# from, another work tree, a remote helper.
_UNKNOWABLE_KEY = re.compile(
    r"^(core\.hookspath|core\.worktree|include\.path|includeif\..*\.path|init\.templatedir|"
    r"remote\..*\.vcs|protocol\..*\.allow|.*\.path)$"
)
_FALSE_OR_TRUE = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
# Options of subcommands whose value is a command line git runs.
_COMMAND_OPTIONS = {
    "--upload-pack", "-u", "--receive-pack", "--exec", "-x", "--extcmd", "--tree-filter", "--index-filter",
    "--env-filter", "--msg-filter", "--commit-filter", "--parent-filter", "--tag-name-filter",
}
_COMMAND_OPTION_COMMANDS = frozenset(
    {"fetch", "clone", "ls-remote", "pull", "push", "send-pack", "archive", "rebase", "difftool", "filter-branch"}
)
_CONFIG_READS = frozenset(
    {"get", "list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "-l", "--list", "--show-origin", "--show-scope", "--name-only"}
)
_CONFIG_WRITES = frozenset(
    {"set", "unset", "edit", "rename-section", "remove-section", "--unset", "--unset-all", "--add",
     "--replace-all", "--rename-section", "--remove-section", "-e", "--edit"}
)
_MAX_ALIAS_DEPTH = 5


@dataclass
class GitReading:
    """``scripts``: command lines git will run, judged as parts; ``touches``: files
    written or deleted; ``doubts``: why part of the effect cannot be known (asked)."""

    scripts: list[str] = field(default_factory=list)
    touches: list[Touch] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)


def read_git(rest: list[str | None], env: Mapping[str, str | None] | None = None) -> GitReading:
    """``rest``: the words after `git` (None where one expands at run time); ``env``: the
    variables the command sets, as far as known (None where computed)."""
    reading = GitReading()
    aliases: dict[str, str | None] = {}
    for pair in _environment_config(env or {}, reading):
        _config_pair(pair, reading, aliases)
    _read(rest, reading, aliases, 0, env or {})
    return reading


def _environment_config(env: Mapping[str, str | None], reading: GitReading) -> list[str | None]:
    """`key=value` settings given through GIT_CONFIG_PARAMETERS and GIT_CONFIG_COUNT with
    GIT_CONFIG_KEY_n/VALUE_n (None for one computed at run time)."""
    pairs: list[str | None] = []
    if "GIT_CONFIG_PARAMETERS" in env:
        raw = env["GIT_CONFIG_PARAMETERS"]
        try:
            pairs += shlex.split(raw) if raw is not None else [None]
        except ValueError:
            pairs.append(None)
    count = env.get("GIT_CONFIG_COUNT")
    if count is not None and count.isdigit():
        for n in range(min(int(count), 64)):
            key, value = env.get(f"GIT_CONFIG_KEY_{n}"), env.get(f"GIT_CONFIG_VALUE_{n}")
            pairs.append(None if key is None or value is None else f"{key}={value}")
    elif "GIT_CONFIG_COUNT" in env:
        reading.doubts.append("GIT_CONFIG_COUNT is known only at run time")
    return pairs


def config_value_effect(key: str, value: str | None, reading: GitReading) -> None:
    """What setting ``key`` to ``value`` lets git run: a command judged as a part, or a doubt."""
    key = key.lower()
    if key.startswith("alias."):
        if value is None:
            reading.doubts.append(f"git alias {key[6:]} is computed at run time")
        elif value.startswith("!"):
            reading.scripts.append(value[1:])
        return
    section, _, last = key.rpartition(".")
    runs = last in _COMMAND_KEYS or section == "pager" or key.startswith("pager.")
    if not runs:
        if _UNKNOWABLE_KEY.match(key):
            reading.doubts.append(f"git setting {key} makes git run what cannot be judged here")
    elif value is None:
        reading.doubts.append(f"git setting {key} is a command known only at run time")
    elif (last in ("fsmonitor", "pager") or section == "pager") and value.lower() in _FALSE_OR_TRUE:
        return
    elif value:
        reading.scripts.append(value.removeprefix("!"))


def _read(
    rest: list[str | None],
    reading: GitReading,
    aliases: dict[str, str | None],
    depth: int,
    env: Mapping[str, str | None],
) -> None:
    i, where = 0, ""
    while i < len(rest):
        word = rest[i]
        if word is None:
            reading.doubts.append("a git option known only at run time")
            return
        if not word.startswith("-"):
            break
        name, has_value, written = word.partition("=")
        value: str | None = written
        if name in _GLOBAL_VALUE_OPTIONS and not has_value:
            if name == "--exec-path":  # without a value it only prints the path
                i += 1
                continue
            value = rest[i + 1] if i + 1 < len(rest) else ""
            i += 1
        if name == "-c":
            _config_pair(value, reading, aliases)
        elif name == "--config-env":  # KEY=VARIABLE: the value is that variable's
            key, _, variable = (value or "").partition("=")
            known = env.get(variable) if variable in env else None
            _config_pair(None if known is None else f"{key}={known}", reading, aliases)
            if known is None:
                config_value_effect(key, None, reading)
        elif name == "-C":
            where = posixpath.join(where, value) if value is not None else ""
        elif name in ("--git-dir", "--work-tree", "--exec-path", "--super-prefix"):
            reading.doubts.append(f"git {name} points git at another folder's config, hooks or programs")
        i += 1
    if i >= len(rest):
        return
    command, args = rest[i], rest[i + 1 :]
    if command is None:
        reading.doubts.append("a git subcommand known only at run time")
        return
    if command in aliases:
        expansion = aliases[command]
        if expansion is None or depth >= _MAX_ALIAS_DEPTH:
            reading.doubts.append(f"git alias {command} cannot be followed")
        elif not expansion.startswith("!"):  # an alias to git words: read them in its place
            _read([*expansion.split(), *args], reading, aliases, depth + 1, env)
        return
    if command not in _BUILTINS:
        reading.doubts.append(f"git {command} is not one of git's own commands: an alias or a git-{command} program")
        return
    _subcommand(command, args, where, reading, aliases)


def _config_pair(pair: str | None, reading: GitReading, aliases: dict[str, str | None]) -> None:
    if pair is None:
        reading.doubts.append("a git setting known only at run time")
        return
    key, _, value = pair.partition("=")
    if key.lower().startswith("alias."):
        aliases[key[6:]] = value
    config_value_effect(key, value, reading)


def _subcommand(
    command: str, args: list[str | None], where: str, reading: GitReading, aliases: dict[str, str | None]
) -> None:
    options = [word for word in args if word is not None and word.startswith("-")]
    paths = _pathspecs(args)
    here = where or "."

    def at(path: str) -> str:
        return posixpath.join(where, path) if where and path else path

    if command in _COMMAND_OPTION_COMMANDS:
        commands_in_options("git", args, _COMMAND_OPTIONS, reading.scripts, reading.doubts)
    _programs_given(command, args, reading)
    for path in _output_files(command, args):  # a file, or a folder it fills (format-patch -o)
        reading.touches += [_touch("write", at(path)), _touch("write", at(posixpath.join(path, "*")), tree=False)]
    if command in ("clone", "init") and any(w is not None and w.startswith("--template") for w in args):
        reading.doubts.append(f"git {command} --template copies hooks from another folder")
    if command == "clone":
        for j, word in enumerate(args[:-1]):
            if word in ("-c", "--config"):
                _config_pair(args[j + 1], reading, aliases)
    elif command == "config":
        _config_command(args, reading, where)
    elif command == "submodule" and args[:1] == ["add"]:
        reading.touches.append(_touch("write", at(".gitmodules"), tree=False))
    elif command in ("submodule",) and "foreach" in args:
        script = args[args.index("foreach") + 1 :]
        script = [word for word in script if word not in ("--recursive", "-q", "--quiet")]
        if None in script:
            reading.doubts.append("git submodule foreach runs a command known only at run time")
        else:
            reading.scripts.append(" ".join(word for word in script if word))
    elif command == "bisect" and args[:1] == ["run"]:
        if None in args[1:]:
            reading.doubts.append("git bisect run runs a command known only at run time")
        else:
            reading.scripts.append(" ".join(word for word in args[1:] if word))
    elif command == "rm" and not _any(options, "--cached", "-n", "--dry-run"):
        reading.touches += [_touch("delete", at(path)) for path in paths or [""]]
    elif command == "clean" and not _any(options, "-n", "--dry-run") and not _short_flag(options, "n"):
        ignored_too = _any(options, "-x", "-X") or _short_flag(options, "x") or _short_flag(options, "X")
        reading.touches += [Touch("delete", at(path), True, True, not ignored_too) for path in paths or [here]]
    elif command == "checkout":
        forced = _any(options, "-f", "--force") or _short_flag(options, "f")
        after = _after_double_dash(args)
        targets = after if after is not None else [p for p in paths if p]
        reading.touches += [_touch("write", at(path)) for path in targets]
        if forced:
            reading.touches.append(_touch("write", here))
    elif command == "restore" and (not _any(options, "--staged", "-S") or _any(options, "--worktree", "-W")):
        reading.touches += [_touch("write", at(path)) for path in paths or [here]]
    elif command == "reset" and _any(options, "--hard", "--keep", "--merge"):
        reading.touches.append(_touch("write", here))
    elif command == "switch" and _any(options, "-f", "--force", "--discard-changes"):
        reading.touches.append(_touch("write", here))
    elif command == "stash":
        _stash(args, at, here, reading)
    elif command == "mv" and len(paths) >= 2:
        *sources, target = paths
        reading.touches += [_touch("delete", at(source)) for source in sources]
        reading.touches += [_touch("write", at(target), tree=False)]
        reading.touches += [
            _touch("write", at(posixpath.join(target, posixpath.basename(s))), tree=False) for s in sources
        ]
    elif command in ("apply", "am") and not _any(options, "--check", "--stat", "--numstat", "--summary", "--cached"):
        reading.touches.append(_touch("write", here))  # the files its patch names
    reading.touches += [_touch(kind, here if path == here else at(path)) for kind, path in _tree_work(command, args, here)]
    reading.touches += [_touch("read", path) for path in _content_read(command, args, at, here)]


def _tree_work(command: str, args: list[str | None], here: str) -> list[tuple[Kind, str]]:
    """What git's other commands that change the work tree write or delete: `merge-file`
    its first file, `checkout-index` the files named (all with `-a`, under `--prefix`),
    `read-tree -u` and `sparse-checkout` the whole tree, `worktree add`/`clone`/`init`
    the folder they make (outside the workspace too), `worktree remove` the one it removes."""
    options = [word for word in args if word is not None and word.startswith("-")]
    paths = _operands(args, _VALUE_OPTIONS.get(command, frozenset()))
    if command == "merge-file" and paths and not _any(options, "-p", "--stdout"):
        return [("write", paths[0])]
    if command == "checkout-index":
        prefix = next((o.partition("=")[2] for o in options if o.startswith("--prefix=")), "")
        if prefix:
            return [("write", prefix.rstrip("/") or prefix)]
        return [("write", path) for path in paths] + ([("write", here)] if _any(options, "-a", "--all") else [])
    if command == "read-tree" and _any(options, "-u"):
        return [("write", here), ("delete", here)]
    if command == "sparse-checkout" and paths[:1] != ["list"]:
        return [("write", here), ("delete", here)]
    if command == "worktree" and paths[:1] == ["add"] and len(paths) > 1:
        return [("write", paths[1])]
    if command == "worktree" and paths[:1] in (["remove"], ["move"]) and len(paths) > 1:
        moved: list[tuple[Kind, str]] = [("write", path) for path in paths[2:3]]
        return [("delete", paths[1]), *moved]
    if command == "clone" and paths:
        target = paths[1] if len(paths) > 1 else posixpath.basename(paths[0].rstrip("/")).removesuffix(".git")
        return [("write", target)] if target else []
    if command == "init" and paths:
        return [("write", paths[0])]
    return []


# Subcommands that print or pack the content of files (`diff`, `show`, `log -p`, ...),
# and the options after which they print none (names or counts only).
_CONTENT_COMMANDS = frozenset({"show", "diff", "diff-tree", "diff-index", "diff-files", "log", "whatchanged", "grep",
                               "blame", "annotate", "cat-file", "archive", "format-patch", "difftool", "range-diff",
                               "stash", "bundle"})  # fmt: skip
_PATCH_OPTIONS = frozenset({"-p", "-u", "--patch", "-L", "--word-diff", "--cc", "-c", "--full-diff"})
_NO_CONTENT = frozenset({"-s", "--no-patch", "--stat", "--name-only", "--name-status", "--shortstat", "--numstat",
                         "--summary", "--dirstat", "--raw", "--quiet", "--list"})  # fmt: skip
_NO_CONTENT_OF = {
    "grep": frozenset({"-l", "-L", "-c", "-q", "--count", "--files-with-matches", "--files-without-match", "--name-only",
                       "--quiet"}),  # fmt: skip
    "cat-file": frozenset({"-t", "-s", "-e", "--batch-check"}),
    "blame": frozenset(),
    "annotate": frozenset(),
}
_OBJECT_PATH = re.compile(r"^[^:]*+:(?:[0-3]:)?(.+)$")


def _content_read(command: str, args: list[str | None], at: Callable[[str], str], here: str) -> list[str]:
    """The files whose content a subcommand prints or packs: a `REV:PATH` it shows
    (`git show HEAD:x`, `git cat-file -p HEAD:x`), the paths after `--` or, without them,
    every operand (a revision judged as a path is a needless check) and the whole tree,
    whose every file a diff, a log with patches, a grep or an archive may show. A `log`
    without patches, and options that print names or counts only, read no content."""
    if command not in _CONTENT_COMMANDS:
        return []
    options = [word for word in args if word is not None and word.startswith("-")]
    words = ["" if word is None else word for word in args]
    if command == "stash":
        if words[:1] != ["show"] or not _any(options, "-p", "--patch", "-u"):
            return []
        words = words[1:]
    if command == "bundle" and words[:1] != ["create"]:
        return []
    if command in ("log", "whatchanged") and not (_any(options, *_PATCH_OPTIONS) or _short_flag(options, "p")):
        return []
    if _any(options, *_NO_CONTENT_OF.get(command, _NO_CONTENT)) and not _any(options, *_PATCH_OPTIONS):
        return []
    after = words[words.index("--") + 1 :] if "--" in words else None
    operands = [word for word in (words[: words.index("--")] if after is not None else words) if not word.startswith("-")]
    if command in ("grep", "bundle") and operands and after is None:
        operands = operands[1:]  # the pattern; a bundle's file
    objects = [match.group(1) for word in operands if (match := _OBJECT_PATH.match(word))]
    found = [path for path in objects for path in dict.fromkeys((path.removeprefix("./"), at(path)))]
    if command == "cat-file":
        return found or ([here] if operands else [])
    found += [at(path) for path in after or operands if path and not _OBJECT_PATH.match(path)]
    if command in ("blame", "annotate"):
        return found
    whole = not after and not (command == "show" and objects and len(objects) == len(operands))
    return found + ([here] if whole else [])


# Options of those commands whose value is the next word, not an operand.
_VALUE_OPTIONS = {
    name: frozenset(options.split())
    for name, options in {
        "clone": "-b -o -c -u -j --branch --origin --depth --config --upload-pack --reference --reference-if-able "
        "--separate-git-dir --template --jobs --filter --shallow-since --shallow-exclude --server-option --bundle-uri",
        "init": "-b --initial-branch --template --separate-git-dir --object-format --ref-format",
        "worktree": "-b -B --reason",
        "merge-file": "-L",
        "checkout-index": "--stage",
    }.items()
}


def _operands(args: list[str | None], value_options: frozenset[str]) -> list[str]:
    """The operands ("" for a computed one), skipping the values of ``value_options``."""
    found, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word is not None and word.startswith("-"):
            skip = word in value_options
        else:
            found.append(word or "")
    return found


def _touch(kind: Kind, path: str, tree: bool = True) -> Touch:
    return Touch(kind, path, tree, by_git=True, untracked_kept=True)


def _stash(args: list[str | None], at: Callable[[str], str], here: str, reading: GitReading) -> None:
    action = args[0] if args and args[0] is not None and not args[0].startswith("-") else "push"
    if action in ("drop", "clear"):
        reading.touches.append(_touch("delete", here))  # the stashed work of any file
    elif action in ("pop", "apply"):
        reading.touches.append(_touch("write", here))
    elif action in ("push", "save"):  # the local changes of the named files, or of all
        after = _after_double_dash(args)
        reading.touches += [_touch("write", at(path)) for path in after or [here]]


def _config_command(args: list[str | None], reading: GitReading, where: str) -> None:
    """`git config`: a write asks (its value is also judged when git would run it) and
    writes its file (`.git/config`, a protected path, unless `--file`, `--global`,
    `--system` says otherwise); a read is judged by the rules as any command is."""
    scope = {"--global": "~/.gitconfig", "--system": "/etc/gitconfig", "--worktree": ".git/config.worktree"}
    default = next((scope[word] for word in args if word in scope), ".git/config")
    words: list[str | None] = []
    files: list[str] = []
    skip = False
    for j, word in enumerate(args):
        if skip:
            skip = False
            continue
        name, has_value, value = (word or "").partition("=")
        if name in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url"):
            file = value if has_value else (args[j + 1] if j + 1 < len(args) else "")
            skip = not has_value
            if name in ("-f", "--file"):
                files.append(file or "")
            continue
        if word not in ("--global", "--local", "--system", "--worktree"):
            words.append(word)
    if any(word in _CONFIG_READS for word in words):
        return
    writes = any(word in _CONFIG_WRITES for word in words)
    operands = [word for word in words if word is None or not word.startswith("-")]
    if operands[:1] in (["set"], ["unset"], ["edit"], ["rename-section"], ["remove-section"]):
        operands = operands[1:]
    if not writes and len(operands) < 2:
        return  # `git config KEY`: a read
    reading.doubts.append("git config changes git's settings")
    for file in files or [default]:
        reading.touches.append(Touch("write", posixpath.join(where, file) if where and file else file))
    if len(operands) >= 2 and operands[0] is not None:
        config_value_effect(operands[0], operands[1], reading)


# Options of one subcommand whose value is a program git runs: `grep -O'CMD'`,
# `send-email --sendmail-cmd=CMD`, `instaweb --httpd=CMD`.
_PROGRAM_OPTIONS = {
    "grep": ("-O", "--open-files-in-pager"),
    "send-email": ("--sendmail-cmd", "--smtp-server", "--to-cmd", "--cc-cmd", "--header-cmd"),
    "instaweb": ("-d", "--httpd", "-b", "--browser"),
    "web--browse": ("-b", "--browser", "-c", "--config"),
}


def _programs_given(command: str, args: list[str | None], reading: GitReading) -> None:
    """What a subcommand runs because an option or a URL names it: `ext::CMD` remotes (git
    runs CMD, `% ` standing for a space), and the options of _PROGRAM_OPTIONS."""
    names = _PROGRAM_OPTIONS.get(command, ())
    for j, word in enumerate(args):
        if word is None:
            continue
        if word.startswith("ext::"):
            reading.scripts.append(shlex.join(_ext_words(word[5:])))
        for name in names:
            if word.startswith(f"{name}="):
                reading.scripts.append(word[len(name) + 1 :])
            elif len(name) == 2 and word.startswith(name) and len(word) > 2:  # `-O'CMD'`
                reading.scripts.append(word[2:])
            elif word == name and command != "grep" and j + 1 < len(args):
                value = args[j + 1]
                if value is None:
                    reading.doubts.append(f"git {command} {name} runs a command known only at run time")
                else:
                    reading.scripts.append(value)


def _ext_words(text: str) -> list[str]:
    """The argv of an `ext::` remote: words split at spaces, `% ` a space inside one,
    `%%` a percent sign (git-remote-ext's quoting)."""
    words, current, i = [], [], 0
    while i < len(text):
        if text[i] == "%" and i + 1 < len(text) and text[i + 1] in "% ":
            current.append(text[i + 1])
            i += 2
            continue
        if text[i] == " ":
            words.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    return [*words, "".join(current)]


def _output_files(command: str, args: list[str | None]) -> list[str]:
    """Files git writes its output to: `--output=FILE` (log, diff, show, archive...),
    `-o` of archive and format-patch (a folder there), `bundle create FILE`."""
    files = []
    for j, word in enumerate(args):
        name, has_value, value = (word or "").partition("=")
        takes_o = command in ("archive", "format-patch") and name == "-o"
        if name in ("--output", "--output-directory") or takes_o:
            files.append(value if has_value else (args[j + 1] or "") if j + 1 < len(args) else "")
    if command == "bundle" and args[:1] == ["create"] and len(args) > 1:
        files.append(args[1] or "")
    return files


def _pathspecs(args: list[str | None]) -> list[str]:
    """The non-option words ("" for a computed one)."""
    return ["" if word is None else word for word in args if word is None or not word.startswith("-")]


def _after_double_dash(args: list[str | None]) -> list[str] | None:
    if "--" not in args:
        return None
    return ["" if word is None else word for word in args[args.index("--") + 1 :]]


def _any(options: list[str], *names: str) -> bool:
    return any(option.partition("=")[0] in names for option in options)


def _short_flag(options: list[str], letter: str) -> bool:
    return any(o.startswith("-") and not o.startswith("--") and letter in o[1:] for o in options)
