"""The sandbox's policy made from the rules, the bubblewrap command line and the macOS
profile made from it (which cannot run here: its text is checked)."""

from __future__ import annotations

import os
from pathlib import Path

from app.bus import Bus
from app.config import Config
from app.permission import PermissionService
from app.sandbox.bwrap import bwrap_argv
from app.sandbox.macos import seatbelt_profile
from app.sandbox.policy import SandboxPolicy, build_policy


def policy_for(root: Path, rules: dict, **sandbox: object) -> SandboxPolicy:
    config = Config.model_validate({"permission": {"rules": rules}, "sandbox": sandbox})
    permissions = PermissionService(config, Bus())
    return build_policy(config, permissions, root.as_posix(), "coder", None, "/tmp/session-tmp")


def carved(policy: SandboxPolicy) -> dict[str, str]:
    return {policy.shown(c.path): c.kind for c in policy.carves}


def test_rules_become_hidden_and_read_only_paths(repo: Path, home: Path):
    (repo / "src").mkdir()
    for name in ("a.key", "b.py"):
        (repo / "src" / name).write_text("x")
    rules = {"edit": {"secrets/*": "deny", "src/*.key": "deny"}, "view": {"private/*": "deny"}}
    policy = policy_for(repo, rules)
    found = carved(policy)
    assert found["secrets"] == "read-only"  # a bare `*`: the whole folder, files made later too
    assert found["src/a.key"] == "read-only" and "src/b.py" not in found  # matched when the command starts
    assert found["private"] == "hidden"
    assert found["~/.ssh"] == "hidden"
    assert found[".git/config"] == found[".git/hooks"] == "read-only"
    assert ".git" not in found  # git add and commit write the rest of it
    assert not policy.network


def test_a_more_specific_allow_lifts_a_matched_file(repo: Path):
    (repo / "conf").mkdir()
    for name in ("a.env", "public.env"):
        (repo / "conf" / name).write_text("x")
    rules = {"edit": {"conf/*.env": "deny", "conf/public.env": "allow"}}
    config = Config.model_validate({"permission": {"rules": rules}})
    permissions = PermissionService(config, Bus())
    policy = build_policy(
        config, permissions, repo.as_posix(), "coder", None, "/tmp/t",
        confirm=lambda key, subject, absolute: permissions.evaluate(key, subject, "coder", absolute).action == "deny",
    )  # fmt: skip
    found = carved(policy)
    assert "conf/a.env" in found and "conf/public.env" not in found


def test_a_missing_protected_path_is_carved_out_by_its_first_missing_component(workspace: Path):
    policy = policy_for(workspace, {"edit": {"vault/keys/*": "deny"}})
    missing = {policy.shown(c.path): c.exists for c in policy.carves if not c.exists}
    assert missing == {".opencode.json": False, ".opencode": False, ".git": False, "vault": False}


def test_writable_folders_and_network_come_from_the_settings(repo: Path, home: Path):
    cache = home / ".cache" / "pip"
    cache.mkdir(parents=True)
    policy = policy_for(repo, {}, writable=[str(cache), "~/no-such"], network=True)
    assert policy.writable == (os.path.realpath(cache),)
    assert policy.network
    assert any("~/no-such" in note for note in policy.notes)


def test_bwrap_binds_carve_outs_after_the_writable_roots_and_pins_their_folders(repo: Path):
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "x.key").write_text("x")
    policy = policy_for(repo, {"edit": {"deep/er/x.key": "deny"}, "view": {"private/*": "deny"}})
    argv = bwrap_argv(policy, ["/bin/sh", "script.sh"])
    text = " ".join(argv)
    assert argv[-3:] == ["--", "/bin/sh", "script.sh"]
    assert "--cap-drop ALL" in text and "--unshare-net" in text and "--unshare-pid" in text
    root = repo.as_posix()
    assert text.index(f"--bind {root} {root}") < text.index(f"--bind {root}/deep {root}/deep")
    assert text.index(f"--bind {root}/deep/er {root}/deep/er") < text.index(f"--ro-bind {root}/deep/er/x.key")
    assert f"--tmpfs {root}/private --remount-ro {root}/private" in text


def test_the_macos_profile_denies_what_the_policy_carves_out(repo: Path):
    policy = policy_for(repo, {"edit": {"secrets/*": "deny"}, "view": {"private/*": "deny"}})
    profile = seatbelt_profile(policy)
    root = repo.as_posix()
    assert profile.startswith("(version 1)\n(deny default)\n")
    [hidden] = [line for line in profile.splitlines() if line.startswith("(deny file-read*")]
    assert f'(subpath "{root}/private")' in hidden and "/.ssh" in hidden
    write = profile.index("(allow file-write*")
    denied = profile.index("(deny file-write*")
    assert write < denied  # the later rule wins
    assert f'(subpath "{root}/secrets")' in profile[denied:]
    assert f'(subpath "{root}/.git/config")' in profile[denied:]
    assert "(allow network*)" not in profile
    assert "(allow network*)" in seatbelt_profile(policy_for(repo, {}, network=True))


def test_quotes_in_paths_are_escaped_in_the_profile(tmp_path: Path):
    odd = tmp_path / 'we"ird\\ws'
    odd.mkdir()
    profile = seatbelt_profile(policy_for(odd, {}))
    assert '(subpath "' + odd.as_posix().replace("\\", "\\\\").replace('"', '\\"') + '")' in profile
