"""tools.webfetch.allowPrivate widens what the agent may reach: the user's own config or
environment may set it, a project's .opencode.json may not (a cloned repository, or the
agent, must not open it for itself)."""

from pathlib import Path

import pytest

from app.config import load_config
from app.core.errors import ConfigError

from .conftest import write_json

PRIVATE_ON = {"tools": {"webfetch": {"allowPrivate": True}}}


def test_it_is_off_by_default(workspace: Path, env: dict[str, str]) -> None:
    assert load_config(workspace, env=env).tools.webfetch.allow_private is False


def test_the_user_config_turns_it_on(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", PRIVATE_ON)
    assert load_config(workspace, env=env).tools.webfetch.allow_private is True


def test_the_environment_turns_it_on(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(workspace, env={**env, "OPENCODE_TOOLS__WEBFETCH__ALLOWPRIVATE": "true"})
    assert config.tools.webfetch.allow_private is True


@pytest.mark.parametrize("value", [True, False])
def test_a_project_file_cannot_set_it(workspace: Path, home: Path, env: dict[str, str], value: bool) -> None:
    write_json(home / ".opencode.json", PRIVATE_ON)
    write_json(workspace / ".opencode.json", {"tools": {"webfetch": {"allow_private": value}}})
    with pytest.raises(ConfigError) as caught:
        load_config(workspace, env=env)
    message = str(caught.value)
    assert message.startswith(f'{workspace / ".opencode.json"}: "tools.webfetch.allowPrivate" can be set only in the user config')
    assert message.endswith("not in a project: move it there") and "\n" not in message


def test_a_workspace_at_home_reads_the_users_own_file(home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", PRIVATE_ON)
    assert load_config(home, env=env).tools.webfetch.allow_private is True
