"""Every OPENCODE_* variable the docs and the README name does what they say: a setting
is read from the environment, another tool's variable sharing the prefix is ignored
with a warning, a misspelt key is a one-line error. A newly documented variable must
join one of the tables below."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.config import Config, load_config
from app.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

SETTINGS: dict[str, tuple[str, Callable[[Config], Any], Any]] = {
    "OPENCODE_AGENTS__CODER__MODEL": ("openai/gpt-4o", lambda c: c.agents.coder.model, "openai/gpt-4o"),
    "OPENCODE_CONTEXTPATHS": ('["A.md"]', lambda c: c.context_paths, ["A.md"]),
    "OPENCODE_DATA": ('{"directory": "state"}', lambda c: c.data.directory, "state"),
    "OPENCODE_DATA__DIRECTORY": ("state", lambda c: c.data.directory, "state"),
    "OPENCODE_DEBUG": ("true", lambda c: c.debug, True),
    "OPENCODE_MCPSERVERS__GITHUB__DISABLED": ("true", lambda c: c.mcp_servers["github"].disabled, True),
    "OPENCODE_PERMISSION__RULES__DELETE": ('{"*.go": "deny"}', lambda c: c.permission.rules["delete"], {"*.go": "deny"}),
    "OPENCODE_PROVIDERS__OPENAI__DISABLED": ("true", lambda c: c.providers["openai"].disabled, True),
    "OPENCODE_PROVIDERS__OPENAI__APIKEY": ("sk-test", lambda c: c.providers["openai"].api_key, "sk-test"),
    "OPENCODE_TOOLS": ('{"delete": {"MAXFILES": 5}}', lambda c: c.tools.delete.max_files, 5),
    "OPENCODE_TOOLS__DELETE__MAXFILES": ("20", lambda c: c.tools.delete.max_files, 20),
    "OPENCODE_TOOLS__DELETE__MAX_FILES": ("21", lambda c: c.tools.delete.max_files, 21),
    "OPENCODE_TOOLS__GREP__BACKEND": ("python", lambda c: c.tools.grep.backend, "python"),
    "OPENCODE_TUI__THEME": ("dracula", lambda c: c.tui.theme, "dracula"),
}
OTHER_TOOLS = ("OPENCODE_CONFIG", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_PROJECT_DIR")
MISSPELT = {"OPENCODE_TUI__THEMEE": 'unknown key "tui.themee": did you mean "theme"?'}
TEST_SEAMS = ("OPENCODE_CRASH_AT_FILE_OP",)
"""Named in the docs as TEST_OPENCODE_CRASH_AT_FILE_OP, which the prefix does not match."""


def documented() -> set[str]:
    texts = [path.read_text() for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]]
    return {name for text in texts for name in re.findall(r"OPENCODE_[A-Z0-9_]+", text)}


def test_every_documented_variable_is_in_a_table() -> None:
    known = {*SETTINGS, *OTHER_TOOLS, *MISSPELT, *TEST_SEAMS}
    assert documented() - known == set()


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_documented_setting_is_read_from_the_environment(name: str, workspace: Path, home: Path) -> None:
    value, read, expected = SETTINGS[name]
    assert read(load_config(workspace, env={"HOME": str(home), name: value})) == expected


def test_another_tools_variable_is_ignored_with_a_warning(workspace: Path, home: Path) -> None:
    warned: list[str] = []
    config = load_config(workspace, env={"HOME": str(home), **dict.fromkeys(OTHER_TOOLS, "1")}, warn=warned.append)
    assert config == load_config(workspace, env={"HOME": str(home)})
    assert warned == [f"environment variable {name} is not an opencode setting: ignored" for name in OTHER_TOOLS]


@pytest.mark.parametrize("name", sorted(MISSPELT))
def test_a_misspelt_documented_key_is_one_line_naming_the_variable(name: str, workspace: Path, home: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(workspace, env={"HOME": str(home), name: "x"})
    assert str(caught.value) == f"environment variable {name}: {MISSPELT[name]}"
