"""Every bad file gives one line naming the file, the key path and what to do."""

from pathlib import Path
from typing import Any

import pytest

from app.config import load_config
from app.core.errors import ConfigError

from .conftest import write_json


def load_error(workspace: Path, env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(workspace, env=env)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_invalid_json_names_line_and_column(workspace: Path, env: dict[str, str]) -> None:
    project = workspace / ".opencode.json"
    project.write_text('{\n  "debug": true,\n  "tui": {"theme": }\n}\n', encoding="utf-8")

    assert load_error(workspace, env) == f"{project}:3:20: invalid JSON: Expecting value"


def test_the_top_level_must_be_an_object(workspace: Path, env: dict[str, str]) -> None:
    project = write_json(workspace / ".opencode.json", ["debug"])

    assert load_error(workspace, env) == f"{project}: the top level must be a JSON object {{...}} (got list)"


def test_a_file_that_is_not_utf8_is_named(workspace: Path, env: dict[str, str]) -> None:
    project = workspace / ".opencode.json"
    project.write_bytes(b'{"tui": {"theme": "caf\xe9"}}')

    assert load_error(workspace, env) == f"{project}: not UTF-8 text (bad byte at offset 22): save it as UTF-8"


def test_a_bom_is_skipped_and_offsets_still_count_it(workspace: Path, env: dict[str, str]) -> None:
    project = workspace / ".opencode.json"
    project.write_bytes(b'\xef\xbb\xbf{"debug": true}')
    assert load_config(workspace, env=env).debug is True
    project.write_bytes(b'\xef\xbb\xbf{"tui": {"theme": "caf\xe9"}}')
    assert load_error(workspace, env) == f"{project}: not UTF-8 text (bad byte at offset 25): save it as UTF-8"


def test_an_unreadable_path_is_named(workspace: Path, env: dict[str, str]) -> None:
    (workspace / ".opencode.json").mkdir()

    assert load_error(workspace, env) == (
        f"{workspace / '.opencode.json'}: is a directory, not a regular file: make it a regular JSON file"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"agents": {"coder": {"modle": "x"}}}, 'unknown key "agents.coder.modle": did you mean "model"?'),
        ({"tui": {"theme": "x", "colour": 1}}, 'unknown key "tui.colour": valid keys here are theme, keybindings, notify'),
        ({"autocompact": True}, 'unknown key "autocompact": did you mean "autoCompact"?'),
        (
            {"agents": {"reviewer": {"model": "x"}}},
            'unknown key "agents.reviewer": valid keys here are coder, plan, workhorse, explorer, title, summarizer',
        ),
        ({"tools": {"delete": {"maxFiles": "many"}}}, '"tools.delete.maxFiles" must be an integer (got "many")'),
        ({"tools": {"delete": {"maxFiles": "20"}}}, '"tools.delete.maxFiles" must be an integer (got "20")'),
        ({"tools": {"delete": {"maxFiles": 0}}}, '"tools.delete.maxFiles" must be greater than 0 (got 0)'),
        ({"debug": "yes"}, '"debug" must be true or false (got "yes")'),
        ({"contextPaths": ["a", 3]}, '"contextPaths[1]" must be a string (got 3)'),
        ({"tui": "dark"}, '"tui" must be an object (got "dark")'),
        (
            {"agents": {"coder": {"reasoningEffort": "max"}}},
            '"agents.coder.reasoningEffort" must be "low", "medium" or "high" (got "max")',
        ),
        (
            {"mcpServers": {"x": {"type": "sse", "url": "u"}}},
            '"mcpServers.x.type" must be "stdio" or "http" (got "sse")',
        ),
        (
            {"permission": {"rules": {"delete": {"*": "ask", "*.go": "nope"}}}},
            '"permission.rules.delete.*.go" has unknown action "nope": use allow, ask or deny',
        ),
        (
            {"permission": {"rules": {"bash": "allowed"}}},
            '"permission.rules.bash" has unknown action "allowed": use allow, ask or deny',
        ),
        (
            {"agents": {"coder": {"permission": {"delete": {"tmp/*": "yes"}}}}},
            '"agents.coder.permission.delete.tmp/*" has unknown action "yes": use allow, ask or deny',
        ),
        ({"debug": 1, "tui": 2}, '"tui" must be an object (got 2) (and 1 more problem)'),
    ],
)
def test_bad_values_name_the_file_and_key_path(
    workspace: Path, env: dict[str, str], content: dict[str, Any], problem: str
) -> None:
    project = write_json(workspace / ".opencode.json", content)

    assert load_error(workspace, env) == f"{project}: {problem}"


def test_the_error_names_the_file_that_holds_the_mistake(workspace: Path, home: Path, env: dict[str, str]) -> None:
    global_file = write_json(home / ".opencode.json", {"tools": {"delete": {"maxFiles": "many"}}})
    write_json(workspace / ".opencode.json", {"tools": {"delete": {"maxFiles": 5}}})

    assert load_error(workspace, env) == f'{global_file}: "tools.delete.maxFiles" must be an integer (got "many")'


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"mcpServers": {"fs": {"args": ["x"]}}}, '"mcpServers.fs" needs a "command" (stdio server): '),
        ({"mcpServers": {"web": {"type": "http"}}}, '"mcpServers.web" needs a "url" (http server): '),
        ({"lsp": {"go": {"args": ["serve"]}}}, '"lsp.go" needs a "command": '),
    ],
)
def test_incomplete_servers_are_refused_after_merging(
    workspace: Path, env: dict[str, str], content: dict[str, Any], problem: str
) -> None:
    project = write_json(workspace / ".opencode.json", content)

    assert load_error(workspace, env) == f'{project}: {problem}add one or set "disabled": true'


def test_a_cross_layer_problem_names_every_layer_involved(
    workspace: Path, home: Path, env: dict[str, str]
) -> None:
    global_file = write_json(home / ".opencode.json", {"tools": {"bash": {"defaultTimeoutMs": 300_000}}})
    project = write_json(workspace / ".opencode.json", {"tools": {"bash": {"maxTimeoutMs": 200_000}}})

    assert load_error(workspace, env) == (
        f'{global_file} + {project}: "tools.bash" has defaultTimeoutMs 300000 above maxTimeoutMs 200000: '
        "lower the first or raise the second"
    )
