"""Config files and OPENCODE_* values built to hang or crash the reader: each is one
ConfigError line naming its source, within a bounded wait, and nothing is opened that is
not a regular file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.config import load_config
from app.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 30
"""Generous: each case takes milliseconds; the bound only turns a hang into a failure."""


def error_within_bound(load: Callable[[], object]) -> str:
    """The ConfigError line ``load`` raises, run in a thread so a hang fails the test."""
    outcome: list[BaseException | object] = []
    thread = threading.Thread(target=lambda: outcome.append(_outcome(load)), daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert outcome, f"loading the config did not end within {WAIT_S} s"
    error = outcome[0]
    assert isinstance(error, ConfigError), f"expected a ConfigError, got {error!r}"
    message = str(error)
    assert "\n" not in message
    return message


def _outcome(load: Callable[[], object]) -> BaseException | object:
    try:
        return load()
    except BaseException as err:  # noqa: BLE001 - the test judges what came out
        return err


@pytest.fixture
def project_file(workspace: Path) -> Path:
    return workspace / ".opencode.json"


def test_a_fifo_is_refused_by_its_type_without_waiting_for_a_writer(
    workspace: Path, env: dict[str, str], project_file: Path
) -> None:
    os.mkfifo(project_file)
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message == f"{project_file}: is a FIFO, not a regular file: make it a regular JSON file"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_link_to_a_device_is_refused_by_its_type(
    workspace: Path, env: dict[str, str], project_file: Path, device: str
) -> None:
    project_file.symlink_to(device)
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message == f"{project_file}: is a character device, not a regular file: make it a regular JSON file"


def test_a_symlink_loop_is_named(workspace: Path, env: dict[str, str], project_file: Path) -> None:
    project_file.symlink_to(project_file)
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message == (
        f"{project_file}: cannot read the file (Too many levels of symbolic links): check that it is a readable file"
    )


def test_a_file_over_one_megabyte_is_not_read(workspace: Path, env: dict[str, str], project_file: Path) -> None:
    project_file.write_text('{"debug": true, "x": "' + "a" * (1024 * 1024) + '"}')
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message.startswith(f"{project_file}: 1,048,600 bytes is over the limit of 1,048,576 for a config file")


@pytest.mark.parametrize("levels", [5_000, 100_000])
def test_deep_nesting_names_the_limit_and_line(
    workspace: Path, env: dict[str, str], project_file: Path, levels: int
) -> None:
    project_file.write_text('{\n"tui": ' + '{"a": ' * levels + "1" + "}" * levels + "\n}")
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message.startswith(f"{project_file}:2: JSON nested deeper than 64 levels: ")


def test_a_five_thousand_digit_integer_is_refused(workspace: Path, env: dict[str, str], project_file: Path) -> None:
    project_file.write_text('{"tools": {"delete": {"maxFiles": ' + "9" * 5_000 + "}}}")
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message.startswith(f"{project_file}: an integer of 5,000 digits is longer than 20: ")


def test_a_repeated_key_names_the_key_and_its_line(workspace: Path, env: dict[str, str], project_file: Path) -> None:
    project_file.write_text(
        '{\n  "permission": {"delete": {"*.go": "deny"}},\n  "debug": true,\n  "permission": {"edit": "ask"}\n}\n'
    )
    message = error_within_bound(lambda: load_config(workspace, env=env))
    assert message == (
        f'{project_file}:4: the key "permission" appears twice in one object: '
        "keep one of them (only the last would count)"
    )


def test_the_same_key_in_different_objects_is_fine(workspace: Path, env: dict[str, str], project_file: Path) -> None:
    project_file.write_text('{"agents": {"coder": {"maxTokens": 10}, "explorer": {"maxTokens": 10}}}')
    assert load_config(workspace, env=env).agents.coder.max_tokens == 10


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("OPENCODE_TOOLS__DELETE__MAXFILES", "9" * 5_000, "an integer of 5,000 digits is longer than 20"),
        ("OPENCODE_TUI", '{"a": ' * 5_000 + "1" + "}" * 5_000, "JSON nested deeper than 64 levels"),
        ("OPENCODE_PERMISSION", '{"edit": "ask", "edit": "deny"}', 'the key "edit" appears twice in one object'),
    ],
)
def test_hostile_variables_name_the_variable(
    workspace: Path, env: dict[str, str], name: str, value: str, problem: str
) -> None:
    message = error_within_bound(lambda: load_config(workspace, env={**env, name: value}))
    assert message.startswith(f"environment variable {name}: {problem}: ")


def test_the_command_exits_2_with_one_line_on_a_fifo(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    os.mkfifo(workspace / ".opencode.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_")}
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(workspace), "tool", "ls", "{}"],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=WAIT_S,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"opencode: error: {workspace / '.opencode.json'}: is a FIFO, not a regular file: make it a regular JSON file"
    ]
