"""Effects: what a tool call does, judged once, whatever tool or spelling reaches it.

Every call resolves to effects before anyone is asked: read(path), write(path) (create
or modify), delete(path), execute(command). An effect is judged with the tool's own key
and the key of its group (`view` for every read, `edit` for every write, `delete` for
every removal), so an `edit` deny on `secrets/*` holds against write, multiedit and
patch alike, and a `view` deny against grep, glob, ls and bash's `cat` alike. A default is
no rule: a group key only counts when one of its patterns matched. Among the decisions
that matched, the stricter wins (deny over ask over allow); within one key the most
specific pattern already decided. See docs/permissions.md, "Effects".

Protected paths (opencode's own config and data, VCS control files) are never written
or deleted unless the deciding rule is an allow whose pattern names them: ask is not
enough, and neither is --yes.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Container, Sequence
from functools import cache, lru_cache
from typing import Literal, NamedTuple

from app.core.config_paths import CONFIG_FILE, user_config_file
from app.permission.rules import STRICTNESS, Decision

EffectKind = Literal["read", "write", "delete", "execute"]
# The key whose rules cover an effect of that kind, whichever tool has it. Reads are the
# view tool's: it is the one tool that only reads files, as edit only writes them.
GROUP_KEYS: dict[str, str] = {"read": "view", "write": "edit", "delete": "delete"}
# The agent's tools a group's allow and ask cover too. Any other tool (the sidebar's
# revert, whose question is the user's confirmation; an MCP tool) gets only the group's
# denies: those hold for every tool.
GROUP_TOOLS: dict[str, frozenset[str]] = {
    "edit": frozenset({"edit", "write", "multiedit", "patch", "bash"}),
    "delete": frozenset({"delete", "patch", "bash"}),
    "view": frozenset({"view", "ls", "glob", "grep", "diagnostics", "bash"}),
}
# Keys whose deny also holds for an effect of that kind: a removal changes a file's content
# too, so `"edit": {"secrets/*": "deny"}` keeps secrets/ from being deleted or moved away;
# an edit "ask" or "allow" says nothing about deleting.
DENY_ALSO: dict[str, str] = {"delete": "edit"}
# Files opencode reads its rules and its commands from, relative to the workspace root.
OWN_CONFIG = (".opencode.json", ".opencode")
# File names that steer git (filters, submodule URLs) wherever they are in the tree.
VCS_FILES = frozenset({".gitattributes", ".gitmodules"})
# Files in the home folder that make git or a shell run commands: git's own configuration
# (`core.fsmonitor`, `!` aliases) and the start-up files of bash, sh and zsh (`bash -lc`
# reads ~/.profile, zsh reads ~/.zshenv each time). A write there is a command run later.
START_UP_FILES = (
    ".gitconfig", ".config/git", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
    ".zshenv", ".zshrc", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc",
)

Evaluate = Callable[[str, str, "str | None"], Decision]
"""(key, subject, absolute) -> the rules' decision for that key."""


class Effect(NamedTuple):
    """``target``: a workspace-relative POSIX path (absolute when outside), or a command."""

    kind: EffectKind
    target: str
    absolute: str | None = None

    def __str__(self) -> str:
        return f"{self.kind} {self.target}"


class Judgement(NamedTuple):
    """The decision for one effect and the key whose rule gave it."""

    effect: Effect
    decision: Decision
    key: str

    @property
    def action(self) -> str:
        return self.decision.action

    @property
    def reason(self) -> str:
        """`edit rule "secrets/*"`, `agent coder delete rule "*.go"`, `default for write`, or a
        protection's explanation."""
        decision = self.decision
        if decision.pattern is None or decision.level == "session":
            return decision.reason
        reason, inherited, heir = decision.reason.partition(", inherited by ")
        scope = " for every tool" if reason.endswith(" for every tool") else ""
        level = reason.split(" rule ", 1)[0]
        owner = "" if level == "global" else f"{level} "
        key = "" if scope else f"{self.key} "
        return f'{owner}{key}rule "{decision.pattern}"{scope}{inherited}{heir}'

    def line(self) -> str:
        """`write secrets/key.txt: deny (edit rule "secrets/*")`."""
        return f"{self.effect}: {self.action} ({self.reason})"


@cache
def keys_for(tool: str, kind: EffectKind) -> tuple[str, ...]:
    """The tool's own key, then its group's, without repeats (asked once per effect judged)."""
    return tuple(dict.fromkeys((tool, GROUP_KEYS.get(kind, tool))))


def judge(
    evaluate: Evaluate,
    tool: str,
    effect: Effect,
    protected_roots: Sequence[str] = OWN_CONFIG,
    denying: Container[str] | None = None,
) -> Judgement:
    """One effect's decision across its keys (module doc), then the protection of
    opencode's own files and VCS control files for writes and deletes. ``denying``: the
    keys that hold a deny at all, when known (a key without one cannot add a deny)."""
    keys = keys_for(tool, effect.kind)
    key, decision = keys[0], evaluate(keys[0], effect.target, effect.absolute)
    for other in keys[1:]:
        found = evaluate(other, effect.target, effect.absolute)
        counts = tool in GROUP_TOOLS.get(other, ()) or found.action == "deny"
        if counts and found.level != "default" and (
            decision.level == "default" or STRICTNESS[found.action] > STRICTNESS[decision.action]
        ):
            key, decision = other, found
    also = DENY_ALSO.get(effect.kind)
    if also is not None and also not in (tool, key) and decision.action != "deny" and (denying is None or also in denying):
        also_decision = evaluate(also, effect.target, effect.absolute)
        if also_decision.action == "deny":
            key, decision = also, also_decision
    result = Judgement(effect, decision, key)
    if effect.kind in ("write", "delete"):
        anchor = protected_anchor(effect.target, protected_roots)
        if anchor is not None and not (decision.action == "allow" and names(decision.pattern, anchor)):
            return Judgement(
                effect,
                Decision("deny", protection_reason(effect.target, anchor, effect.kind), None, "default"),
                key,
            )
    return result


def judge_all(
    evaluate: Evaluate,
    tool: str,
    effects: Sequence[Effect],
    protected_roots: Sequence[str] = OWN_CONFIG,
    denying: Container[str] | None = None,
) -> list[Judgement]:
    return [judge(evaluate, tool, effect, protected_roots, denying) for effect in effects]


def protected_anchor(subject: str, own_roots: Sequence[str] = OWN_CONFIG) -> str | None:
    """The protected entry ``subject`` is or lies in (`.opencode.json`, `.opencode`, the
    data folder, `sub/.git`, `.gitmodules`, ...), or None. ``subject`` is workspace-relative.

    All of `.git/` is protected, not only `config` and `hooks/`: `.git/info/attributes`,
    `.git/modules/*/config` and `.git/worktrees/*/` carry the same powers, a `.git` file
    can point git at another folder, and the rest (objects, refs, index) is git's own to
    change, which a direct write can only corrupt. Nested repositories count too."""
    if subject.startswith("/"):  # outside the workspace: the user's own config, and any repository's
        own = next((r for r in own_roots if r.startswith("/") and (subject + "/").startswith(r + "/")), None)
        return own if own is not None else _vcs_anchor(subject)
    if subject in ("", "."):
        return None
    if subject.startswith(_relative_prefixes(tuple(own_roots))):
        return _own_root(subject, own_roots) or _vcs_anchor(subject)
    return _vcs_anchor(subject)


@lru_cache(maxsize=16)
def _relative_prefixes(roots: tuple[str, ...]) -> tuple[str, ...]:
    """What every workspace-relative path at or in one of ``roots`` starts with: one
    ``startswith`` (in C) rules out every root for the many paths in none of them."""
    return tuple(root.rstrip("/") for root in roots if not root.startswith("/"))


def _own_root(subject: str, own_roots: Sequence[str]) -> str | None:
    """The root of ``own_roots`` that the relative ``subject`` is or lies in."""
    for root in own_roots:
        if subject == root or subject.startswith(root.rstrip("/") + "/"):
            return root
    return None


def _vcs_anchor(subject: str) -> str | None:
    """The `.git` folder or file, `.gitattributes` or `.gitmodules` ``subject`` is or
    lies in: a repository outside the workspace steers git as much as one inside (`git -C
    /tmp/x status` runs the core.fsmonitor of /tmp/x/.git/config)."""
    if ".git" not in subject:  # every VCS control path holds it
        return None
    parts = subject.split("/")
    for i, part in enumerate(parts):
        if part == ".git" or (part in VCS_FILES and i == len(parts) - 1):
            return "/".join(parts[: i + 1])
    return None


def names(pattern: str | None, anchor: str) -> bool:
    """Whether a rule's pattern spells out the protected ``anchor``: its literal start (up
    to the first wildcard) begins with it. `.git/hooks/*` names `.git`; `*` names nothing."""
    if pattern is None:
        return False
    literal = re.split(r"[*?]", pattern, maxsplit=1)[0].removeprefix("./")
    return literal.startswith(anchor)


def protection_reason(subject: str, anchor: str, kind: EffectKind) -> str:
    """Why a protected path was refused, and the one way to allow it."""
    name = anchor.rsplit("/", 1)[-1]
    if name == ".git":
        what = "inside git's own folder"
    elif name in VCS_FILES:
        what = "a file that steers git"
    elif anchor.startswith("/") and not anchor.endswith(("/.opencode.json", "/opencode")):
        what = "a start-up file that makes git or a shell run commands"
    elif anchor.endswith(".opencode.json") or anchor.startswith("/"):
        what = "opencode's own configuration"
    elif anchor == ".opencode":
        what = "in opencode's own folder (agents, commands, data)"
    else:
        what = "in opencode's data folder or a git hooks folder (core.hooksPath)"
    return (
        f"protected: {subject} is {what}; the agent changes it only when a rule names it with allow "
        f'("{GROUP_KEYS[kind]}": {{"{subject}": "allow"}}), not on ask or --yes'
    )


# The rest of a `hooksPath = VALUE` line (stripped where it is read): blanks are matched
# within the line only, so blank lines or padding cost one pass.
_HOOKS_PATH = re.compile(r"^[ \t]*+hookspath[ \t]*+=(.*)$", re.IGNORECASE | re.MULTILINE)


def hooks_folders(workspace_root: str) -> list[str]:
    """The folders inside the workspace that the repository's config names as
    `core.hooksPath` (husky's `.husky`, ...): what git runs from there is a hook, as from
    `.git/hooks/`. Read from `.git/config` at the root, each time (it may change)."""
    try:
        with open(posixpath.join(workspace_root, ".git", "config"), encoding="utf-8", errors="replace") as file:
            text = file.read(65536)
    except OSError:
        return []
    folders = []
    for line_rest in _HOOKS_PATH.findall(text):
        value = line_rest.strip()
        if not value:
            continue
        path = posixpath.normpath(posixpath.join(workspace_root, value.strip('"')))
        if path.startswith(workspace_root.rstrip("/") + "/"):
            folders.append(path[len(workspace_root.rstrip("/")) + 1 :])
    return folders


def protected_roots(data_directory: str, workspace_root: str) -> tuple[str, ...]:
    """The own-config roots plus the data folder (`data.directory`), workspace-relative,
    when it lies inside the workspace; and, absolute, the user's global config files
    (`~/.opencode.json`, `$XDG_CONFIG_HOME/opencode/`), which hold rules too, and the
    start-up files of git and the shells (START_UP_FILES), which run commands."""
    root = posixpath.normpath(workspace_root)
    folder = posixpath.normpath(posixpath.join(root, posixpath.expanduser(data_directory)))
    inside = folder.startswith(root.rstrip("/") + "/")
    roots = [*OWN_CONFIG, folder[len(root.rstrip("/")) + 1 :]] if inside else [*OWN_CONFIG]
    roots += hooks_folders(root)
    user_file = user_config_file(os.environ)
    if user_file is not None:
        roots.append(user_file.parent.as_posix())
    if home := os.environ.get("HOME"):
        roots.append(posixpath.join(home, CONFIG_FILE))
        roots += [posixpath.join(home, name) for name in START_UP_FILES]
    if xdg := os.environ.get("XDG_CONFIG_HOME"):
        roots.append(posixpath.join(xdg, "git"))
    return tuple(roots)
