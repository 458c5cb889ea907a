"""Which repository folder git would read its config from, for a git command the bash
judge sees: git looks for it from the folder it runs in upwards, taking a `.git` folder,
the folder a `.git` file points to, or a folder that is itself a repository's (a "bare"
one: `HEAD`, `objects/`, `refs/`). The agent may write a folder of the last kind anywhere
in the tree (`evil/config` is no protected name), and its `core.fsmonitor`, a remote's
`uploadpack` or an alias would then run through an allowed `git -C evil status`: such a
folder inside the workspace that is not protected is reported, and the command asked
about; so is a command that runs git after writing what may make such a folder.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

from app.permission.effects import protected_anchor
from app.permission.shell.effects import Touch, program_name


def unprotected_git_dir(root: str, folders: Iterable[str], words: tuple[str, ...], protected: tuple[str, ...]) -> str | None:
    """The workspace-relative repository folder a git command (``words``) run from one of
    ``folders`` (relative to ``root``, as the judge follows `cd`) would use, when the
    agent may have written it; else None."""
    if not runs_git(words):
        return None
    moves = _c_options(words[1:])
    for folder in folders:
        start = posixpath.normpath(posixpath.join(root, folder, *moves))
        found = _git_dir_from(start, root)
        if found is not None:
            subject = posixpath.relpath(found, root)
            if not subject.startswith("..") and protected_anchor(subject, protected) is None:
                return subject
    return None


def runs_git(words: tuple[str, ...]) -> bool:
    return bool(words) and program_name(words[0]) == "git"


def may_make_git_dir(touch: Touch) -> bool:
    """Whether a write may make a repository folder the command's own git then reads, which
    the judge cannot see on the disk yet: a `config` or `HEAD` file, or a whole folder
    copied, moved, linked or unpacked."""
    return touch.kind == "write" and (touch.tree or posixpath.basename(touch.path) in ("config", "HEAD", ""))


def _c_options(rest: tuple[str, ...]) -> list[str]:
    """The folders of `git -C DIR` options before the subcommand, in order."""
    found, i = [], 0
    while i < len(rest) and rest[i].startswith("-"):
        if rest[i] == "-C" and i + 1 < len(rest):
            found.append(rest[i + 1])
            i += 1
        elif rest[i].startswith("-C") and len(rest[i]) > 2:
            found.append(rest[i][2:])
        elif rest[i] == "-c" and i + 1 < len(rest):
            i += 1
        i += 1
    return found


def _git_dir_from(start: str, root: str) -> str | None:
    """The repository folder git finds from ``start`` (absolute), looking no higher than
    ``root``: what lies above is not the agent's to write."""
    here = start
    while here == root or here.startswith(root.rstrip("/") + "/"):
        dot_git = posixpath.join(here, ".git")
        if os.path.isdir(dot_git):
            return dot_git
        if os.path.isfile(dot_git):
            return _pointed_to(dot_git, here)
        if _is_git_dir(here):
            return here
        here = posixpath.dirname(here)
    return None


def _pointed_to(dot_git: str, here: str) -> str | None:
    """The folder a `.git` file's `gitdir: PATH` line names."""
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as file:
            line = file.readline(4096)
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return posixpath.normpath(posixpath.join(here, line[len("gitdir:") :].strip()))


def _is_git_dir(folder: str) -> bool:
    return (
        os.path.isfile(posixpath.join(folder, "HEAD"))
        and os.path.isdir(posixpath.join(folder, "objects"))
        and os.path.isdir(posixpath.join(folder, "refs"))
    )
