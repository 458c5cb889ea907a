"""`opencode permission check`: the printed line, lexical path subjects, bash kept as given."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.errors import ConfigError
from app.permission.explain import explain, normalize_subject
from tests.permission.conftest import SPEC_000_DELETE, make_config


@pytest.mark.parametrize(
    ("path", "subject"),
    [
        ("./tmp/../main.go", "main.go"),
        ("tmp//a.txt", "tmp/a.txt"),
        ("./tmp/", "tmp"),
        ("a/./b/../../c", "c"),
        ("//etc//passwd", "/etc/passwd"),
        ("/a/../../etc", "/etc"),
        ("../outside", "../outside"),
        ("./", "."),
    ],
)
def test_normalize_subject(path, subject):
    assert normalize_subject(path) == subject


ROOT = Path("/work/repo")
CONFIG = make_config(
    {"delete": SPEC_000_DELETE, "bash": {"rm ./a/../b": "deny"}, "external_directory": {"/etc/*": "deny"}},
    {"coder": {"delete": {"docs/*": "allow"}}},
)


@pytest.mark.parametrize(
    ("tool", "subject", "line"),
    [
        ("delete", "tmp/a.txt", 'allow (delete rule "tmp/*")'),
        ("delete", "main.go", 'deny  (delete rule "*.go")'),
        ("delete", "README.md", 'ask   (delete rule "*")'),
        ("delete", "./tmp/../main.go", 'deny  (delete rule "*.go")'),
        ("delete", "/work/repo/tmp/a.txt", 'allow (delete rule "tmp/*")'),  # absolute inside the root
        ("delete", "docs/x.md", 'allow (agent coder delete rule "docs/*")'),
        ("write", "main.go", "ask   (default for write)"),
        ("view", "main.go", "allow (default for view)"),
        ("external_directory", "/etc/../etc/hosts", 'deny  (global rule "/etc/*")'),
        ("external_directory", "../../etc/hosts", 'deny  (global rule "/etc/*")'),
        ("external_directory", "/var/log/x", "ask   (default for external_directory)"),
        ("bash", "rm ./a/../b", 'deny  (global rule "rm ./a/../b")'),  # commands are not paths
        ("bash", "rm b", "ask   (default for bash)"),
    ],
)
def test_explain_prints_the_action_and_the_rule(tool, subject, line):
    assert explain(CONFIG, ROOT, tool, subject).splitlines()[0] == line


OUTSIDE_CONFIG = make_config({"view": {"/var/*": "deny"}, "grep": "allow", "external_directory": {"/etc/*": "deny"}})


@pytest.mark.parametrize(
    ("tool", "subject", "line"),
    [
        # Reads outside also need external_directory, as at run time; the stricter answer is shown.
        ("view", "/etc/hosts", 'deny  (external_directory, global rule "/etc/*")'),
        ("grep", "../other", "ask   (default for external_directory)"),
        ("grep", "~/other", "ask   (default for external_directory)"),  # the home directory, not ./~
        ("diagnostics", "/etc/x.py", 'deny  (external_directory, global rule "/etc/*")'),
        ("view", "/var/log/x", 'deny  (global rule "/var/*")'),
        ("grep", "src", 'allow (global rule "*")'),  # inside: external_directory plays no part
        # Changes outside the workspace are refused whatever the rules say.
        ("delete", "/etc/hosts", "deny  (outside the workspace: delete changes files only inside it)"),
        ("write", "../x.go", "deny  (outside the workspace: write changes files only inside it)"),
    ],
)
def test_explain_answers_for_paths_outside_the_workspace_as_the_tools_do(tool, subject, line):
    assert explain(OUTSIDE_CONFIG, ROOT, tool, subject).splitlines()[0] == line


READ_CONFIG = make_config({"view": {"secrets/*": "deny", "docs/*": "ask"}, "grep": {"*": "allow"}})


@pytest.mark.parametrize(
    ("tool", "subject", "lines"),
    [
        ("view", "secrets/k", ['deny  (global rule "secrets/*")', '  read secrets/k: deny (view rule "secrets/*")']),
        # The view rules judge every tool's reads: grep's own allow does not lift their deny.
        ("grep", "secrets/k", ['deny  (view rule "secrets/*")', '  read secrets/k: deny (view rule "secrets/*")']),
        ("ls", "./docs/../secrets/k", ['deny  (view rule "secrets/*")', '  read secrets/k: deny (view rule "secrets/*")']),
        ("glob", "docs/a", ['ask   (view rule "docs/*")', '  read docs/a: ask (view rule "docs/*")']),
        ("grep", "src", ['allow (global rule "*")', '  read src: allow (grep rule "*")']),
    ],
)
def test_a_read_is_judged_by_the_view_rules_whatever_tool_reads(tool, subject, lines):
    assert explain(READ_CONFIG, ROOT, tool, subject).splitlines() == lines


def test_explain_uses_the_named_agent_s_rules():
    assert explain(CONFIG, ROOT, "delete", "docs/x.md", agent="explorer").startswith('ask   (delete rule "*")\n')


def test_an_unknown_agent_is_named_with_the_known_ones():
    with pytest.raises(ConfigError, match='unknown agent "codr": use one of coder, plan, workhorse, explorer'):
        explain(CONFIG, ROOT, "delete", "main.go", agent="codr")


def test_a_root_spelled_with_dot_dot_gives_the_same_subjects():
    line = explain(CONFIG, Path("/work/other/../repo"), "delete", "/work/repo/main.go").splitlines()[0]
    assert line == 'deny  (delete rule "*.go")'


def test_the_cli_prints_the_line_for_a_real_config_file(tmp_path):
    (tmp_path / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"delete": SPEC_000_DELETE}}}))
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "permission", "check", "delete", "./tmp/../main.go", "-C", str(tmp_path)],
        capture_output=True,
        text=True,
        # An empty home: no global config file of the machine's user leaks in.
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PYTHONPATH": str(repo)},
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (
        0,
        'deny  (delete rule "*.go")\n  delete main.go: deny (delete rule "*.go")\n',
    ), result.stderr
