"""`opencode -p`: what goes to stdout and stderr, exit codes, the headless permission
policy, --continue, and the offline demo. Every test runs twice: in-process, and attached
to one `opencode serve` shared by the module (a real server in a subprocess), whose output
and exit codes must be the same. The scripted model keeps it offline; tests/e2e runs the
same through the real CLI and the fake OpenAI server."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.headless.run import EXIT_FAILED, EXIT_NEEDS_APPROVAL, EXIT_OK, EXIT_USAGE, call_subject, run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.agent import DEFAULT_MAX_STEPS
from app.llm.models import ONBOARDING_MESSAGE
from app.llm.scripted import DEMO_SCRIPT
from app.runtime import Runtime
from app.serve.address import connect
from app.serve.client import run_attached
from tests.llm.fake_openai import Text
from tests.serve.running import clean_env, runtime_folder, socket_of, start_server, stop_server

WRITE_NOTES = {"name": "write", "arguments": {"filePath": "notes.txt", "content": "remember the milk\n"}}


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> dict:
        return json.loads(self.out)


def in_process(root: Path, prompt: str, **options) -> Run:
    out, err = io.StringIO(), io.StringIO()
    env = options.pop("env", {})
    code = run_headless(root, HeadlessRequest(prompt, **options), env=env, stdout=out, stderr=err)
    return Run(code, out.getvalue(), err.getvalue())


def attached(socket: Path, root: Path, prompt: str, **options) -> Run:
    """The same run through the server's socket; the server's environment has no
    provider keys, as the in-process runs' ``env={}``."""
    assert options.pop("env", {}) == {}
    out, err = io.StringIO(), io.StringIO()
    sock = connect(socket)
    assert sock is not None
    environment = clean_env(socket.parent.parent)  # the server's: this process's own differs (HOME)
    code = run_attached(sock, root, HeadlessRequest(prompt, **options), stdout=out, stderr=err, environment=environment)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def server() -> Iterator[Path]:
    """One `opencode serve` for the module's attached runs; its socket."""
    with runtime_folder() as folder:
        process = start_server(folder)
        try:
            yield socket_of(folder)
        finally:
            stop_server(process)


@pytest.fixture(params=["in-process", "attached"])
def headless(request: pytest.FixtureRequest) -> Callable[..., Run]:
    """``headless(root, prompt, **HeadlessRequest options) -> Run``, run each way."""
    if request.param == "in-process":
        return in_process
    socket = request.getfixturevalue("server")
    return lambda root, prompt, **options: attached(socket, root, prompt, **options)


@pytest.fixture
def script(tmp_path: Path):
    """``model = script(turns)``: writes a script file and returns its scripted/ model name."""

    def write(turns: list[dict], name: str = "script.json") -> str:
        path = tmp_path / name
        path.write_text(json.dumps({"turns": turns}))
        return f"scripted/{path}"

    return write


def test_text_output_prints_the_answer_and_progress_goes_to_stderr(workspace: Path, script, headless):
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "Wrote notes.txt."}]}])

    run = headless(workspace, "take a note", model=model, yes=True)

    assert run.code == EXIT_OK
    assert run.out == "Wrote notes.txt.\n"
    assert run.err == "→ write notes.txt\n"
    assert (workspace / "notes.txt").read_text() == "remember the milk\n"


def test_quiet_hides_the_progress_lines(workspace: Path, script, headless):
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "ok"}]}])
    run = headless(workspace, "take a note", model=model, yes=True, quiet=True)
    assert (run.code, run.out, run.err) == (EXIT_OK, "ok\n", "")


def test_json_output_has_the_documented_keys(workspace: Path, script, headless):
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "Wrote it."}]}])

    run = headless(workspace, "take a note", model=model, yes=True, output_format="json")

    payload = run.json()
    assert set(payload) == {"session_id", "response", "usage", "cost", "files_changed", "files_deleted"}
    assert payload["response"] == "Wrote it." and payload["files_changed"] == ["notes.txt"]
    assert payload["files_deleted"] == []
    assert set(payload["usage"]) == {"prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"}
    assert all(type(count) is int for count in payload["usage"].values())
    assert payload["usage"]["prompt_tokens"] > 0 and type(payload["cost"]) is float and payload["cost"] == 0.0
    assert isinstance(payload["session_id"], str)
    runtime = Runtime.build(workspace, policy="headless")
    try:
        session = runtime.store.sessions.get(payload["session_id"])
        assert session.title == "take a note"  # a one-shot run is titled from its prompt
    finally:
        runtime.close()


def test_without_yes_what_would_be_asked_is_denied_and_the_model_is_told(workspace: Path, script, headless):
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "I was not allowed."}]}])

    run = headless(workspace, "take a note", model=model)

    assert run.code == EXIT_NEEDS_APPROVAL and run.out == "I was not allowed.\n"
    assert not (workspace / "notes.txt").exists()
    assert "✗" in run.err and "run with --yes to allow it" in run.err
    assert run.err.splitlines()[-1] == (
        "opencode: error: 1 call needed approval and was refused (write notes.txt): "
        "run with --yes to allow them, or allow them in the permission rules"
    )


def test_a_call_a_deny_rule_refuses_is_a_normal_outcome(workspace: Path, script, headless):
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "Not allowed to."}]}])
    (workspace / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"write": {"*": "deny"}}}}))

    run = headless(workspace, "take a note", model=model, output_format="json")

    assert run.code == EXIT_OK and "error" not in run.json()
    assert not (workspace / "notes.txt").exists() and "the rules forbid write" in run.err


def test_several_unapproved_calls_make_one_line_and_json_says_why(workspace: Path, script, headless):
    writes = [
        {"toolCalls": [{"name": "write", "arguments": {"filePath": name, "content": "x"}}]} for name in "abcd"
    ]
    model = script([{"steps": [*writes, {"text": "No."}]}])

    run = headless(workspace, "take notes", model=model, output_format="json", quiet=True)

    assert run.code == EXIT_NEEDS_APPROVAL and run.err.count("\n") == 1
    assert run.json()["error"].startswith(
        "4 calls needed approval and were refused (write a, write b, write c and 1 more)"
    )


def test_continue_resumes_the_latest_session(workspace: Path, script, headless):
    model = script([
        {"match": "^first", "steps": [{"text": "one"}]},
        {"match": "^second", "steps": [{"text": "two"}]},
    ])  # fmt: skip

    first = headless(workspace, "first prompt", model=model, output_format="json").json()
    second = headless(
        workspace, "second prompt", model=model, output_format="json", continue_last=True
    ).json()
    fresh = headless(workspace, "second prompt", model=model, output_format="json").json()

    assert second["session_id"] == first["session_id"] != fresh["session_id"]
    runtime = Runtime.build(workspace, policy="headless")
    try:
        texts = [m.parts[0]["text"] for m in runtime.store.messages.list(first["session_id"])]
    finally:
        runtime.close()
    assert texts == ["first prompt", "one", "second prompt", "two"]


def test_continue_without_a_session_is_a_usage_error(workspace: Path, script, headless):
    run = headless(workspace, "go on", model=script([{"steps": [{"text": "x"}]}]), continue_last=True)
    assert run.code == EXIT_USAGE
    assert (
        run.err
        == "opencode: error: no session to continue in this workspace: run without --continue to start one\n"
    )


def test_no_model_prints_the_onboarding_message(workspace: Path, headless):
    run = headless(workspace, "hello")
    assert run.code == EXIT_USAGE and run.out == ""
    assert run.err == ONBOARDING_MESSAGE + "\n"


def test_a_bad_script_or_an_empty_prompt_is_a_usage_error(workspace: Path, tmp_path: Path, headless):
    (tmp_path / "bad.json").write_text("{")
    bad = headless(workspace, "hello", model=f"scripted/{tmp_path / 'bad.json'}")
    assert bad.code == EXIT_USAGE and bad.err.count("\n") == 1 and "not valid JSON" in bad.err
    empty = headless(workspace, "   ", model=f"scripted/{tmp_path / 'bad.json'}")
    assert empty.code == EXIT_USAGE and "the prompt is empty" in empty.err


@pytest.mark.parametrize(
    ("target", "kind"), [("fifo", "a FIFO"), ("/dev/zero", "a character device")], ids=["FIFO", "/dev/zero"]
)
def test_a_command_naming_a_special_file_as_its_model_is_one_line(
    workspace: Path, tmp_path: Path, script, headless, target, kind
):
    """A repository's command names a script that never ends (or never opens): the run
    stops at once with one line, as the same --model typed would."""
    if target == "fifo":
        target = str(tmp_path / "script.fifo")
        os.mkfifo(target)
    commands = workspace / ".opencode" / "commands"
    commands.mkdir(parents=True)
    (commands / "go.md").write_text(f"---\nmodel: scripted/{target}\n---\nDo the thing\n")
    run = headless(workspace, "/go", model=script([{"steps": [{"text": "not this one"}]}]))
    assert run.code == EXIT_USAGE and run.out == ""
    assert run.err == f"opencode: error: scripted model: {target} is {kind}, not a regular file; pass --model scripted/<file>.json\n"


def test_a_failed_turn_exits_1_with_one_line_on_stderr(workspace: Path, script, headless):
    model = script([{"match": "^only", "steps": [{"text": "x"}]}])

    run = headless(workspace, "something else", model=model, output_format="json")

    assert run.code == EXIT_FAILED
    assert run.err.count("\n") == 1 and run.err.startswith("opencode: error: scripted model")
    assert "no turn matches" in run.json()["error"]
    assert set(run.json()) == {"session_id", "response", "usage", "cost", "files_changed", "files_deleted", "error"}


def test_the_step_limit_exits_1_and_says_how_to_go_on(workspace: Path, script, headless):
    listing = {"toolCalls": [{"name": "ls", "arguments": {}}]}
    model = script([{"steps": [listing] * (DEFAULT_MAX_STEPS + 1)}])

    run = headless(workspace, "list forever", model=model, quiet=True, output_format="json")

    assert run.code == EXIT_FAILED
    assert run.err.count("\n") == 1 and f"step limit ({DEFAULT_MAX_STEPS} model calls)" in run.err
    assert "--continue" in run.json()["error"]


def test_call_subjects_name_what_a_call_is_about():
    assert call_subject({"filePath": "src/a.py", "oldString": "x"}) == "src/a.py"
    assert call_subject({"command": "pytest -q\n  -x"}) == "pytest -q -x"
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Delete File: b.py\n*** End Patch"
    assert call_subject({"patch": patch}) == "a.py, b.py"
    assert call_subject({}) == ""


def test_the_offline_demo_works_in_any_folder_in_its_own_subfolder(workspace: Path, tmp_path: Path, headless):
    """`make run` with no provider in any project (a fresh clone of this one, say): the
    demo sets up its own project in opencode-demo/ and leaves everything else alone."""
    (workspace / "README.md").write_text("# Someone's project\n")
    (workspace / "greet.py").write_text("print('theirs')\n")
    fast_demo = tmp_path / "demo.json"
    fast_demo.write_text(json.dumps({**json.loads(DEMO_SCRIPT.read_text()), "chunkDelay": 0}))

    run = headless(
        workspace, "Show me what you can do", model=f"scripted/{fast_demo}", yes=True, output_format="json"
    )

    payload = run.json()
    assert run.code == EXIT_OK, run.err
    assert "✗" not in run.err
    assert [line.split()[1] for line in run.err.splitlines()] == [
        "patch",
        "ls",
        "view",
        "view",
        "edit",
        "patch",
        "delete",
    ]
    demo = workspace / "opencode-demo"
    assert '"Hello, "' in (demo / "greet.py").read_text()
    assert "python -m pytest" in (demo / "README.md").read_text()
    assert (demo / "test_greet.py").exists() and not (demo / "tmp").exists()
    assert (workspace / "README.md").read_text() == "# Someone's project\n"
    assert (workspace / "greet.py").read_text() == "print('theirs')\n"
    # tmp/ was made and deleted in the turn: net nothing, so not listed
    assert payload["files_changed"] == [f"opencode-demo/{name}" for name in ["README.md", "greet.py", "test_greet.py"]]


def test_a_refused_patch_prints_its_reason_not_the_tools_json(workspace: Path, script, headless):
    patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch"
    model = script([{"steps": [{"toolCalls": [{"name": "patch", "arguments": {"patch": patch}}]}, {"text": "ok"}]}])

    run = headless(workspace, "add a file", model=model)

    assert run.err.splitlines()[1] == "  ✗ patch new.txt: needs approval: run with --yes to allow it"


def test_a_sub_agents_unapproved_call_counts_too(workspace: Path, script, headless):
    outside = {"name": "view", "arguments": {"filePath": "/etc/hostname"}}
    task = {"name": "task", "arguments": {"description": "peek", "prompt": "look outside"}}
    model = script([
        {"match": "^look outside", "steps": [{"toolCalls": [outside]}, {"text": "could not"}]},
        {"match": "^go", "steps": [{"toolCalls": [task]}, {"text": "ok"}]},
    ])  # fmt: skip

    run = headless(workspace, "go", model=model, quiet=True)

    assert (run.code, run.out) == (EXIT_NEEDS_APPROVAL, "ok\n")
    assert "(external_directory /etc/hostname)" in run.err


def test_session_continues_the_named_session_and_an_unknown_one_is_a_usage_error(workspace: Path, script, headless):
    model = script([{"match": "^first", "steps": [{"text": "one"}]}, {"steps": [{"text": "more"}]}])
    first = headless(workspace, "first prompt", model=model, output_format="json").json()
    headless(workspace, "another", model=model)

    named = headless(workspace, "again", model=model, output_format="json", session_id=first["session_id"])
    unknown = headless(workspace, "again", model=model, session_id="nope")

    assert named.json()["session_id"] == first["session_id"]
    assert unknown.code == EXIT_USAGE and unknown.out == ""
    assert unknown.err == (
        f"opencode: error: no session nope in {workspace.resolve()}: pass an id that 'opencode changes' lists\n"
    )


def test_a_mention_not_attached_is_said_on_stderr(workspace: Path, script, headless):
    (workspace / ".env").write_text("TOKEN=secret\n")
    (workspace / ".opencode.json").write_text(json.dumps({"permission": {"rules": {"view": {"*.env": "deny"}}}}))
    model = script([{"steps": [{"text": "ok"}]}])

    run = headless(workspace, "check @.env", model=model, quiet=True)

    assert (run.code, run.out) == (EXIT_OK, "ok\n")
    assert run.err.startswith("opencode: @.env was not attached: ") and run.err.count("\n") == 1


def test_a_delete_only_a_person_may_approve_is_refused_even_with_yes(workspace: Path, script, headless):
    """Past tools.delete.maxFiles, --yes does not cover a delete: attached, the question
    goes to the client, which answers by its policy, and the refusal is the same."""
    (workspace / ".opencode.json").write_text(json.dumps({"tools": {"delete": {"maxFiles": 3}}}))
    for n in range(5):
        (workspace / "build").mkdir(exist_ok=True)
        (workspace / "build" / f"f{n}.txt").write_text(f"{n}\n")
    delete = {"name": "delete", "arguments": {"path": "build"}}
    model = script([{"steps": [{"toolCalls": [delete]}, {"text": "could not"}]}])

    run = headless(workspace, "clean up", model=model, yes=True)

    assert (run.code, run.out) == (EXIT_NEEDS_APPROVAL, "could not\n")
    assert len(list((workspace / "build").iterdir())) == 5
    assert "--yes does not cover it" in run.err.splitlines()[1]
    assert run.err.splitlines()[-1].startswith("opencode: error: 1 call needed approval and was refused (delete build)")


def test_a_retried_model_call_is_one_progress_line(workspace: Path, fake_llm, headless):
    """Through litellm (a provider of the workspace's config, so the attached server uses
    it too): a 429 told to retry at once, then the answer."""
    providers = {"gw": {"api": "openai", "baseURL": fake_llm.base_url, "apiKey": "test", "models": {"m": {}}}}
    (workspace / ".opencode.json").write_text(json.dumps({"providers": providers}))
    fake_llm.fail(429, "slow down", retry_after="0")
    fake_llm.reply(Text("ok"))

    run = headless(workspace, "hello", model="gw/m")

    assert (run.code, run.out) == (EXIT_OK, "ok\n")
    [line] = run.err.splitlines()
    assert line.startswith("… the model call failed (") and line.endswith("); retrying in 0.0 s")


def test_the_agent_option_picks_the_primary_agent_and_an_unknown_one_is_a_usage_error(
    workspace: Path, script, headless
):
    """The plan agent has no tool that writes: its attempt is refused, whichever way it runs."""
    model = script([{"steps": [{"toolCalls": [WRITE_NOTES]}, {"text": "Here is the plan."}]}])

    planned = headless(workspace, "plan a note", model=model, yes=True, agent="plan")
    unknown = headless(workspace, "plan a note", model=model, agent="nosuch")

    assert (planned.code, planned.out) == (EXIT_OK, "Here is the plan.\n") and not (workspace / "notes.txt").exists()
    assert unknown.code == EXIT_USAGE and unknown.err.startswith("opencode: error: unknown agent 'nosuch': use one of ")
