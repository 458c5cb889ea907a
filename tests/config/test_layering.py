"""Defaults < global file < project file < environment, merged deeply."""

from pathlib import Path

from app.config import Config, load_config
from app.config.models import DEFAULT_BANNED_COMMANDS, DEFAULT_CONTEXT_PATHS

from .conftest import write_json


def test_no_files_and_no_variables_give_the_defaults(workspace: Path, env: dict[str, str]) -> None:
    config = load_config(workspace, env=env)

    assert config == Config()
    assert config.tui.theme == "opencode"
    assert config.auto_compact is True
    assert config.debug is False
    assert config.context_paths == list(DEFAULT_CONTEXT_PATHS)
    assert config.tools.delete.max_files == 500
    assert config.tools.bash.banned_commands == list(DEFAULT_BANNED_COMMANDS)
    assert (config.tools.bash.default_timeout_ms, config.tools.bash.max_timeout_ms) == (120_000, 600_000)
    assert config.data_dir(workspace) == workspace / ".opencode"


def test_each_layer_overrides_the_one_below(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"tui": {"theme": "global"}, "debug": True, "tools": {"delete": {"maxFiles": 7}}})
    write_json(workspace / ".opencode.json", {"tui": {"theme": "project"}, "tools": {"delete": {"maxFiles": 9}}})

    config = load_config(workspace, env={**env, "OPENCODE_TUI__THEME": "dracula"})

    assert config.tui.theme == "dracula"  # env beats project beats global
    assert config.tools.delete.max_files == 9  # project beats global
    assert config.debug is True  # only the global file sets it
    assert config.auto_compact is True  # nobody sets it: the default


def test_layers_merge_deeply_down_to_permission_patterns(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(
        home / ".opencode.json",
        {"permission": {"rules": {"bash": "ask", "delete": {"*": "ask", "tmp/*": "allow"}}}},
    )
    write_json(workspace / ".opencode.json", {"permission": {"rules": {"delete": {"*.go": "deny", "*": "allow"}}}})

    rules = load_config(workspace, env=env).permission.rules

    assert rules["bash"] == "ask"
    assert rules["delete"] == {"*": "allow", "tmp/*": "allow", "*.go": "deny"}


def test_a_project_can_disable_a_server_the_global_file_defines(
    workspace: Path, home: Path, env: dict[str, str]
) -> None:
    write_json(home / ".opencode.json", {"mcpServers": {"fs": {"command": "npx", "args": ["server"]}}})
    write_json(workspace / ".opencode.json", {"mcpServers": {"fs": {"disabled": True}}})

    server = load_config(workspace, env=env).mcp_servers["fs"]

    assert (server.command, server.args, server.disabled) == ("npx", ["server"], True)


def test_lists_are_replaced_not_appended(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"contextPaths": ["GLOBAL.md"]})
    write_json(workspace / ".opencode.json", {"contextPaths": ["PROJECT.md"]})

    assert load_config(workspace, env=env).context_paths == ["PROJECT.md"]


def test_snake_case_names_are_accepted_in_files(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"auto_compact": False, "tools": {"delete": {"max_files": 3}}})
    write_json(workspace / ".opencode.json", {"autoCompact": True})

    config = load_config(workspace, env=env)

    assert config.auto_compact is True  # same key in two spellings: the project still wins
    assert config.tools.delete.max_files == 3


def test_the_schema_key_is_accepted_and_ignored(workspace: Path, env: dict[str, str]) -> None:
    write_json(workspace / ".opencode.json", {"$schema": "./opencode-schema.json", "debug": True})

    config = load_config(workspace, env=env)

    assert config.debug is True
    assert "$schema" not in config.model_dump(by_alias=True)


def test_agent_rules_and_settings_are_read_per_agent(workspace: Path, env: dict[str, str]) -> None:
    write_json(
        workspace / ".opencode.json",
        {"agents": {"coder": {"model": "m", "maxTokens": 100, "reasoningEffort": "high",
                              "permission": {"delete": {"internal/test/*": "allow"}}}}},
    )

    agents = load_config(workspace, env=env).agents

    assert agents.coder.model == "m"
    assert agents.coder.max_tokens == 100
    assert agents.coder.reasoning_effort == "high"
    assert agents.get("coder").permission == {"delete": {"internal/test/*": "allow"}}
    assert agents.get("explorer").permission == {}
    assert agents.get("reviewer") is None


def test_explicit_global_path_replaces_the_lookup(workspace: Path, home: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"tui": {"theme": "from-home"}})
    explicit = write_json(tmp_path / "elsewhere.json", {"tui": {"theme": "explicit"}})

    assert load_config(workspace, global_path=explicit, env=env).tui.theme == "explicit"
    assert load_config(workspace, global_path=tmp_path / "missing.json", env=env).tui.theme == "opencode"


def test_a_workspace_at_home_reads_the_shared_file_once(home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"mcpServers": {"fs": {"command": "x"}}})

    config = load_config(home, env=env)

    assert list(config.mcp_servers) == ["fs"]


def test_data_directory_is_relative_to_the_workspace_unless_absolute(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    write_json(workspace / ".opencode.json", {"data": {"directory": "var/state"}})
    assert load_config(workspace, env=env).data_dir(workspace) == workspace / "var" / "state"

    write_json(workspace / ".opencode.json", {"data": {"directory": str(tmp_path / "abs")}})
    assert load_config(workspace, env=env).data_dir(workspace) == tmp_path / "abs"


class TestGlobalFileLookup:
    def test_xdg_config_home_file_is_used_when_present(self, workspace: Path, home: Path, tmp_path: Path) -> None:
        xdg = tmp_path / "xdg"
        write_json(xdg / "opencode" / ".opencode.json", {"tui": {"theme": "xdg"}})
        write_json(home / ".opencode.json", {"tui": {"theme": "home"}})

        config = load_config(workspace, env={"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)})

        assert config.tui.theme == "xdg"

    def test_falls_back_to_home_when_the_xdg_file_is_absent(self, workspace: Path, home: Path, tmp_path: Path) -> None:
        (tmp_path / "xdg" / "opencode").mkdir(parents=True)
        write_json(home / ".opencode.json", {"tui": {"theme": "home"}})

        config = load_config(workspace, env={"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})

        assert config.tui.theme == "home"

    def test_falls_back_to_home_when_xdg_is_unset(self, workspace: Path, home: Path) -> None:
        write_json(home / ".opencode.json", {"tui": {"theme": "home"}})

        assert load_config(workspace, env={"HOME": str(home)}).tui.theme == "home"

    def test_xdg_unset_means_the_dot_config_folder(self, workspace: Path, home: Path) -> None:
        write_json(home / ".config" / "opencode" / ".opencode.json", {"tui": {"theme": "dot-config"}})
        write_json(home / ".opencode.json", {"tui": {"theme": "home"}})

        assert load_config(workspace, env={"HOME": str(home)}).tui.theme == "dot-config"

    def test_no_global_file_anywhere_is_fine(self, workspace: Path, home: Path, tmp_path: Path) -> None:
        env = {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

        assert load_config(workspace, env=env) == Config()
