"""The wheel as a user installs it (`pipx install .` does the same): built from this tree,
installed with the locked dependencies into a fresh virtual environment, and run from
there, away from the source tree: the version, the schema, a headless turn on a scripted
model, and every shipped theme."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).with_name("uv")  # a dev dependency: it installs from its cache


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh environment's bin/ folder."""
    scratch = tmp_path_factory.mktemp("wheel")
    run(UV, "build", "--wheel", "--quiet", "--out-dir", scratch / "dist", REPO, cwd=scratch)
    wheel = next((scratch / "dist").glob("opencode-*.whl"))
    venv = scratch / "venv"
    run(UV, "venv", "--quiet", "--python", sys.executable, venv, cwd=scratch)
    run(UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python", wheel,
        "--constraint", REPO / "requirements.lock", cwd=scratch)  # fmt: skip
    return venv / "bin"


@pytest.fixture
def user(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A workspace outside the source tree and an environment with nothing of ours."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENCODE_", "PYTHON"))}
    env |= {"HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("XDG_CONFIG_HOME", None)
    return workspace, env


def test_the_installed_command_prints_its_version_and_schema(installed: Path, user) -> None:
    workspace, env = user
    assert run(installed / "opencode", "--version", cwd=workspace, env=env).startswith("opencode ")
    schema = run(installed / "opencode", "schema", cwd=workspace, env=env)
    assert schema == (REPO / "opencode-schema.json").read_text(encoding="utf-8")


def test_the_installed_command_runs_a_headless_turn(installed: Path, user) -> None:
    workspace, env = user
    script = workspace.parent / "script.json"
    script.write_text(json.dumps({"turns": [{"steps": [{"text": "Hello from the wheel."}]}]}), encoding="utf-8")
    out = run(installed / "opencode", "-p", "hi", "--model", f"scripted/{script}", "-f", "json", "-q",
              cwd=workspace, env=env)  # fmt: skip
    assert json.loads(out)["response"] == "Hello from the wheel."


def test_the_installed_package_carries_every_theme(installed: Path, user) -> None:
    workspace, env = user
    listing = (
        "from textual.app import App\n"
        "from app.tui.themes import THEMES_DIR, available_themes, register_themes\n"
        "app = App()\n"
        "print(THEMES_DIR)\n"
        "register_themes(app, THEMES_DIR / 'no-user-themes')\n"
        "print(' '.join(available_themes(app)))\n"
    )
    folder, names = run(installed / "python", "-c", listing, cwd=workspace, env=env).splitlines()
    assert Path(folder).is_relative_to(installed.parent)  # the wheel's copy, not the source tree's
    shipped = {path.stem for path in (REPO / "themes").glob("*.json")}
    assert shipped <= set(names.split()) and len(shipped) == 6
