"""save_project_setting and save_user_setting change one key of the project's or the
user's file, atomically, or nothing."""

import json
import os
from pathlib import Path

import pytest

from app.config import load_config, save_project_setting, save_user_setting
from app.core.errors import ConfigError

from .conftest import write_json


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_creates_the_project_file(workspace: Path, env: dict[str, str]) -> None:
    save_project_setting(workspace, "tui.theme", "dracula")

    assert read(workspace / ".opencode.json") == {"tui": {"theme": "dracula"}}
    assert load_config(workspace, env=env).tui.theme == "dracula"


def test_a_user_setting_goes_to_the_xdg_file_made_with_its_folder(workspace: Path, home: Path, tmp_path: Path) -> None:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}

    written = save_user_setting("tui.theme", "nord", env)

    assert written == tmp_path / "xdg" / "opencode" / ".opencode.json"
    assert read(written) == {"tui": {"theme": "nord"}}
    assert load_config(workspace, env=env).tui.theme == "nord"
    assert not (workspace / ".opencode.json").exists()


def test_a_user_setting_goes_to_the_global_file_already_read(workspace: Path, home: Path, env: dict[str, str]) -> None:
    write_json(home / ".opencode.json", {"debug": True})

    assert save_user_setting("tui.theme", "nord", env) == home / ".opencode.json"
    assert read(home / ".opencode.json") == {"debug": True, "tui": {"theme": "nord"}}
    assert save_user_setting("tui.theme", "dracula", {**env, "XDG_CONFIG_HOME": ""}) == home / ".opencode.json"


def test_a_user_setting_without_home_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match="set HOME or XDG_CONFIG_HOME"):
        save_user_setting("tui.theme", "nord", {})


def test_keeps_every_other_key_and_their_order(workspace: Path) -> None:
    project = write_json(
        workspace / ".opencode.json",
        {"$schema": "./opencode-schema.json", "tui": {"keybindings": {"app.quit": "ctrl+q"}, "theme": "old"}, "debug": True},
    )

    save_project_setting(workspace, "tui.theme", "nord")

    assert list(read(project)) == ["$schema", "tui", "debug"]
    assert read(project)["tui"] == {"keybindings": {"app.quit": "ctrl+q"}, "theme": "nord"}
    assert project.read_text(encoding="utf-8").endswith("}\n")


def test_python_names_are_saved_under_the_json_key(workspace: Path) -> None:
    save_project_setting(workspace, "tools.delete.max_files", 42)
    save_project_setting(workspace, "auto_compact", False)

    assert read(workspace / ".opencode.json") == {"tools": {"delete": {"maxFiles": 42}}, "autoCompact": False}


def test_a_key_already_spelled_in_snake_case_is_updated_in_place(workspace: Path) -> None:
    project = write_json(workspace / ".opencode.json", {"auto_compact": True})

    save_project_setting(workspace, "autoCompact", False)

    assert read(project) == {"auto_compact": False}


def test_a_key_sequence_reaches_keys_that_contain_dots(workspace: Path, env: dict[str, str]) -> None:
    save_project_setting(workspace, ("permission", "rules", "delete", "*.go"), "deny")

    assert load_config(workspace, env=env).permission.rules == {"delete": {"*.go": "deny"}}


def test_keeps_the_file_mode(workspace: Path) -> None:
    project = write_json(workspace / ".opencode.json", {})
    project.chmod(0o600)

    save_project_setting(workspace, "debug", True)

    assert project.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in workspace.iterdir()] == [".opencode.json"]  # no temp file left behind


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("tui.themee", "x", 'unknown key "tui.themee": did you mean "theme"?'),
        ("tools.delete.maxFiles", "many", '"tools.delete.maxFiles" must be an integer (got "many")'),
        ("permission.rules.bash", "sometimes", '"permission.rules.bash" has unknown action "sometimes": use allow, ask or deny'),
    ],
)
def test_an_invalid_setting_leaves_the_file_untouched(workspace: Path, key: str, value: object, problem: str) -> None:
    project = write_json(workspace / ".opencode.json", {"debug": True})
    before = project.read_bytes()

    with pytest.raises(ConfigError) as caught:
        save_project_setting(workspace, key, value)

    assert str(caught.value) == f"{project} (after setting {key}): {problem}"
    assert project.read_bytes() == before


def test_a_broken_file_is_reported_not_overwritten(workspace: Path) -> None:
    project = workspace / ".opencode.json"
    project.write_text('{"debug": tru}', encoding="utf-8")

    with pytest.raises(ConfigError, match=r":1:11: invalid JSON"):
        save_project_setting(workspace, "tui.theme", "x")

    assert project.read_text(encoding="utf-8") == '{"debug": tru}'


def test_an_empty_key_is_refused(workspace: Path) -> None:
    with pytest.raises(ConfigError, match="empty key"):
        save_project_setting(workspace, "tui..theme", "x")

    assert not (workspace / ".opencode.json").exists()


def test_a_symlinked_file_is_written_through_the_link(workspace: Path, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "opencode.json"
    target.parent.mkdir()
    target.write_text('{"debug": true}\n')
    (workspace / ".opencode.json").symlink_to(target)

    save_project_setting(workspace, "tui.theme", "nord")

    assert (workspace / ".opencode.json").is_symlink()
    assert json.loads(target.read_text()) == {"debug": True, "tui": {"theme": "nord"}}
    assert sorted(p.name for p in target.parent.iterdir()) == ["opencode.json"]


def test_a_failed_write_is_one_config_error_and_leaves_no_temp_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = workspace / ".opencode.json"
    project.write_text('{"debug": true}\n')

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(ConfigError, match="cannot write the file .No space left on device."):
        save_project_setting(workspace, "tui.theme", "nord")
    monkeypatch.undo()
    assert project.read_text() == '{"debug": true}\n'
    assert sorted(p.name for p in workspace.iterdir()) == [".opencode.json"]


def test_a_missing_workspace_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot write the file"):
        save_project_setting(tmp_path / "nowhere", "debug", True)


def test_infinity_is_refused_because_it_is_not_json(workspace: Path) -> None:
    with pytest.raises(ConfigError, match='"tools.lsp.diagnosticsTimeout" must be a finite number'):
        save_project_setting(workspace, "tools.lsp.diagnosticsTimeout", float("inf"))

    assert not (workspace / ".opencode.json").exists()
