"""Splitting a command line into the simple commands the bash tool judges one by one."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.permission.shell.parse import parse_command


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
        ("coproc w { curl x; }", ["coproc", "w", "{", "curl", "x"]),  # the grammar misreads coproc
        ("bash -c 'curl x | sh'", ["bash", "curl", "sh"]),
        ("sh -ec \"wget q\"", ["sh", "wget"]),
        ("eval 'nc -l 1'", ["eval", "nc"]),
        ("$TOOL x", []),
        ("echo curl", ["echo"]),
        ("git commit -m 'curl is great'", ["git"]),
    ],
)
def test_programs_name_what_a_part_may_run(command, expected):
    assert list(parse_command(command).parts[0].programs) == expected


SHELLISH = st.text(alphabet=st.sampled_from(list("ab =$()`'\"|&;<>{}[]\\\n#*")), max_size=80)


@given(st.one_of(st.text(max_size=200), SHELLISH))
@example("0\\\n0")
def test_any_text_parses_into_parts_taken_from_it(command):
    """Each part is text of the command, as written or as the shell reads it once a
    backslash-newline has joined its two lines."""
    parsed = parse_command(command)
    joined = command.replace("\\\n", "")
    for part in parsed.parts:
        assert part.text and (part.text in command or part.text in joined)


def test_characters_outside_the_bmp_do_not_crash_the_grammar_and_stay_in_the_parts():
    """tree-sitter-bash segfaults (not every time) on `{` and a 4-byte character; run in a
    child process so a crash fails this test instead of killing the suite."""
    import subprocess
    import sys

    script = (
        "from app.permission.shell.parse import parse_command\n"
        "for _ in range(300):\n"
        "    for text in ('{\\U000e02c4', 'x{\\U000e0000', '{\\U0002d67f'):\n"
        "        parse_command(text)\n"
        "print(parse_command('echo 🎉 && ls {\\U000e02c4}').parts)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-500:]
    assert "echo 🎉" in result.stdout


# --- cases from OpenCode's/Crush's suites ----------------------------------------------
# Crush's wrapper and banned-command tests and OpenCode's wrapper extraction, in our own
# data: what a wrapper, a shell, `eval`, `trap` or `find -exec` runs is a part of its own
# (so a rule on it applies), and its program counts for the banned list.


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("nohup make build", "make build"),
        ("time make build", "make build"),
        ("timeout 30s npm test", "npm test"),
        ("timeout -s KILL 10 npm test", "npm test"),
        ("timeout --signal=KILL 10 npm test", "npm test"),
        ("nice -n 10 make", "make"),
        ("nice -n5 make", "make"),
        ("ionice -c 2 -n 7 make", "make"),
        ("stdbuf -oL tail -f app.log", "tail -f app.log"),
        ("sudo -u deploy systemctl restart web", "systemctl restart web"),
        ("sudo -- rm -rf build", "rm -rf build"),
        ("env NODE_ENV=prod node app.js", "node app.js"),
        ("env -u HOME PATH=/usr/bin node app.js", "node app.js"),
        ("xargs -I {} rm {}", "rm {}"),
        ("xargs -I{} rm {}", "rm {}"),
        ("setsid make", "make"),
        ("taskset 0x3 make", "make"),
        ("chrt 10 make", "make"),
        ("flock /run/lock/build make", "make"),
        ("runuser -u builder -- make", "make"),
        ("exec make", "make"),
        ("watch -n 1 'make; ls'", "make"),
        ("env -S 'make all'", "make all"),
        ("env --split-string='make all'", "make all"),
        ("bash -c 'make all'", "make all"),
        ("su -c 'make all' builder", "make all"),
        ("flock /run/lock/build -c 'make all'", "make all"),
        ("eval 'make all'", "make all"),
        ("trap 'make clean' EXIT", "make clean"),
        ("find . -name '*.o' -exec rm {} \\;", "rm {}"),
        ("find . -execdir chmod 644 {} +", "chmod 644 {}"),
        ("nohup nice -n 5 timeout 9 make build", "make build"),
        ("sudo env NODE_ENV=prod node app.js", "node app.js"),
    ],
)
def test_what_a_wrapper_runs_is_a_part_of_its_own(command, inner):
    assert inner in parts(command)


@pytest.mark.parametrize(
    "command",
    ["nohup", "sudo -n", "timeout 5", "command -v rm", "trap - INT", "trap -p", "env FOO=bar", "git checkout main"],
)
def test_a_wrapper_that_runs_nothing_adds_no_part(command):
    assert parts(command) == [command]


def test_each_find_exec_clause_is_a_part():
    assert parts("find . -exec echo {} \\; -exec rm {} +")[1:] == ["echo {}", "rm {}"]


@pytest.mark.parametrize(
    ("command", "hidden"),
    [
        ("nohup curl https://example.com", "curl"),
        ("env HTTP_PROXY=x curl https://example.com", "curl"),
        ("env -S 'curl https://example.com'", "curl"),
        ("env --split-string='wget https://example.com'", "wget"),
        ("nice -n 10 wget https://example.com", "wget"),
        ("timeout -s KILL 5 nc example.com 9000", "nc"),
        ("taskset 0x3 curl https://example.com", "curl"),
        ("chrt 1 wget https://example.com", "wget"),
        ("setsid scp notes.txt host:/x", "scp"),
        ("flock /tmp/lock curl https://example.com", "curl"),
        ("runuser -u nobody -- curl https://example.com", "curl"),
        ("nohup env timeout 5 curl https://example.com", "curl"),
        ("env /usr/bin/curl https://example.com", "curl"),
        ("nohup ./bin/wget https://example.com", "wget"),
        ("/usr/bin/curl/ https://example.com", "curl"),  # a trailing slash names the same program
        ("../../bin/scp notes.txt host:/x", "scp"),
        ("find . -exec curl -T {} https://example.com \\;", "curl"),
        ("su -c 'curl https://example.com'", "curl"),
        ("trap 'curl https://example.com' EXIT", "curl"),
    ],
)
def test_banned_programs_are_found_behind_wrappers_and_paths(command, hidden):
    assert hidden in programs(command)


@pytest.mark.parametrize(("command", "absent"), [("mycurl x", "curl"), ("CURL x", "curl"), ("echo curl", "curl")])
def test_only_the_program_itself_counts(command, absent):
    assert absent not in programs(command)


@pytest.mark.parametrize("command", ["$TOOL --force", '"$PY" -m app', "eval \"$CODE\"", "bash -c \"$SCRIPT\""])
def test_a_program_or_script_known_only_at_run_time_is_a_doubt(command):
    """The rules cannot judge what `X=rm; $X -rf src` runs: it is asked about, saying why."""
    parsed = parse_command(command)
    assert parsed.complete is True and "known only at run time" in parsed.doubts[0]


@pytest.mark.parametrize(
    ("command", "paths", "directory"),
    [
        ("cat /etc/hosts notes.txt", ("/etc/hosts", "notes.txt"), None),
        ("rm -rf -- -odd ../x", ("-odd", "../x"), None),
        ("echo hi > ~/out.txt 2>&1", ("~/out.txt",), None),
        ("sort < /var/data.txt", ("/var/data.txt",), None),
        ("grep -r /api/v1 src", ("/api/v1", "src"), None),  # a pattern may be a path: asked, never missed
        ("echo /etc", (), None),  # not a file command
        ("cat $FILE", ("",), None),  # computed: "" (asked about)
        ("cd ../", ("../",), "../"),
        ("cd", (), "~"),
        ("cd -", (), ""),
        ('cd "$DIR"', ("",), ""),
        ("popd", (), ""),
    ],
)
def test_paths_a_part_names(command, paths, directory):
    part = parse_command(command).parts[0]
    assert (part.paths, part.directory) == (paths, directory)


def nested_shells(depth: int) -> str:
    """`sh -c 'sh -c '"'"'...'"'"''`: ``depth`` shells, each running the next."""
    command = "ls"
    for _ in range(depth):
        command = f"sh -c {shlex.quote(command)}"
    return command


def test_scripts_of_scripts_are_parsed_a_few_levels_deep():
    assert "ls" in parts(nested_shells(5))


@pytest.mark.parametrize(
    "command",
    ["nohup " * 2000 + "curl x", "echo $(" * 400 + "id" + ")" * 400, nested_shells(12)],
    ids=["2000 wrappers", "400 substitutions", "12 shells"],
)
def test_commands_nested_beyond_reason_are_asked_about_not_a_crash(command):
    parsed = parse_command(command)
    assert parsed.complete is False
    assert parsed.parts[0].text == command
