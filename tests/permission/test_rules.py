"""The pure evaluator: wildcards, specificity and ties, levels, defaults, absolute patterns."""

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.errors import ConfigError
from app.permission.rules import Decision, evaluate_rules, match_wildcard, specificity
from tests.permission.conftest import SPEC_000_DELETE


def decide(tool, subject, global_rules=None, agent_rules=None, absolute=None, agent="coder") -> Decision:
    return evaluate_rules(
        tool, subject, agent_rules=agent_rules, global_rules=global_rules, absolute=absolute, agent=agent
    )


# --- wildcards -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("*", "a/b/c.txt", True),
        ("*", "", True),
        ("src/*", "src/deep/nested/x.py", True),  # `*` crosses `/`
        ("src/*", "src", False),  # the directory itself is not "inside" it
        ("*.go", "cmd/tool/main.go", True),
        ("*.go", "main.go.txt", False),
        ("src/**/*.go", "src/a/b/c.go", True),
        ("src/**", "src/a/b", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file.txt", False),  # `?` is exactly one character
        ("file?.txt", "file12.txt", False),
        ("a?c", "a/c", True),  # ... any character, `/` included
        ("README.md", "README.md", True),  # no wildcard: exact
        ("README.md", "docs/README.md", False),
        ("README.md", "README.mdx", False),
        ("a.b", "axb", False),  # regex metacharacters are literal
        ("(x)+[y]", "(x)+[y]", True),
        ("git *", "git commit -m 'a\nb'", True),  # commands may span lines
    ],
)
def test_wildcards(pattern, subject, matches):
    assert match_wildcard(pattern, subject) is matches


def test_double_star_is_the_same_as_star():
    for subject in ["a.go", "x/a.go", "x/y/a.go", "x/y/a.txt"]:
        assert match_wildcard("x/**.go", subject) == match_wildcard("x/*.go", subject)


_literal = st.text(alphabet=st.characters(blacklist_characters="*?"), max_size=12)


@given(pattern=_literal, subject=st.text(max_size=12))
def test_a_pattern_without_wildcards_matches_only_itself(pattern, subject):
    assert match_wildcard(pattern, subject) is (pattern == subject)
    assert match_wildcard(pattern, pattern)


@given(prefix=_literal, middle=st.text(max_size=8), suffix=_literal)
def test_star_matches_any_middle(prefix, middle, suffix):
    assert match_wildcard(f"{prefix}*{suffix}", prefix + middle + suffix)


def test_specificity_counts_literal_characters():
    assert specificity("*") == 0
    assert specificity("tmp/*") == 4
    assert specificity("*.go") == 3
    assert specificity("src/**/?.go") == 8


# --- spec 000 and specificity ----------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "action", "pattern"),
    [
        ("tmp/a.txt", "allow", "tmp/*"),
        ("main.go", "deny", "*.go"),
        ("README.md", "ask", "*"),
        # Both `tmp/*` (4 literal characters) and `*.go` (3) match: the more specific wins.
        ("tmp/x.go", "allow", "tmp/*"),
    ],
)
def test_spec_000_delete_rules(subject, action, pattern):
    decision = decide("delete", subject, global_rules={"delete": SPEC_000_DELETE})
    assert decision == Decision(action, f'global rule "{pattern}"', pattern, "global")


def test_a_more_specific_pattern_overrides_the_stricter_one():
    rules = {"delete": SPEC_000_DELETE | {"tmp/*.go": "deny"}}
    assert decide("delete", "tmp/x.go", global_rules=rules).pattern == "tmp/*.go"
    assert decide("delete", "tmp/x.go", global_rules=rules).action == "deny"
    assert decide("delete", "tmp/x.txt", global_rules=rules).action == "allow"


def test_exact_pattern_beats_wildcards():
    rules = {"edit": {"*": "deny", "*.md": "deny", "README.md": "allow"}}
    assert decide("edit", "README.md", global_rules=rules).action == "allow"
    assert decide("edit", "CHANGES.md", global_rules=rules).action == "deny"


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ({"a*": "allow", "*a": "deny"}, "deny"),
        ({"*a": "deny", "a*": "allow"}, "deny"),  # the order in the file does not matter
        ({"a*": "allow", "*a": "ask"}, "ask"),
        ({"a*": "ask", "*a": "deny"}, "deny"),
        ({"a?a": "allow", "ab*": "ask"}, "ask"),  # `?` is a wildcard too: 2 literals each
    ],
)
def test_on_a_specificity_tie_the_stricter_action_wins(rules, expected):
    assert decide("write", "aba", global_rules={"write": rules}).action == expected


def test_a_plain_action_counts_as_pattern_star():
    decision = decide("bash", "ls -la", global_rules={"bash": "deny"})
    assert decision == Decision("deny", 'global rule "*"', "*", "global")


# --- levels ----------------------------------------------------------------------------


def test_agent_rules_come_before_global_rules_even_when_less_specific():
    decision = decide(
        "delete", "main.go", global_rules={"delete": SPEC_000_DELETE}, agent_rules={"delete": {"*": "allow"}}
    )
    assert decision == Decision("allow", 'agent coder rule "*"', "*", "agent")


def test_agent_rules_that_do_not_match_fall_through_to_global():
    agent_rules = {"delete": {"internal/test/*": "allow"}}
    global_rules = {"delete": SPEC_000_DELETE}
    assert decide("delete", "internal/test/x.go", global_rules, agent_rules).reason == (
        'agent coder rule "internal/test/*"'
    )
    assert decide("delete", "main.go", global_rules, agent_rules).reason == 'global rule "*.go"'


def test_agent_rules_for_another_tool_do_not_apply():
    decision = decide("bash", "rm -rf /", global_rules={"bash": {"rm *": "deny"}}, agent_rules={"edit": "allow"})
    assert decision.level == "global"
    assert decision.action == "deny"


def test_nothing_matches_at_any_level_gives_the_default():
    decision = decide(
        "delete", "README.md", global_rules={"delete": {"*.go": "deny"}}, agent_rules={"delete": {"tmp/*": "allow"}}
    )
    assert decision == Decision("ask", "default for delete", None, "default")


@pytest.mark.parametrize(
    "tool",
    ["write", "edit", "multiedit", "patch", "delete", "bash", "fetch", "external_directory", "github_create_issue"],
)
def test_tools_that_change_things_default_to_ask(tool):
    assert decide(tool, "x", global_rules={}).action == "ask"


@pytest.mark.parametrize("tool", ["view", "ls", "glob", "grep", "diagnostics", "task", "todo"])
def test_read_only_tools_default_to_allow(tool):
    assert decide(tool, "x", global_rules=None).action == "allow"


def test_rules_changed_in_place_are_seen():
    rules = {"write": {"*.lock": "deny"}}
    assert decide("write", "uv.lock", global_rules=rules).action == "deny"
    rules["write"]["*.lock"] = "allow"
    assert decide("write", "uv.lock", global_rules=rules).action == "allow"


# --- absolute patterns -----------------------------------------------------------------


def test_slash_patterns_match_the_absolute_path():
    rules = {"external_directory": {"/etc/*": "deny", "/tmp/*": "allow"}}
    assert decide("external_directory", "/etc/hosts", rules, absolute="/etc/hosts").action == "deny"
    assert decide("external_directory", "/tmp/x", rules, absolute="/tmp/x").action == "allow"
    assert decide("external_directory", "/var/x", rules, absolute="/var/x").action == "ask"


def test_slash_patterns_do_not_match_the_relative_subject_when_the_absolute_path_is_known():
    rules = {"view": {"/etc/*": "deny", "etc/*": "ask"}}
    decision = decide("view", "etc/passwd", rules, absolute="/work/repo/etc/passwd")
    assert decision.pattern == "etc/*"
    assert decide("view", "etc/passwd", rules, absolute="/etc/passwd").pattern == "/etc/*"


def test_tilde_patterns_match_paths_under_the_home_directory():
    home = str(Path.home())
    rules = {"view": {"~/.ssh/*": "deny", "~": "ask"}}
    assert decide("view", "../.ssh/id_rsa", rules, absolute=f"{home}/.ssh/id_rsa").action == "deny"
    assert decide("view", "..", rules, absolute=home).action == "ask"
    assert decide("view", "x/.ssh/id_rsa", rules, absolute=f"/elsewhere{home}/.ssh/id_rsa").action == "allow"
    # A sibling whose name starts like the home directory is not under it.
    assert decide("view", "y", rules, absolute=f"{home}2/.ssh/id_rsa").action == "allow"


def test_without_an_absolute_path_slash_patterns_match_the_subject_as_given():
    rules = {"bash": {"/usr/bin/rm *": "deny"}}
    assert decide("bash", "/usr/bin/rm -rf build", rules).action == "deny"


def test_without_an_absolute_path_tilde_patterns_match_the_home_written_either_way():
    rules = {"bash": {"~/bin/wipe *": "deny"}}
    assert decide("bash", "~/bin/wipe all", rules).action == "deny"
    assert decide("bash", f"{Path.home()}/bin/wipe all", rules).action == "deny"
    assert decide("bash", "/elsewhere/bin/wipe all", rules).action == "ask"


# --- malformed rules -------------------------------------------------------------------


def test_an_unknown_action_names_the_key_and_the_fix():
    with pytest.raises(ConfigError, match=re.escape('permission.rules.delete pattern "tmp/*" has action \'yes\'')):
        decide("delete", "tmp/a", global_rules={"delete": {"tmp/*": "yes"}})
    with pytest.raises(ConfigError, match="use allow, ask or deny"):
        decide("delete", "tmp/a", agent_rules={"delete": "always"})


def test_agent_rule_errors_name_the_agent():
    with pytest.raises(ConfigError, match=re.escape("agents.coder.permission.bash")):
        decide("bash", "ls", agent_rules={"bash": {"*": "sure"}})


@pytest.mark.parametrize("value", [["allow"], {"*": {"x": "allow"}}, 3])
def test_a_rule_value_of_the_wrong_shape_is_a_config_error(value):
    with pytest.raises(ConfigError, match=r"permission\.rules\.edit"):
        decide("edit", "a.txt", global_rules={"edit": value})
