"""Splitting a command line into the simple commands the bash tool judges one by one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.tools.shell_parse import parse_command


def parts(command: str) -> list[str]:
    parsed = parse_command(command)
    assert parsed.complete, f"{command!r} should parse"
    return [part.text for part in parsed.parts]


def programs(command: str) -> list[str]:
    return [name for part in parse_command(command).parts for name in part.programs]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", ["git status"]),
        ("  git status  ", ["git status"]),
        ("a && b || c; d | e\nf", ["a", "b", "c", "d", "e", "f"]),
        ("git status && ls -la", ["git status", "ls -la"]),
        ("make |& tee log", ["make", "tee log"]),
        ("! grep -q x f", ["grep -q x f"]),
    ],
)
def test_operators_separate_parts(command, expected):
    assert parts(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls $(whoami)", ["ls $(whoami)", "whoami"]),
        ("echo `id -u`", ["echo `id -u`", "id -u"]),
        ('echo "today: $(date)"', ['echo "today: $(date)"', "date"]),
        ("echo $(echo $(rm -rf x))", ["echo $(echo $(rm -rf x))", "echo $(rm -rf x)", "rm -rf x"]),
        ("diff <(sort a) <(sort b)", ["diff <(sort a) <(sort b)", "sort a", "sort b"]),
        ("echo $((1 + $(id -u)))", ["echo $((1 + $(id -u)))", "id -u"]),
        ("x=$(whoami)", ["x=$(whoami)", "whoami"]),
    ],
)
def test_substitutions_are_parts_of_their_own(command, expected):
    assert parts(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("(cd sub; make) | { grep x; }", ["cd sub", "make", "grep x"]),
        ("for f in $(ls); do rm \"$f\"; done", ["ls", 'rm "$f"']),
        ("if test -f a; then cat a; else touch a; fi", ["test -f a", "cat a", "touch a"]),
        ("while read l; do echo $l; done", ["read l", "echo $l"]),
        ("case $x in a) rm a;; *) ls;; esac", ["rm a", "ls"]),
        ("clean() { rm -rf build; }; clean", ["rm -rf build", "clean"]),
        ("[[ -f x ]] && cat x", ["[[ -f x ]]", "cat x"]),
        ("export A=1; unset A", ["export A=1", "unset A"]),
    ],
)
def test_parts_inside_compound_statements_are_found(command, expected):
    assert parts(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hi > out.txt", ["echo hi > out.txt"]),
        ("> out.txt echo hi", ["> out.txt echo hi"]),
        ("make 2>&1 | tee log", ["make 2>&1", "tee log"]),
        ("sort < in.txt >> out.txt", ["sort < in.txt >> out.txt"]),
        ("cat <<EOF\nhello $(id)\nEOF", ["cat <<EOF\nhello $(id)\nEOF", "id"]),
        ("cat <<'EOF'\n$(id)\nEOF", ["cat <<'EOF'\n$(id)\nEOF"]),
    ],
)
def test_redirections_stay_in_the_text_of_their_command(command, expected):
    assert parts(command) == expected


def test_a_redirected_group_is_a_part_besides_the_commands_inside():
    assert parts("{ a; b; } > f") == ["{ a; b; } > f", "a", "b"]
    assert parts("while read l; do echo $l; done < in") == ["while read l; do echo $l; done < in", "read l", "echo $l"]


def test_assignments_are_judged_since_they_change_what_runs():
    assert parts("PATH=. ; ls") == ["PATH=.", "ls"]
    assert parts("a=1 b=2 && make") == ["a=1 b=2", "make"]
    assert parts("CC=clang make") == ["CC=clang make"]


def test_comments_alone_have_no_parts():
    assert parts("# nothing to run") == []
    assert parts("ls -la # list") == ["ls -la"]


@pytest.mark.parametrize(
    "command", ['echo "unbalanced', "echo 'open", "ls $(whoami", "echo (", "if true; then ls", "a &&"]
)
def test_syntax_errors_make_the_command_incomplete(command):
    assert parse_command(command).complete is False


@pytest.mark.parametrize(
    ("command", "hidden"),
    [
        ("echo `echo \\`whoami\\``", "whoami"),  # bash unescapes \` inside backquotes, then runs it
        ("echo `echo \\$(curl x)`", "curl"),
        ("ls `cat \\`echo \\\\\\`nc -l 1\\\\\\`\\``", "nc"),
    ],
)
def test_escapes_inside_backquotes_make_the_command_incomplete(command, hidden):
    """The grammar reads `\\`` inside backquotes as text, but bash runs it as a nested
    substitution: the parts cannot be trusted, so the command is asked about, and what it
    runs still counts for the banned list."""
    parsed = parse_command(command)
    assert parsed.complete is False
    assert hidden in [name for part in parsed.parts for name in part.programs]


@pytest.mark.parametrize(
    ("command", "hidden"),
    [
        ("cat <<EOF\n`curl x`\nEOF", "curl"),  # an unquoted here-document runs its backquotes
        ("! { curl x; }", "curl"),  # read by the grammar as a command named "{"
    ],
)
def test_what_the_grammar_misreads_makes_the_command_incomplete(command, hidden):
    parsed = parse_command(command)
    assert parsed.complete is False
    assert hidden in [name for part in parsed.parts for name in part.programs]


def test_a_quoted_here_document_runs_nothing():
    assert parts("cat <<'EOF'\n`id`\nEOF") == ["cat <<'EOF'\n`id`\nEOF"]
    assert parts('cat <<"EOF"\n`id`\nEOF') == ['cat <<"EOF"\n`id`\nEOF']


def test_one_backquoted_substitution_per_command_is_parsed():
    assert parts("echo `id -u`; x=`date`") == ["echo `id -u`", "id -u", "x=`date`", "date"]


def test_two_backquoted_substitutions_in_one_command_are_asked_about():
    """tree-sitter-bash reads `echo `a` `b`` as one substitution running "a` `b"."""
    parsed = parse_command("echo `id -u` `rm -rf x`")
    assert parsed.complete is False
    assert [name for part in parsed.parts for name in part.programs] == ["echo", "id", "rm"]


def test_what_parses_of_an_incomplete_command_is_still_reported():
    parsed = parse_command('touch a; curl "http://x')
    assert parsed.complete is False
    assert "curl" in [name for part in parsed.parts for name in part.programs]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("curl -s x", ["curl"]),
        ("/usr/bin/wget x", ["wget"]),
        ("\\curl x", ["curl"]),
        ("'cu'\"rl\" x", ["curl"]),
        ("FOO=1 nc -l 80", ["nc"]),
        ("sudo -u root curl x", ["sudo", "root", "curl", "x"]),
        ("env A=1 wget q", ["env", "wget", "q"]),
        ("time ssh host", ["time", "ssh", "host"]),
        ("coproc w { curl x; }", ["coproc", "w", "{", "curl", "x", "}"]),  # the grammar misreads coproc
        ("bash -c 'curl x | sh'", ["bash", "curl", "sh"]),
        ("sh -ec \"wget q\"", ["sh", "wget"]),
        ("eval 'nc -l 1'", ["eval", "nc"]),
        ("$TOOL x", []),
        ("echo curl", ["echo"]),
        ("git commit -m 'curl is great'", ["git"]),
    ],
)
def test_programs_name_what_a_part_may_run(command, expected):
    assert programs(command) == expected


SHELLISH = st.text(alphabet=st.sampled_from(list("ab =$()`'\"|&;<>{}[]\\\n#*")), max_size=80)


@given(st.one_of(st.text(max_size=200), SHELLISH))
def test_any_text_parses_into_parts_taken_from_it(command):
    parsed = parse_command(command)
    for part in parsed.parts:
        assert part.text and part.text in command


def test_characters_outside_the_bmp_do_not_crash_the_grammar_and_stay_in_the_parts():
    """tree-sitter-bash segfaults (not every time) on `{` and a 4-byte character; run in a
    child process so a crash fails this test instead of killing the suite."""
    import subprocess
    import sys

    script = (
        "from app.tools.shell_parse import parse_command\n"
        "for _ in range(300):\n"
        "    for text in ('{\\U000e02c4', 'x{\\U000e0000', '{\\U0002d67f'):\n"
        "        parse_command(text)\n"
        "print(parse_command('echo 🎉 && ls {\\U000e02c4}').parts)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-500:]
    assert "echo 🎉" in result.stdout
