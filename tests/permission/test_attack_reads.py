"""Reading past a rule: with `view`, `grep` and `glob` denied on `secrets/*`, no spelling
of the path and no second name (a symlink, a hard link) shows the file's text, under
--yes too. The agent's bash may not make such a name (it reads the file through it); one
made by someone else is no way round either. The tools and bash run for real; the
outputs show what was read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.permission.attack import attack_config, call, plant

SECRET = "s3cr3t-text"
READ_RULES = {
    "view": {"secrets/*": "deny"},
    "grep": {"secrets/*": "deny"},
    "glob": {"secrets/*": "deny"},
    "bash": {"*": "allow"},
}


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    plant(workspace, {"secrets/key.txt": f"{SECRET}\n", "sub/notes.txt": "notes\n"})
    return make_runtime("headless-yes", attack_config(READ_RULES))


@pytest.mark.parametrize(
    "path", ["secrets/key.txt", "sub/../secrets/key.txt", "./secrets//key.txt", "SECRETS/key.txt", "secrets/KEY.txt"]
)
async def test_no_spelling_of_a_denied_path_is_viewed(runtime, workspace, path):
    output = await call(runtime, "view", {"filePath": path})
    assert output.startswith("ERROR: ") and SECRET not in output, output


async def test_the_absolute_path_is_no_way_round(runtime, workspace):
    output = await call(runtime, "view", {"filePath": f"{workspace}/secrets/key.txt"})
    assert 'denied by global rule "secrets/*"' in output and SECRET not in output, output


@pytest.mark.parametrize(
    ("made", "read"),
    [
        ("ln -s secrets/key.txt l", "l"),
        ("ln -s secrets s", "s/key.txt"),
        ("ln -s ../secrets/key.txt sub/l", "sub/l"),
        ("ln secrets/key.txt hard", "hard"),
        ("ln secrets/key.txt sub/hard", "sub/hard"),
    ],
)
async def test_a_second_name_is_no_way_round(runtime, workspace, made, read):
    output = await call(runtime, "bash", {"command": made})
    assert output.startswith("ERROR: bash: read ") and 'view rule "secrets/*"' in output, output
    outside_the_agent(workspace, made)
    output = await call(runtime, "view", {"filePath": read})
    assert output.startswith("ERROR: view ") and SECRET not in output, output
    assert "secrets/key.txt" in output
    output = await call(runtime, "grep", {"pattern": "s3cr3t", "path": read})
    assert SECRET not in output, output


def outside_the_agent(workspace: Path, command: str) -> None:
    """Run ``command`` in the workspace as a person or a script would, not through the agent."""
    subprocess.run(["bash", "-c", command], cwd=workspace, check=True, timeout=60)


async def test_a_search_of_the_tree_leaves_out_every_name_of_a_denied_file(runtime, workspace):
    outside_the_agent(workspace, "ln secrets/key.txt hard && ln -s secrets/key.txt soft")
    output = await call(runtime, "grep", {"pattern": "s3cr3t"})
    assert SECRET not in output and "hard" not in output, output
    output = await call(runtime, "glob", {"pattern": "*"})  # a symlink is a name of its own; a hard link is not
    assert "hard" not in output and "soft" in output, output


async def test_a_hard_link_message_names_the_rule(runtime, workspace):
    outside_the_agent(workspace, "ln secrets/key.txt hard")
    output = await call(runtime, "view", {"filePath": "hard"})
    assert output == (
        'ERROR: view hard: it is the same file as secrets/key.txt (a hard link), denied by global rule "secrets/*"'
    )


async def test_a_file_with_hard_links_no_rule_denies_is_read(runtime, workspace):
    await call(runtime, "bash", {"command": "ln sub/notes.txt sub/again.txt"})
    output = await call(runtime, "view", {"filePath": "sub/again.txt"})
    assert "notes" in output and not output.startswith("ERROR"), output


async def test_a_search_from_a_folder_holding_the_workspace_leaves_out_what_is_denied(runtime, workspace):
    """`grep x ..` searches the workspace too: its files are judged by their names in it
    (they were judged by their absolute paths, which `secrets/*` does not match)."""
    output = await call(runtime, "grep", {"pattern": "s3cr3t", "path": ".."})
    assert SECRET not in output and "key.txt" not in output, output
    output = await call(runtime, "glob", {"pattern": f"{workspace.name}/secrets/*", "path": str(workspace.parent)})
    assert "key.txt" not in output, output
    output = await call(runtime, "grep", {"pattern": "notes", "path": ".."})
    assert "notes.txt" in output, output


async def test_proc_paths_to_the_workspace_are_no_way_round(runtime, workspace):
    output = await call(runtime, "view", {"filePath": f"/proc/self/root{workspace}/secrets/key.txt"})
    assert 'denied by global rule "secrets/*"' in output and SECRET not in output, output
