"""Which server serves which file: the config over defaults found on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.config.models import LspServerConfig
from app.lsp.servers import server_specs

REPO = Path(__file__).resolve().parents[2]


def on_path(*names: str):
    return lambda name: f"/usr/bin/{name}" if name in names else None


def test_defaults_are_the_servers_found_on_path_first_choice_first():
    specs = {spec.language: spec for spec in server_specs({}, which=on_path("pyright-langserver", "gopls"))}
    assert specs["python"].command == ("pyright-langserver", "--stdio")
    assert specs["go"].command == ("gopls",)
    assert set(specs) == {"python", "go"}


def test_the_config_replaces_a_default_and_disabled_switches_it_off():
    configured = {
        "python": LspServerConfig(command="my-pylsp", args=["--verbose"]),
        "go": LspServerConfig(disabled=True),
    }
    specs = {spec.language: spec for spec in server_specs(configured, which=on_path("pylsp", "gopls"))}
    assert specs["python"].command == ("my-pylsp", "--verbose")
    assert "go" not in specs


def test_a_language_without_a_known_extension_serves_files_named_after_it():
    [spec] = server_specs({"lua": LspServerConfig(command="lua-language-server")}, which=on_path())
    assert dict(spec.extensions) == {".lua": "lua"}
    typescript = server_specs({}, which=on_path("typescript-language-server"))[0]
    assert typescript.language_id(".TSX") == "typescriptreact"


def test_pylsp_is_found_beside_the_interpreter_when_path_lacks_it():
    """`make run` starts .venv/bin/opencode without activating the venv: PATH lacks its bin/,
    where the dev install put pylsp."""
    script = "from app.lsp.servers import server_specs\nprint([spec.command for spec in server_specs({})])"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env={"PATH": "/nonexistent"}, capture_output=True, text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('pylsp',)]"
    assert Path(sys.executable).with_name("pylsp").exists()


def test_a_one_shot_command_stops_its_language_server_before_its_loop_closes(tmp_path):
    """`opencode tool write` of a Python file starts pylsp for diagnostics. Killed only after
    asyncio.run had returned, its exit reached a closed loop, and asyncio printed "Loop ...
    that handles pid N is closed" on stderr (in about half the runs: hence three)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # The write waits for pylsp's diagnostics rather than for a fixed time: a busy machine starts it slowly.
    env = {
        "PATH": "/nonexistent",
        "HOME": str(tmp_path),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENCODE_TOOLS__LSP__DIAGNOSTICS_TIMEOUT": "60",
    }
    for n in range(3):
        arguments = f'{{"filePath": "m{n}.py", "content": "x = undefined_name\\n"}}'
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "-C", str(workspace), "tool", "write", "-", "--yes"],
            input=arguments, cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "undefined name 'undefined_name'" in done.stdout  # the server did run
        assert done.stderr == ""
