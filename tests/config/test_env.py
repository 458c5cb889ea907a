"""OPENCODE_* variables: the top layer, nested with __, matched case-insensitively."""

from pathlib import Path

import pytest

from app.config import load_config
from app.core.errors import ConfigError

from .conftest import write_json


def test_nested_variables_set_typed_values(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(
        workspace,
        env={
            **env,
            "OPENCODE_TOOLS__DELETE__MAXFILES": "20",
            "OPENCODE_DEBUG": "true",
            "OPENCODE_TOOLS__LSP__DIAGNOSTICSTIMEOUT": "0.5",
            "OPENCODE_CONTEXTPATHS": '["RULES.md"]',
        },
    )

    assert config.tools.delete.max_files == 20
    assert config.debug is True
    assert config.tools.lsp.diagnostics_timeout == 0.5
    assert config.context_paths == ["RULES.md"]


@pytest.mark.parametrize(
    "name", ["OPENCODE_AUTOCOMPACT", "OPENCODE_AUTO_COMPACT", "OPENCODE_autoCompact", "opencode_auto_compact"]
)
def test_names_match_the_alias_or_the_python_name_in_any_case(
    workspace: Path, env: dict[str, str], name: str
) -> None:
    assert load_config(workspace, env={**env, name: "false"}).auto_compact is False


def test_text_values_are_taken_as_is(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(workspace, env={**env, "OPENCODE_TUI__THEME": "123", "OPENCODE_SHELL__PATH": "/bin/zsh"})

    assert config.tui.theme == "123"
    assert config.shell.path == "/bin/zsh"


def test_map_keys_are_lowercased_or_follow_the_files_spelling(workspace: Path, env: dict[str, str]) -> None:
    write_json(workspace / ".opencode.json", {"mcpServers": {"GitHub": {"command": "gh-mcp"}}})

    config = load_config(
        workspace,
        env={**env, "OPENCODE_PROVIDERS__OPENAI__APIKEY": "sk-1", "OPENCODE_MCPSERVERS__GITHUB__DISABLED": "true"},
    )

    assert config.providers["openai"].api_key == "sk-1"
    assert list(config.mcp_servers) == ["GitHub"]
    assert config.mcp_servers["GitHub"].disabled is True
    assert config.mcp_servers["GitHub"].command == "gh-mcp"


def test_a_rule_can_be_an_action_or_a_json_pattern_map(workspace: Path, env: dict[str, str]) -> None:
    write_json(workspace / ".opencode.json", {"permission": {"rules": {"edit": "deny"}}})

    rules = load_config(
        workspace,
        env={
            **env,
            "OPENCODE_PERMISSION__RULES__BASH": "allow",
            "OPENCODE_PERMISSION__RULES__DELETE": '{"*": "ask", "tmp/*": "allow"}',
        },
    ).permission.rules

    assert rules == {"edit": "deny", "bash": "allow", "delete": {"*": "ask", "tmp/*": "allow"}}


def test_a_deeper_variable_wins_over_a_json_section(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(
        workspace,
        env={**env, "OPENCODE_TUI__THEME": "dracula", "OPENCODE_TUI": '{"theme": "nord", "keybindings": {"q": "x"}}'},
    )

    assert config.tui.theme == "dracula"
    assert config.tui.keybindings == {"q": "x"}


def test_the_configuration_is_a_pydantic_settings_object(workspace: Path, env: dict[str, str]) -> None:
    from pydantic_settings import BaseSettings

    config = load_config(workspace, env={**env, "OPENCODE_DEBUG": "true"})

    assert isinstance(config, BaseSettings) and config.debug is True
    assert type(config).model_config["env_prefix"] == "OPENCODE_"
    assert type(config).model_config["env_nested_delimiter"] == "__"


def test_the_variables_are_read_by_the_librarys_environment_source(workspace: Path, env: dict[str, str]) -> None:
    from pydantic_settings import EnvSettingsSource

    from app.config.models import Config
    from app.config.settings import Load, load_sources

    load = Load(workspace, None, {**env, "OPENCODE_TUI__THEME": "nord"}, print)
    source = load_sources(Config, load)[0]

    assert isinstance(source, EnvSettingsSource)
    assert source() == {"tui": {"theme": "nord"}}


def test_the_loads_environment_is_read_not_the_process_one(
    workspace: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCODE_DEBUG", "true")
    monkeypatch.setenv("OPENCODE_NOT_A_SETTING", "1")
    warnings: list[str] = []

    config = load_config(workspace, env={**env, "OPENCODE_TUI__THEME": "nord"}, warn=warnings.append)

    assert config.debug is False and config.tui.theme == "nord" and warnings == []


def test_null_unsets_an_optional_key_a_file_set(workspace: Path, env: dict[str, str]) -> None:
    write_json(workspace / ".opencode.json", {"agents": {"coder": {"maxTokens": 100, "model": "a/b"}}})

    config = load_config(workspace, env={**env, "OPENCODE_AGENTS__CODER__MAXTOKENS": "null"})

    assert config.agents.coder.max_tokens is None and config.agents.coder.model == "a/b"


def test_keys_inside_a_json_value_match_a_setting_in_any_case(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(
        workspace,
        env={**env, "OPENCODE_TOOLS": '{"DELETE": {"maxfiles": 7}}', "OPENCODE_PROVIDERS__OPENAI": '{"APIKEY": "k"}'},
    )

    assert config.tools.delete.max_files == 7 and config.providers["openai"].api_key == "k"


def test_a_variable_that_names_no_setting_is_a_warning_and_ignored(workspace: Path, env: dict[str, str]) -> None:
    """Other tools share the prefix (sst/opencode's OPENCODE_CONFIG, OPENCODE_DISABLE_AUTOUPDATE)."""
    warnings: list[str] = []
    variables = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_AUTOCOMPACTT": "false", "OPENCODE_DEBUG": "true"}

    config = load_config(workspace, env={**env, **variables}, warn=warnings.append)

    assert config.debug is True and config.auto_compact is True
    assert sorted(warnings) == [
        'environment variable OPENCODE_AUTOCOMPACTT is not an opencode setting (did you mean "autoCompact"?): ignored',
        "environment variable OPENCODE_DISABLE_AUTOUPDATE is not an opencode setting: ignored",
    ]


def test_other_variables_are_ignored(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(workspace, env={**env, "OPENCODEX_DEBUG": "nope", "MY_OPENCODE_DEBUG": "nope"})

    assert config.debug is False


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"OPENCODE_TOOLS__DELETE__MAXFILES": "many"},
            'environment variable OPENCODE_TOOLS__DELETE__MAXFILES: "tools.delete.maxFiles" must be an integer (got "many")',
        ),
        (
            {"OPENCODE_TUI__THEMEE": "x"},
            'environment variable OPENCODE_TUI__THEMEE: unknown key "tui.themee": did you mean "theme"?',
        ),
        (
            {"OPENCODE_AGENTS__REVIEWER__MODEL": "x"},
            'environment variable OPENCODE_AGENTS__REVIEWER__MODEL: unknown key "agents.reviewer": '
            "valid keys here are coder, plan, workhorse, explorer, title, summarizer",
        ),
        (
            {"OPENCODE_CONTEXTPATHS": '["a", '},
            "environment variable OPENCODE_CONTEXTPATHS: invalid JSON at column 7: Expecting value",
        ),
        (
            {"OPENCODE_CONTEXTPATHS": "a,b"},
            'environment variable OPENCODE_CONTEXTPATHS: "contextPaths" must be a list (got "a,b")',
        ),
        (
            {"OPENCODE_PERMISSION__RULES__DELETE": '{"*.go": "nope"}'},
            'environment variable OPENCODE_PERMISSION__RULES__DELETE: "permission.rules.delete.*.go" '
            'has unknown action "nope": use allow, ask or deny',
        ),
        (
            {"OPENCODE_DEBUG__LEVEL": "2"},
            'environment variable OPENCODE_DEBUG__LEVEL: "debug" has no key "level" to set by name: '
            "set OPENCODE_DEBUG to a JSON value instead",
        ),
        (
            {"OPENCODE_TUI____THEME": "x"},
            "environment variable OPENCODE_TUI____THEME: empty key in the name: separate keys with a single '__'",
        ),
        (
            {"OPENCODE_TUI__THEME": "x", "OPENCODE_TUI": '{"keybindings": 3}'},
            'environment variable OPENCODE_TUI: "tui.keybindings" must be an object (got 3)',
        ),
        (
            {"OPENCODE_DEBUG": "null"},
            'environment variable OPENCODE_DEBUG: "debug" must be true or false (got null)',
        ),
        (
            {"OPENCODE_TUI__THEME": "x", "OPENCODE_PERMISSION__RULES__BASH": '{"git *": "allow",'},
            "environment variable OPENCODE_PERMISSION__RULES__BASH: invalid JSON at column 19: Expecting property name "
            "enclosed in double quotes",
        ),
    ],
)
def test_bad_variables_are_named_in_one_line(
    workspace: Path, env: dict[str, str], variables: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(workspace, env={**env, **variables})

    assert str(caught.value) == message
