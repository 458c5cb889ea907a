"""Rule keys cover effects, not tools: with the attack config, an `edit` deny on
`secrets/*` holds against every tool that changes content there, and a `delete` deny on
`*.go` against every way a file disappears, under --yes too (ask becomes allow, deny holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bus import Bus
from app.config import Config
from app.permission import PermissionService
from app.permission.effects import Effect
from tests.permission.attack import GUARDED, attack_config, call, opencode_tool, plant, snapshot


def patch(*lines: str) -> dict[str, object]:
    return {"patch": "\n".join(["*** Begin Patch", *lines, "*** End Patch"]), "allow_delete": True}


@pytest.fixture
def runtime(make_runtime, workspace: Path):
    plant(workspace)
    (workspace / "secrets" / "link.txt").symlink_to("key.txt")
    (workspace / "alias.txt").symlink_to("secrets/key.txt")
    return make_runtime("headless-yes", attack_config())


KEY = "secrets/key.txt"
ATTACKS = {
    "write over it": ("write", {"filePath": KEY, "content": "pwned\n"}, "write secrets/key.txt"),
    "write a new file there": ("write", {"filePath": "secrets/new.txt", "content": "x\n"}, "write secrets/new.txt"),
    "write through a link to it": ("write", {"filePath": "alias.txt", "content": "pwned\n"}, "write secrets/key.txt"),
    "write a dotted spelling": (
        "write", {"filePath": "./secrets/../secrets//key.txt", "content": "pwned\n"}, "write secrets/key.txt"
    ),
    "edit": ("edit", {"filePath": KEY, "oldString": "s3cr3t", "newString": "pwned"}, "write secrets/key.txt"),
    "multiedit": (
        "multiedit",
        {"filePath": KEY, "edits": [{"oldString": "s3cr3t", "newString": "pwned"}]},
        "write secrets/key.txt",
    ),
    "patch Update": ("patch", patch(f"*** Update File: {KEY}", "@@", "-s3cr3t", "+pwned"), "write secrets/key.txt"),
    "patch Add File there": ("patch", patch("*** Add File: secrets/new.txt", "+x"), "write secrets/new.txt"),
    "patch Move into it": (
        "patch", patch("*** Update File: notes.txt", "*** Move to: secrets/notes.txt"), "write secrets/notes.txt"
    ),
    "patch Move it away": (
        "patch", patch(f"*** Update File: {KEY}", "*** Move to: public.txt"), "delete on secrets/key.txt"
    ),
    "patch Delete File of it": ("patch", patch(f"*** Delete File: {KEY}"), "delete on secrets/key.txt"),
    "delete it": ("delete", {"path": KEY}, "delete on secrets/key.txt"),
    "delete its folder": ("delete", {"path": "secrets"}, "delete on secrets/key.txt"),
    "delete a .go file": ("delete", {"path": "main.go"}, "delete on main.go"),
    "patch Delete File of a .go file": ("patch", patch("*** Delete File: main.go"), "delete on main.go"),
    "patch Move a .go file away": (
        "patch", patch("*** Update File: main.go", "*** Move to: main.txt"), "delete on main.go"
    ),
    "patch Move a .go file away, changing it": (
        "patch", patch("*** Update File: main.go", "*** Move to: main.txt", "@@", "-package main", "+package x"),
        "delete on main.go",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "effect"), ATTACKS.values(), ids=ATTACKS.keys())
async def test_every_tool_reaching_a_denied_effect_is_refused_under_yes(runtime, workspace, tool, arguments, effect):
    before = snapshot(workspace)
    output = await call(runtime, tool, arguments, read=(KEY, "main.go", "notes.txt", "alias.txt"))
    output = output.replace('\\"', '"')  # patch answers in JSON
    assert output.startswith("ERROR: ") and "Permission denied" in output, output
    kind, _, target = effect.replace(" on ", " ").partition(" ")
    assert f"forbid {kind} on {target}" in output
    assert 'rule "secrets/*"' in output or 'rule "*.go"' in output  # the rule is named
    assert snapshot(workspace) == before
    assert not (workspace / "secrets" / "new.txt").exists() and not (workspace / "public.txt").exists()


async def test_a_change_the_rules_do_not_deny_still_goes_through(runtime, workspace):
    output = await call(runtime, "write", {"filePath": "notes.txt", "content": "fine\n"}, read=("notes.txt",))
    assert not output.startswith("ERROR"), output
    assert (workspace / "notes.txt").read_text() == "fine\n"


async def test_the_tool_s_own_allow_does_not_lift_a_group_deny(make_runtime, workspace):
    plant(workspace)
    rules = {"write": "allow", "patch": "allow", "edit": {"secrets/*": "deny"}, "delete": {"*.go": "deny"}}
    runtime = make_runtime("headless-yes", attack_config(rules))
    output = await call(runtime, "write", {"filePath": KEY, "content": "x\n"}, read=(KEY,))
    assert 'forbid write on secrets/key.txt (edit rule "secrets/*")' in output
    output = await call(runtime, "patch", patch("*** Update File: main.go", "*** Move to: m.txt"))
    assert 'forbid delete on main.go (delete rule \\"*.go\\")' in output
    assert snapshot(workspace) == {rel: text.encode() for rel, text in sorted(GUARDED.items())}


async def test_a_group_allow_lets_every_tool_of_the_group_through(make_runtime, workspace):
    """A group key's rule counts for every tool of the group: `edit: allow` allows write too."""
    plant(workspace)
    runtime = make_runtime("headless", attack_config({"edit": {"notes.txt": "allow"}}))
    output = await call(runtime, "write", {"filePath": "notes.txt", "content": "new\n"}, read=("notes.txt",))
    assert not output.startswith("ERROR"), output
    output = await call(runtime, "write", {"filePath": "other.txt", "content": "x\n"})
    assert "needs approval" in output  # the default still asks, and headless without --yes refuses


def test_opencode_tool_yes_refuses_the_write_and_the_move_in_a_real_process(workspace):
    plant(workspace)
    (workspace / ".opencode.json").write_text(__import__("json").dumps(attack_config()))
    answer = opencode_tool(workspace, "write", {"filePath": "secrets/new.txt", "content": "x\n"})
    assert answer["ok"] is False and 'forbid write on secrets/new.txt (edit rule "secrets/*")' in answer["output"]
    answer = opencode_tool(workspace, "patch", patch("*** Update File: main.go", "*** Move to: main.txt"))
    assert answer["ok"] is False and 'forbid delete on main.go (delete rule \\"*.go\\")' in answer["output"]
    assert snapshot(workspace) == {
        ".opencode.json": (workspace / ".opencode.json").read_bytes(),
        **{rel: text.encode() for rel, text in GUARDED.items()},
    }


@pytest.mark.parametrize(
    ("rules", "tool", "effect", "expected"),
    [
        # Deny wins across keys, however specific the other key's allow.
        ({"write": {"secrets/key.txt": "allow"}, "edit": {"secrets/*": "deny"}}, "write", ("write", "secrets/key.txt"),
         'deny (edit rule "secrets/*")'),
        # Within one key the most specific pattern still wins.
        ({"edit": {"secrets/*": "deny", "secrets/public.txt": "allow"}}, "patch", ("write", "secrets/public.txt"),
         'allow (edit rule "secrets/public.txt")'),
        # A group key without a matching pattern says nothing: the tool's own rule decides.
        ({"write": {"*": "allow"}, "edit": {"secrets/*": "deny"}}, "write", ("write", "src/a.py"),
         'allow (write rule "*")'),
        # Across keys, ask beats allow.
        ({"multiedit": "allow", "edit": {"*.lock": "ask"}}, "multiedit", ("write", "uv.lock"), 'ask (edit rule "*.lock")'),
        # An edit deny holds for removals; an edit ask does not.
        ({"delete": "allow", "edit": {"secrets/*": "deny", "*.md": "ask"}}, "delete", ("delete", "secrets/k"),
         'deny (edit rule "secrets/*")'),
        ({"delete": "allow", "edit": {"*.md": "ask"}}, "delete", ("delete", "README.md"), 'allow (delete rule "*")'),
        # Rules for every tool count for every effect.
        ({"*": {"*.env": "deny"}, "edit": "allow"}, "write", ("write", ".env"), 'deny (rule "*.env" for every tool)'),
        # A tool outside the group (the sidebar's revert) gets the group's deny, not its allow.
        ({"edit": "allow"}, "revert", ("write", "a.txt"), "ask (default for revert)"),
        ({"edit": {"a.txt": "deny"}}, "revert", ("write", "a.txt"), 'deny (edit rule "a.txt")'),
        # Nothing matches: the tool's default.
        ({}, "write", ("write", "x"), "ask (default for write)"),
    ],
)  # fmt: skip
def test_how_an_effect_is_judged_across_keys(rules, tool, effect, expected):
    service = PermissionService(Config.model_validate({"permission": {"rules": rules}}), Bus())
    [judgement] = service.judge(tool, [Effect(*effect)], "coder")
    assert judgement.line() == f"{effect[0]} {effect[1]}: {expected}"
