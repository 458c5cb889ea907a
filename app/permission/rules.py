"""Pure rule evaluation: which action (allow, ask, deny) a tool call gets from the rules.

Plain dicts in, a `Decision` out: no config objects, no I/O, so the service, the CLI and
the benchmark share one implementation and the tests need neither disk nor event loop.
The semantics are documented for users in docs/permissions.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, NamedTuple

from app.core.errors import ConfigError

Action = Literal["allow", "ask", "deny"]
Level = Literal["agent", "global", "default", "session"]
RuleValue = str | Mapping[str, str]
Rules = Mapping[str, RuleValue]

ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
# Higher is stricter: on a specificity tie the stricter action wins.
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}

# Tools that only read get "allow" by default; every other tool (writers, bash, fetch,
# external_directory and any MCP tool, whose effects we cannot know) gets "ask".
READ_ONLY_TOOLS = frozenset(
    {"view", "ls", "glob", "grep", "diagnostics", "task", "todoread", "todowrite", "skill"}
)
# Tools whose subject is a workspace-relative path (the others' subject is kept as given).
PATH_TOOLS = frozenset(
    {"view", "ls", "glob", "grep", "diagnostics", "write", "edit", "multiedit", "patch", "delete", "external_directory"}
)

PERMISSION_KEYS = {"webfetch": "fetch"}
"""Tools whose rules are kept under another key than their name (OpenCode's key names)."""


def permission_key(tool: str) -> str:
    """The rules key a tool's calls are judged under."""
    return PERMISSION_KEYS.get(tool, tool)


_WILDCARD_RUN = re.compile(r"(\*+|\?)")


class Decision(NamedTuple):
    """The action for one call and why: `reason` names the rule, e.g. `global rule "*.go"`."""

    action: Action
    reason: str
    pattern: str | None
    level: Level


@dataclass(frozen=True, slots=True)
class AgentRules:
    """What an agent's definition adds to the config's rules. ``own``: an agent file's
    `permission` (the config's agents.<name>.permission, when it has the agent, wins key by
    key). ``locked``: rules whose denies hold whatever any other rule allows (plan mode);
    such a denial gives ``locked_reason`` as its reason. ``repository``: the file is the
    project's, so ``own`` cannot lift a deny of the user's own config."""

    own: Rules = field(default_factory=dict)
    locked: Rules = field(default_factory=dict)
    locked_reason: str = ""
    repository: bool = False


class _Rule(NamedTuple):
    pattern: str
    action: Action
    regex: re.Pattern[str]
    rooted: bool  # starts with "/", "~" or "$HOME": matched against the absolute path when known
    # For a "~" or "$HOME" pattern, the pattern as written: a command such as `~/bin/x a`
    # has no absolute path and names the home directory so, so both spellings must match it.
    as_written: re.Pattern[str] | None = None


@lru_cache(maxsize=4096)
def compile_wildcard(pattern: str) -> re.Pattern[str]:
    """`*` (and `**`) match any run of characters including `/`, `?` one character;
    everything else is literal. A `*` standing as a word of its own (after a space, before
    a space or the end) also stands for no words at all, space included: `git push *`
    matches `git push`, and `sed * -i*` matches `sed -i x`, as in OpenCode, so a deny
    written that way cannot be dodged by leaving the arguments out. Compiled once."""
    pieces = _WILDCARD_RUN.split(pattern)  # literal, wildcard, literal, ..., literal
    parts = []
    for i, piece in enumerate(pieces):
        if piece == "?":
            parts.append(".")
        elif piece.startswith("*"):
            parts.append("(?: .*)?" if _is_word_star(pieces, i) else ".*")
        else:
            parts.append(re.escape(piece[:-1] if _is_word_star(pieces, i + 1) else piece))
    return re.compile("".join(parts), re.DOTALL)


def _is_word_star(pieces: list[str], i: int) -> bool:
    """Whether ``pieces[i]`` is a `*` run with a space before it and a space or the end after it."""
    if i >= len(pieces) or not pieces[i].startswith("*") or not pieces[i - 1].endswith(" "):
        return False
    after = pieces[i + 1]
    return after.startswith(" ") or (after == "" and i + 2 == len(pieces))


def _compile_rooted(pattern: str) -> re.Pattern[str]:
    """A pattern for absolute paths. `/etc/*` also matches `/etc` itself (as docs/specs/000-delete.md's
    OpenCode does): denying what is inside a directory outside the workspace denies
    listing it, or a `cd` into it. Workspace-relative `tmp/*` does not match `tmp`: the
    tools that act on a folder there judge every file inside it as well."""
    regex = compile_wildcard(pattern)
    if not pattern.endswith("/*") or len(pattern) < 3:
        return regex
    return re.compile(f"(?:{compile_wildcard(pattern[:-2]).pattern})|(?:{regex.pattern})", re.DOTALL)


def match_wildcard(pattern: str, subject: str) -> bool:
    """True when the whole subject matches the pattern."""
    return compile_wildcard(pattern).fullmatch(subject) is not None


def specificity(pattern: str) -> int:
    """The number of literal (non-wildcard) characters: more literal means more specific."""
    return len(pattern) - pattern.count("*") - pattern.count("?")


def default_action(tool: str) -> Action:
    return "allow" if tool in READ_ONLY_TOOLS else "ask"


def _where(level: Level, agent: str | None, tool: str) -> str:
    """The config key of one tool's rules, for error messages."""
    return f"agents.{agent or '<agent>'}.permission.{tool}" if level == "agent" else f"permission.rules.{tool}"


def _compile_level(level: Level, agent: str | None, tool: str, value: RuleValue) -> tuple[_Rule, ...]:
    """One tool's rules at one level, ordered so that the first match is the winner:
    most specific first, and among equals the strictest first. A plain action is "*"."""
    patterns = {"*": value} if isinstance(value, str) else value
    if not isinstance(patterns, dict):
        raise ConfigError(
            f"{_where(level, agent, tool)} must be an action (allow, ask, deny) or a map of pattern "
            f"to action, not {type(value).__name__}"
        )
    rules = []
    for pattern, action in patterns.items():
        if action not in ACTIONS:
            raise ConfigError(
                f'{_where(level, agent, tool)} pattern "{pattern}" has action {action!r}: use allow, ask or deny'
            )
        home = _home_relative(pattern)
        rooted = home is not None or pattern.startswith("/")
        # `~` becomes the home directory here, once: compiled rules are cached.
        regex = _compile_rooted(os.path.expanduser(home or pattern)) if rooted else compile_wildcard(pattern)
        as_written = _compile_rooted(pattern) if home is not None else None
        rules.append(_Rule(pattern, action, regex, rooted, as_written))
    rules.sort(key=lambda rule: (-specificity(rule.pattern), -STRICTNESS[rule.action]))
    return tuple(rules)


def _home_relative(pattern: str) -> str | None:
    """``pattern`` with the home directory spelled `~`, when it starts with `~` or with
    `$HOME` (as OpenCode reads both); None otherwise."""
    if pattern.startswith("~"):
        return pattern
    if pattern == "$HOME" or pattern.startswith("$HOME/"):
        return "~" + pattern[len("$HOME") :]
    return None


# id(rule value) -> (a copy of the value, its compiled rules). The copy is compared with the
# live value on each hit, so a dict changed in place (or a new one at a recycled id) is
# recompiled, never served stale; comparing two small dicts is much cheaper than hashing one.
_COMPILED: dict[int, tuple[RuleValue, tuple[_Rule, ...]]] = {}
_COMPILED_MAX = 1024


def _compiled(level: Level, agent: str | None, tool: str, value: RuleValue) -> tuple[_Rule, ...]:
    hit = _COMPILED.get(id(value))
    if hit is not None and hit[0] == value:
        return hit[1]
    rules = _compile_level(level, agent, tool, value)
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[id(value)] = (dict(value) if isinstance(value, dict) else value, rules)
    return rules


def _first_match(rules: tuple[_Rule, ...], subject: str, absolute: str | None) -> _Rule | None:
    for rule in rules:
        target = absolute if rule.rooted and absolute is not None else subject
        if rule.regex.fullmatch(target):
            return rule
        if absolute is None and rule.as_written is not None and rule.as_written.fullmatch(subject):
            return rule
    return None


def evaluate_rules(
    tool: str,
    subject: str,
    *,
    agent_rules: Rules | None,
    global_rules: Rules | None,
    absolute: str | None = None,
    agent: str | None = None,
) -> Decision:
    """The agent's rules, then the global rules, then the same two levels' rules under the
    key `*` (for every tool, as in spec 000's OpenCode), then the tool's default: the first
    with a matching pattern decides. `absolute` (when the subject is a path) is what
    patterns starting with `/` or `~` are matched against; `agent` names the level in the
    reason, e.g. `agent coder rule "tmp/*"`."""
    for key in dict.fromkeys((tool, "*")):
        levels: tuple[tuple[Level, Rules | None], ...] = (("agent", agent_rules), ("global", global_rules))
        for level, rules in levels:
            value = rules.get(key) if rules else None
            if value is None:
                continue
            rule = _first_match(_compiled(level, agent, key, value), subject, absolute)
            if rule is not None:
                label = "global" if level == "global" else f"agent {agent}" if agent else "agent"
                scope = "" if key == tool else " for every tool"
                return Decision(rule.action, f'{label} rule "{rule.pattern}"{scope}', rule.pattern, level)
    return Decision(default_action(tool), f"default for {tool}", None, "default")
