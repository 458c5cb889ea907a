"""What an answer "for this session" covers, through the real runtime (SQLite store, bus,
permission service, the tools themselves): every effect the question showed, each on its
own for the file tools, and the whole command for bash; never an effect the user did not
see. Each case is one the user answers by a scripted reply, as in the TUI or ACP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.errors import PermissionDeniedError
from app.permission import PermissionReply, PermissionRequested
from app.tools.bash import BashTool
from app.tools.delete import DeleteTool
from app.tools.patch import PatchTool
from app.tools.view import ViewTool
from app.tools.write import WriteTool

SESSION = PermissionReply("allow_session")
DENY = PermissionReply("deny")
BOUND = 120.0


def interactive(make_runtime, rules: dict | None = None):
    """A runtime that asks a person, and a context in a new session of it."""
    config = {"lsp": {"python": {"disabled": True}}, "permission": {"rules": rules or {}}}
    runtime = make_runtime(policy="interactive", config=config)
    return runtime, runtime.context(runtime.store.sessions.create().id)


async def patch(ctx, body: str) -> None:
    await PatchTool().call({"patch": f"*** Begin Patch\n{body}*** End Patch\n", "allow_delete": True}, ctx)


async def write(ctx, name: str) -> None:
    await WriteTool().call({"filePath": name, "content": "x\n"}, ctx)


def add(*names: str) -> str:
    return "".join(f"*** Add File: {name}\n+{name}\n" for name in names)


# --- file tools: each effect the question showed ------------------------------------------


async def test_a_patch_of_two_files_allowed_for_the_session_covers_each_and_nothing_else(
    make_runtime, workspace: Path, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    await patch(ctx, add("a.txt", "b.txt"))
    await patch(ctx, "*** Update File: b.txt\n@@\n-b.txt\n+b2\n")  # b.txt alone: not asked
    await patch(ctx, "*** Update File: a.txt\n@@\n-a.txt\n+a2\n*** Update File: b.txt\n@@\n-b2\n+b3\n")
    assert len(answers.requests) == 1
    assert (workspace / "a.txt").read_text() == "a2\n" and (workspace / "b.txt").read_text() == "b3\n"

    with pytest.raises(PermissionDeniedError):
        await patch(ctx, add("c.txt"))
    assert [request.subject for request in answers.requests] == ["a.txt", "c.txt"]
    assert not (workspace / "c.txt").exists()
    assert {str(effect) for effect in answers.requests[0].effects} == {"write a.txt", "write b.txt"}


async def test_a_session_answer_to_writing_a_file_does_not_cover_deleting_it(
    make_runtime, workspace: Path, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY, DENY)
    await patch(ctx, add("a.txt"))
    with pytest.raises(PermissionDeniedError):
        await patch(ctx, "*** Delete File: a.txt\n")
    with pytest.raises(PermissionDeniedError):  # a move is a delete of its source
        await patch(ctx, "*** Update File: a.txt\n*** Move to: moved.txt\n@@\n-a.txt\n+a\n")
    assert len(answers.requests) == 3
    assert (workspace / "a.txt").read_text() == "a.txt\n" and not (workspace / "moved.txt").exists()


async def test_a_second_patch_in_the_asked_files_question_names_the_new_file(
    make_runtime, workspace: Path, permission_answers
):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    await patch(ctx, add("a.txt"))
    with pytest.raises(PermissionDeniedError):
        await patch(ctx, "*** Update File: a.txt\n@@\n-a.txt\n+b\n" + add("c.txt"))
    second = answers.requests[1]
    assert second.subject == "c.txt" and {str(e) for e in second.effects} == {"write a.txt", "write c.txt"}
    assert (workspace / "a.txt").read_text() == "a.txt\n"


async def test_a_folder_delete_allowed_for_the_session_does_not_cover_a_file_added_to_it_later(
    make_runtime, workspace: Path, permission_answers
):
    """The question listed the files in tmp/: the same call later, on a tmp/ holding one
    more file, is a question about more than was answered."""

    def fill(*names: str) -> None:
        (workspace / "tmp").mkdir()
        for name in names:
            (workspace / "tmp" / name).write_text(f"{name}\n")

    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    fill("a.txt", "b.txt")
    await DeleteTool().call({"path": "tmp"}, ctx)
    fill("a.txt", "b.txt")
    await DeleteTool().call({"path": "tmp"}, ctx)  # the same files: not asked
    assert len(answers.requests) == 1 and not (workspace / "tmp").exists()

    fill("a.txt", "b.txt", "secret.txt")
    with pytest.raises(PermissionDeniedError):
        await DeleteTool().call({"path": "tmp"}, ctx)
    assert len(answers.requests) == 2
    assert (workspace / "tmp" / "secret.txt").read_text() == "secret.txt\n"


@pytest.mark.parametrize(
    "name",
    ["a.txt ", "A.txt", "\u0430.txt", "a.txt\u200b", "a\u2024txt", "b/../A.txt"],
    ids=["trailing-space", "case", "cyrillic-a", "zero-width", "one-dot-leader", "dotdot-case"],
)
async def test_a_name_that_only_looks_like_the_allowed_one_is_asked_about(
    make_runtime, workspace: Path, permission_answers, name: str
):
    """On this (case-sensitive) file system each is another file: asked, never written
    on the strength of the answer for a.txt."""
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    (workspace / "b").mkdir()
    await write(ctx, "a.txt")
    with pytest.raises(PermissionDeniedError):
        await write(ctx, name)
    assert len(answers.requests) == 2
    assert sorted(p.name for p in workspace.iterdir() if not p.name.startswith(".")) == ["a.txt", "b"]


@pytest.mark.parametrize("name", ["./a.txt", "b/../a.txt", "b//../a.txt"])
async def test_another_spelling_of_the_same_file_is_the_same_effect(
    make_runtime, workspace: Path, permission_answers, name: str
):
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION)
    (workspace / "b").mkdir()
    await patch(ctx, add("a.txt"))
    await patch(ctx, f"*** Update File: {name}\n@@\n-a.txt\n+again\n")
    assert len(answers.requests) == 1 and (workspace / "a.txt").read_text() == "again\n"


async def test_of_two_parallel_calls_the_one_the_answer_does_not_cover_waits_for_its_own(
    make_runtime, workspace: Path
):
    """Two patches wait on their questions at once, `a.txt` and `a.txt ` (a trailing
    space); allowing the first for the session leaves the second waiting, and its own
    denial refuses it."""
    runtime, ctx = interactive(make_runtime)
    asked = runtime.bus.subscribe(PermissionRequested)
    calls = [asyncio.create_task(write(ctx, name)) for name in ("a.txt", "a.txt ")]
    waiting = {}
    while len(waiting) < 2:
        event = await asyncio.wait_for(asked.get(), BOUND)
        waiting[event.request.subject] = event.request_id
    assert runtime.permissions.reply(waiting["a.txt"], SESSION)
    await asyncio.wait_for(calls[0], BOUND)
    assert [event.request.subject for event in runtime.permissions.pending()] == ["a.txt "]
    assert runtime.permissions.reply(waiting["a.txt "], DENY)
    with pytest.raises(PermissionDeniedError):
        await asyncio.wait_for(calls[1], BOUND)
    assert (workspace / "a.txt").exists() and not (workspace / "a.txt ").exists()


# --- bash: the whole command ------------------------------------------------------------


async def test_a_command_allowed_for_the_session_runs_again_but_not_a_part_of_it_alone(
    make_runtime, workspace: Path, permission_answers
):
    (workspace / "a").write_text("a\n")
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    (workspace / "b").write_text("b\n")
    await BashTool().call({"command": "cat a && rm b"}, ctx)
    (workspace / "b").write_text("b\n")
    await BashTool().call({"command": "cat a && rm b"}, ctx)  # the same command: not asked
    assert len(answers.requests) == 1 and not (workspace / "b").exists()
    (workspace / "b").write_text("b\n")
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": "rm b"}, ctx)
    assert len(answers.requests) == 2 and (workspace / "b").exists()


async def test_a_command_allowed_for_the_session_does_not_carry_into_another_folder(
    make_runtime, workspace: Path, permission_answers
):
    """`rm b` was answered; `cd sub && rm b` deletes another file, though every part of it
    is either allowed by a rule (`cd *`) or was answered."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b").write_text("keep\n")
    (workspace / "b").write_text("b\n")
    runtime, ctx = interactive(make_runtime, {"bash": {"cd *": "allow"}})
    answers = permission_answers(runtime, SESSION, DENY)
    await BashTool().call({"command": "rm b"}, ctx)
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": "cd sub && rm b"}, ctx)
    assert len(answers.requests) == 2 and (workspace / "sub" / "b").read_text() == "keep\n"


async def test_the_same_command_reaching_a_file_it_did_not_reach_when_answered_asks_again(
    make_runtime, workspace: Path, permission_answers
):
    """`rm *.txt` was answered when a.txt and b.txt matched (each asked by a delete rule);
    with c.txt there too, the same command is a question about c.txt."""
    runtime, ctx = interactive(make_runtime, {"delete": {"*.txt": "ask"}})
    answers = permission_answers(runtime, SESSION, DENY)
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("x\n")
    await BashTool().call({"command": "rm *.txt"}, ctx)
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("x\n")
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": "rm *.txt"}, ctx)
    assert len(answers.requests) == 2 and (workspace / "c.txt").exists()
    assert {"delete a.txt", "delete b.txt"} <= {str(e) for e in answers.requests[0].effects}


async def test_a_command_a_rule_matches_as_a_whole_is_not_asked_again_once_allowed_for_the_session(
    make_runtime, workspace: Path, permission_answers
):
    """`git *` matches `git status; touch x` as a whole, which decides nothing (the part
    `touch x` asks); once the user allowed the command for the session, it is not asked
    again."""
    runtime, ctx = interactive(make_runtime, {"bash": {"git *": "allow"}})
    answers = permission_answers(runtime, SESSION, DENY)
    await BashTool().call({"command": "git --version; touch x"}, ctx)
    await BashTool().call({"command": "git --version; touch x"}, ctx)
    assert len(answers.requests) == 1


async def test_a_read_outside_allowed_for_the_session_does_not_let_a_command_delete_it(
    make_runtime, workspace: Path, tmp_path: Path, permission_answers
):
    """The user allowed the view tool to read a file outside the workspace
    (external_directory) for the session; deleting that file with bash is another
    effect, asked about."""
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    runtime, ctx = interactive(make_runtime, {"bash": {"rm *": "allow"}})
    answers = permission_answers(runtime, SESSION, DENY)
    await ViewTool().call({"filePath": str(outside)}, ctx)
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": f"rm {outside}"}, ctx)
    assert [request.tool for request in answers.requests] == ["external_directory", "bash"]
    assert outside.read_text() == "mine\n"


async def test_a_script_allowed_for_the_session_asks_again_once_it_runs_something_else(
    make_runtime, workspace: Path, permission_answers
):
    """`bash x.sh` was answered when x.sh echoed; x.sh now deletes a file: the command is
    the same text, but it runs a part the question did not show."""
    (workspace / "x.sh").write_text("echo hello\n")
    (workspace / "keep").write_text("keep\n")
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    await BashTool().call({"command": "bash x.sh"}, ctx)
    (workspace / "x.sh").write_text("rm keep\n")
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": "bash x.sh"}, ctx)
    assert len(answers.requests) == 2 and (workspace / "keep").read_text() == "keep\n"


async def test_a_listing_outside_allowed_for_the_session_is_not_a_search_of_every_file_in_it(
    make_runtime, tmp_path: Path, permission_answers
):
    """`ls /outside` allowed for the session (external_directory): the same listing runs
    again unasked, but `grep` over that folder reads each file's text, and asks."""
    from app.tools.grep import GrepTool
    from app.tools.ls import LsTool

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("token=42\n")
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    await LsTool().call({"path": str(outside)}, ctx)
    await LsTool().call({"path": str(outside)}, ctx)
    assert len(answers.requests) == 1
    with pytest.raises(PermissionDeniedError):
        await GrepTool().call({"pattern": "token", "path": str(outside)}, ctx)
    assert [request.scope for request in answers.requests] == ["ls", "grep"]


async def test_a_program_allowed_for_the_session_by_its_path_asks_again_once_it_is_another(
    make_runtime, workspace: Path, permission_answers
):
    """`./x keep` was answered with x a link to echo; x now links to rm: the same text runs
    another program, which the question did not show."""
    (workspace / "keep").write_text("keep\n")
    (workspace / "x").symlink_to("/bin/echo")
    runtime, ctx = interactive(make_runtime)
    answers = permission_answers(runtime, SESSION, DENY)
    await BashTool().call({"command": "./x keep"}, ctx)
    (workspace / "x").unlink()
    (workspace / "x").symlink_to("/bin/rm")
    with pytest.raises(PermissionDeniedError):
        await BashTool().call({"command": "./x keep"}, ctx)
    assert len(answers.requests) == 2 and (workspace / "keep").read_text() == "keep\n"


async def test_a_script_changed_while_its_question_is_open_is_not_run(make_runtime, workspace: Path):
    """The question about `bash x.sh` was asked while x.sh echoed; before the person
    answers, x.sh is rewritten to `rm keep`, which a rule denies: the approval covers what
    was asked, so nothing runs."""
    (workspace / "x.sh").write_text("echo hello\n")
    (workspace / "keep").write_text("keep\n")
    runtime, ctx = interactive(make_runtime, {"bash": {"rm *": "deny"}})
    asked = runtime.bus.subscribe(PermissionRequested)
    call = asyncio.create_task(BashTool().call({"command": "bash x.sh"}, ctx))
    event = await asyncio.wait_for(asked.get(), BOUND)
    (workspace / "x.sh").write_text("rm keep\n")
    runtime.permissions.reply(event.request_id, PermissionReply("allow_once"))
    with pytest.raises(PermissionDeniedError, match=r'forbid "rm keep".*changed while the question was open'):
        await asyncio.wait_for(call, BOUND)
    assert (workspace / "keep").read_text() == "keep\n"


async def test_a_script_that_does_more_after_its_question_was_asked_is_not_run(make_runtime, workspace: Path):
    (workspace / "x.sh").write_text("echo hello\n")
    (workspace / "keep").write_text("keep\n")
    runtime, ctx = interactive(make_runtime)
    asked = runtime.bus.subscribe(PermissionRequested)
    call = asyncio.create_task(BashTool().call({"command": "bash x.sh"}, ctx))
    event = await asyncio.wait_for(asked.get(), BOUND)
    (workspace / "x.sh").write_text("echo hello\nrm keep\n")
    runtime.permissions.reply(event.request_id, PermissionReply("allow_session"))
    with pytest.raises(PermissionDeniedError, match=r"changed while the question was open \(execute rm keep"):
        await asyncio.wait_for(call, BOUND)
    assert (workspace / "keep").read_text() == "keep\n"
