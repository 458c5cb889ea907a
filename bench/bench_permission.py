"""Rule evaluation speed: every tool call is checked, often several subjects per call
(a patch touching many files), so evaluation must stay far below a millisecond.

Run from the repository root: .venv/bin/python bench/bench_permission.py
"""

from __future__ import annotations

import itertools
import time

from app.permission.rules import evaluate_rules

TARGET_CHECKS_PER_SECOND = 100_000

# 50 rules: 34 global and 16 for the agent, plain actions and maps, exact, `*`, `?`,
# `**`, absolute and `~` patterns.
GLOBAL_RULES = {
    "bash": {
        "*": "ask", "git status": "allow", "git diff*": "allow", "git log*": "allow", "ls*": "allow",
        "rm -rf *": "deny", "sudo *": "deny", "/usr/bin/rm *": "deny", "npm test*": "allow", "make ?*": "ask",
    },
    "delete": {"*": "ask", "tmp/*": "allow", "*.go": "deny", "tmp/*.go": "deny", "build/**": "allow"},
    "edit": {"*": "ask", "src/**/*.py": "allow", "*.lock": "deny", "docs/*.md": "allow", "README.md": "allow"},
    "write": {"*": "ask", "tmp/*": "allow", ".env*": "deny", "src/**": "allow"},
    "external_directory": {"/etc/*": "deny", "/tmp/*": "allow", "~/.ssh/*": "deny", "~/notes/*": "allow"},
    "view": {"*.pem": "deny", ".env": "deny", "secrets/?*": "deny"},
    "fetch": "ask",
    "patch": "ask",
    "github_create_issue": "deny",
}
AGENT_RULES = {
    "bash": {"pytest*": "allow", "git push*": "deny", "git commit *": "ask", "uv run *": "allow"},
    "delete": {"internal/test/*": "allow", "*.py": "ask", "fixtures/???.json": "allow"},
    "edit": {"tests/*": "allow", "app/**/*.py": "allow", "pyproject.toml": "ask"},
    "write": {"tests/*": "allow", "*.sql": "deny"},
    "view": "allow",
    "multiedit": {"src/*": "allow", "*": "ask"},
    "grep": "allow",
}
CALLS = [
    ("bash", "git diff --stat", None),
    ("bash", "rm -rf build", None),
    ("bash", "pytest -q tests/permission", None),
    ("bash", "python -c 'print(1)'", None),
    ("delete", "tmp/x.go", "/w/tmp/x.go"),
    ("delete", "internal/test/a_test.go", "/w/internal/test/a_test.go"),
    ("delete", "README.md", "/w/README.md"),
    ("edit", "src/app/deep/module.py", "/w/src/app/deep/module.py"),
    ("edit", "uv.lock", "/w/uv.lock"),
    ("write", "tests/test_x.py", "/w/tests/test_x.py"),
    ("external_directory", "/etc/hosts", "/etc/hosts"),
    ("external_directory", "/var/log/syslog", "/var/log/syslog"),
    ("view", "secrets/key.pem", "/w/secrets/key.pem"),
    ("ls", "src", "/w/src"),
    ("github_create_issue", "repo", None),
    ("fetch", "https://example.com", None),
]


def rules_in(rules: dict) -> int:
    return sum(1 if isinstance(value, str) else len(value) for value in rules.values())


def main() -> None:
    total = rules_in(GLOBAL_RULES) + rules_in(AGENT_RULES)
    checks = 200_000
    calls = itertools.islice(itertools.cycle(CALLS), checks)
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for tool, subject, absolute in calls:
        evaluate_rules(
            tool, subject, agent_rules=AGENT_RULES, global_rules=GLOBAL_RULES, absolute=absolute, agent="coder"
        )
    cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
    print(f"rules: {total} ({rules_in(AGENT_RULES)} agent, {rules_in(GLOBAL_RULES)} global), {checks:,} checks")
    # CPU time is the figure: the machine is shared, and wall time includes waiting for it.
    print(f"evaluate_rules: {checks / cpu:,.0f} checks/s (target >= {TARGET_CHECKS_PER_SECOND:,} checks/s)")
    print(f"evaluate_rules: {cpu / checks * 1e6:.2f} us CPU per check, {wall / checks * 1e6:.2f} us wall")


if __name__ == "__main__":
    main()
