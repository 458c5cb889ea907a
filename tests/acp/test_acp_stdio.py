"""`opencode acp` with standard streams that are no pipes: a regular file, /dev/null, a
closed descriptor. Each ends cleanly at the end of its input (or refuses in one line when
there is nowhere to answer), never with a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def _acp(workspace: Path, redirections: str) -> subprocess.CompletedProcess[str]:
    """`opencode acp -C workspace` with the shell's ``redirections`` (stderr captured)."""
    command = f'exec "$0" -m app.cli acp -C "$1" {redirections}'
    env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        ["sh", "-c", command, sys.executable, str(workspace)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_requests_from_a_regular_file_are_answered_into_a_regular_file(tmp_path: Path):
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_text(json.dumps(INITIALIZE) + "\n")
    done = _acp(tmp_path, f'< "{requests}" > "{answers}"')
    assert (done.returncode, done.stderr) == (0, "")
    answer = json.loads(answers.read_text())
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1


@pytest.mark.parametrize("stdin", ["< /dev/null", "<&-"], ids=["dev-null", "closed"])
def test_an_input_that_is_empty_or_closed_ends_cleanly(tmp_path: Path, stdin: str):
    done = _acp(tmp_path, stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_closed_output_is_refused_in_one_line(tmp_path: Path):
    done = _acp(tmp_path, "< /dev/null >&-")
    assert done.returncode == 2
    assert done.stderr.startswith("opencode: error: standard output is closed")
    assert len(done.stderr.splitlines()) == 1


def test_a_session_cwd_no_folder_can_have_is_invalid_params(tmp_path: Path):
    """A NUL character or a name too long was an internal error with the OS's words."""
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    cwds = [f"{tmp_path}/a\0b", f"{tmp_path}/{'a' * 5000}", "/etc/passwd"]
    lines = [INITIALIZE] + [
        {"jsonrpc": "2.0", "id": n, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
        for n, cwd in enumerate(cwds, start=2)
    ]
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = _acp(tmp_path, f'< "{requests}" > "{answers}"')
    assert (done.returncode, done.stderr) == (0, "")
    errors = {answer["id"]: answer["error"] for answer in map(json.loads, answers.read_text().splitlines()) if "error" in answer}
    assert sorted(errors) == [2, 3, 4] and {error["code"] for error in errors.values()} == {-32602}
    assert "contains a NUL character" in errors[2]["data"]["message"]
    assert "File name too long" in errors[3]["data"]["message"]


def test_a_file_where_the_log_folder_goes_is_one_line_naming_it(tmp_path: Path):
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "logs").write_text("not a folder")
    done = _acp(tmp_path, "< /dev/null")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"opencode: error: cannot keep the ACP log at {tmp_path}/.opencode/logs: File exists; "
        "remove what is in the way, or set OPENCODE_DATA__DIRECTORY to a writable folder\n"
    )


def test_a_prompt_holding_half_a_utf16_pair_is_invalid_params(tmp_path: Path):
    """JSON's "\\udcff" reached the store: an internal error and a traceback in acp.log."""
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    prompt = '{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "any", "prompt": [{"type": "text", "text": "bad \\udcff here"}]}}'
    requests.write_text(json.dumps(INITIALIZE) + "\n" + prompt + "\n")
    done = _acp(tmp_path, f'< "{requests}" > "{answers}"')
    assert (done.returncode, done.stderr) == (0, "")
    [error] = [answer["error"] for answer in map(json.loads, answers.read_text().splitlines()) if answer["id"] == 2]
    assert error["code"] == -32602
    assert error["data"]["message"].startswith("the prompt holds '\\udcff', half of a UTF-16 pair")
