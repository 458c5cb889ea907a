"""A bash child's environment is the user's: variables opencode sets for itself (litellm's
cost-map switch) stay out, and the user's own variables reach it. A real `opencode -p`
run whose model (the fake OpenAI server) runs `env` through the bash tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.test_worktrees import REPO, fake_llm, repo  # noqa: F401  (fixtures)

SHELL_OWN = {"PWD", "OLDPWD", "SHLVL", "_", "TMPDIR"}
"""What the shell sets in any child, and the sandbox's temporary folder for the command."""


def test_a_bash_child_has_the_users_variables_and_none_opencode_set_for_itself(
    repo: Path, fake_llm: FakeOpenAI, tmp_path: Path  # noqa: F811
):
    fake_llm.reply(ToolCall("bash", json.dumps({"command": "env"}), id="call_env"))
    fake_llm.reply(Text("Listed."))
    given = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_", "LITELLM_")) and not k.endswith("_API_KEY")}
    given |= {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"), "MY_OWN_SETTING": "kept", **fake_llm.env}

    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-C", str(repo), "-p", "list", "--yes",
         "--model", fake_llm.model],
        capture_output=True, text=True, cwd=REPO, env=given, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    listed = fake_llm.requests[1]["messages"][-1]["content"]
    child = dict(line.split("=", 1) for line in listed.splitlines() if "=" in line and not line.startswith(" "))
    assert child["MY_OWN_SETTING"] == "kept"
    assert "LITELLM_LOCAL_MODEL_COST_MAP" not in child
    assert set(child) - set(given) - SHELL_OWN == set()
