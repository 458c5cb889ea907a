"""With an `edit` deny on secrets/*, a `view` deny on private/*, `"bash": {"*": "allow"}`
and --yes, programs whose effects the judge cannot see (a script already in the
repository, `python -c`, `perl -e`, `node -e`, `sh script.sh`, `make` with a hostile
Makefile, a conftest.py run by pytest) run in the sandbox without a question, and none of
them can write the denied file, write outside the workspace, read a read-denied file or
~/.ssh, change .git/config or .git/hooks, or connect to a listener on 127.0.0.1. Each
runs the real program under bubblewrap and under Landlock."""

from __future__ import annotations

import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.permission.attack import call
from tests.sandbox.conftest import KEY, SECRET, TOKEN

PYTHON_ATTACK = """
import os, socket
def attempt(name, act):
    try:
        act()
        print(name, "DONE")
    except Exception as err:
        print(name, "REFUSED", err)
def read(path):
    with open(os.path.expanduser(path)) as file:
        print(file.read())
attempt("denied", lambda: open("secrets/key.txt", "w").write("pwned"))
attempt("outside", lambda: open(os.environ["ATTACK_OUTSIDE"], "w").write("pwned"))
attempt("read", lambda: read("private/token.txt"))
attempt("home", lambda: read("~/.ssh/id_rsa"))
attempt("config", lambda: open(".git/config", "a").write("[core]\\n\\tfsmonitor = pwned\\n"))
attempt("hook", lambda: open(".git/hooks/pre-commit", "w").write("#!/bin/sh\\necho pwned\\n"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", int(os.environ["ATTACK_PORT"])), timeout=5))
"""
SHELL_ATTACK = """\
s=secrets p=private g=.git k=.ssh
echo pwned > $s/key.txt
echo pwned > "$ATTACK_OUTSIDE"
cat $p/token.txt
cat $HOME/$k/id_rsa
printf '[core]\\n\\tfsmonitor = pwned\\n' >> $g/config
echo 'echo pwned' > $g/hooks/pre-commit
bash -c 'echo pwned > /dev/tcp/127.0.0.1/'"$ATTACK_PORT"
"""
"""Paths computed when it runs, which the judge cannot read: the sandbox alone holds them."""
PERL_ATTACK = (
    'open(my $f, ">", "secrets/key.txt") and print $f "pwned"; '
    'open(my $o, ">", $ENV{ATTACK_OUTSIDE}) and print $o "pwned"; '
    'for my $p ("private/token.txt", "$ENV{HOME}/.ssh/id_rsa") { open(my $r, "<", $p) and print <$r>; } '
    'open(my $c, ">>", ".git/config") and print $c "[core]\\n\\tfsmonitor = pwned\\n"; '
    'open(my $h, ">", ".git/hooks/pre-commit") and print $h "echo pwned\\n"; '
    "use IO::Socket::INET; IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $ENV{ATTACK_PORT}, Timeout => 5);"
)
NODE_ATTACK = (
    "const fs = require('fs'), net = require('net'), os = require('os');"
    "const t = (f) => { try { f(); } catch (e) { console.log('REFUSED', e.code); } };"
    "t(() => fs.writeFileSync('secrets/key.txt', 'pwned'));"
    "t(() => fs.writeFileSync(process.env.ATTACK_OUTSIDE, 'pwned'));"
    "t(() => console.log(fs.readFileSync('private/token.txt', 'utf8')));"
    "t(() => console.log(fs.readFileSync(os.homedir() + '/.ssh/id_rsa', 'utf8')));"
    "t(() => fs.appendFileSync('.git/config', '[core]\\n\\tfsmonitor = pwned\\n'));"
    "t(() => fs.writeFileSync('.git/hooks/pre-commit', 'echo pwned'));"
    "net.connect(+process.env.ATTACK_PORT, '127.0.0.1').on('error', (e) => console.log('REFUSED', e.code));"
)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


ATTACKS = {
    "a script in the repository": ({"tool.py": PYTHON_ATTACK}, "python3 tool.py"),
    "python -c": ({}, f"python3 -c {_quoted(PYTHON_ATTACK)}"),
    "perl -e": ({}, f"perl -e {_quoted(PERL_ATTACK)}"),
    "node -e": ({}, f"node -e {_quoted(NODE_ATTACK)}"),
    "sh script.sh": ({"script.sh": SHELL_ATTACK}, "sh script.sh"),
    "make with a hostile Makefile": (
        {"Makefile": "all:\n" + "".join(f"\t-{line}\n" for line in SHELL_ATTACK.replace("$", "$$").splitlines())},
        "make",
    ),
    "a conftest.py run by pytest": (
        {"conftest.py": PYTHON_ATTACK, "test_one.py": "def test_one():\n    assert True\n"},
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_one.py",
    ),
}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def no_connection_came(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return True
    connection.close()
    return False


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_program_the_judge_cannot_see_into_breaks_no_rule(
    attack, mechanism, sandboxed, repo: Path, tmp_path: Path, listener, monkeypatch
):
    files, command = ATTACKS[attack]
    program = command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed here")
    for rel, text in files.items():
        (repo / rel).write_text(text)
    outside = tmp_path / "outside.txt"
    monkeypatch.setenv("ATTACK_OUTSIDE", str(outside))
    monkeypatch.setenv("ATTACK_PORT", str(listener.getsockname()[1]))
    config_before = (repo / ".git" / "config").read_bytes()
    runtime = sandboxed(mechanism)

    output = await call(runtime, "bash", {"command": command})

    assert not output.startswith("ERROR"), output  # it ran: nobody was asked
    assert (repo / "secrets/key.txt").read_text() == SECRET, output
    assert not outside.exists(), output
    assert TOKEN not in output and KEY not in output, output
    assert (repo / ".git" / "config").read_bytes() == config_before, output
    assert not (repo / ".git" / "hooks" / "pre-commit").exists(), output
    assert no_connection_came(listener), output


async def test_the_result_says_which_rule_refused_a_write(mechanism, sandboxed, repo: Path):
    runtime = sandboxed(mechanism)
    output = await call(runtime, "bash", {"command": "python3 -c 'open(\"secrets/key.txt\", \"w\")'"})
    assert 'Sandbox: it refused writing secrets/key.txt: edit rule "secrets/*"' in output, output


async def test_the_result_says_the_network_is_off(mechanism, sandboxed, listener):
    runtime = sandboxed(mechanism)
    port = listener.getsockname()[1]
    output = await call(runtime, "bash", {"command": f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"})
    assert ("Sandbox: the network is off" in output) or ("Sandbox: it refused" in output), output
    assert no_connection_came(listener)


async def test_a_command_deny_the_kernel_cannot_hold_still_asks_a_person(mechanism, sandboxed, repo: Path):
    """`rm *` denied under bash: the sandbox cannot tell which program `python -c` runs,
    so only a person may approve it, as without a sandbox."""
    runtime = sandboxed(mechanism, {**{"bash": {"*": "allow", "rm *": "deny"}}, "edit": {"secrets/*": "deny"}})
    output = await call(runtime, "bash", {"command": "python3 -c 'print(1)'"})
    assert "only a person can approve this" in output, output


async def test_running_outside_the_sandbox_is_for_a_person_only(mechanism, sandboxed, repo: Path, tmp_path: Path):
    runtime = sandboxed(mechanism)
    asked = await call(runtime, "bash", {"command": "echo hi", "sandbox": False})
    assert "run it outside the sandbox?" in asked and "only a person can approve this" in asked, asked
    outside = tmp_path / "out.txt"
    seen = await call(runtime, "bash", {"command": f"echo hi > {outside}"})
    assert "run it outside the sandbox?" in seen and not outside.exists(), seen


async def test_a_read_the_judge_sees_of_a_hidden_path_is_asked_as_running_outside(mechanism, sandboxed, home: Path):
    runtime = sandboxed(mechanism, {"bash": {"*": "allow"}, "external_directory": {"*": "allow"}})
    output = await call(runtime, "bash", {"command": f"cat {home}/.ssh/id_rsa"})
    assert "which the sandbox hides" in output and "only a person can approve this" in output, output
    assert KEY not in output
