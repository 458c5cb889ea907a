"""Undo and redo of a whole turn (docs/undo.md): core, for every front-end.

``undo_turn`` takes back the session's latest turn not yet undone: every file it changed
(its sub-agents' changes included) goes back to what it held before the turn, as one
change through the change path (journal, locks, history, FileVersionCreated), and the
turn's messages are marked undone, so the model no longer sees them, and the todo list
goes back to what the last todowrite still seen wrote. ``redo_turn`` re-applies the last
turn undone, byte for byte, and brings its messages (and its todo list) back. Nothing
is deleted: the files' history gains versions, the messages keep their rows.

Both are all or nothing: under the change path's locks, every file must still be as the
turn left it (undo) or as the undo left it (redo); a file changed since, by anything
else, refuses the whole step with one line naming it, before anything is written. A file
already as the step would leave it is left alone, so a step whose files changed but
whose turn a crash left unmarked completes when asked again.
A new prompt after an undo ends the redo (app/store/turns.py).

The caller makes sure no turn is running in the session (front-ends ask their loop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.errors import OpencodeError, ToolError
from app.llm.messages import text_of
from app.runtime import Runtime
from app.slash_commands import CommandCall
from app.store.turns import Content, Turn, TurnFile
from app.tools.changes import Change, ChangeSet, Snapshot, apply_changes
from app.tools.todo import latest_written

TOOL = "undo"
"""The permission key the change is judged under: deny rules (this key's, and the edit
and delete groups') still hold; nobody is asked, since the user asked for it."""

Effect = Literal["restored", "removed", "edited"]


class UndoError(OpencodeError):
    """Nothing to undo or redo, or a file changed since: nothing was changed."""


@dataclass(frozen=True)
class FileStep:
    path: str
    effect: Effect
    """What happened to the file: ``restored`` (it exists again), ``removed``, ``edited``."""


@dataclass(frozen=True)
class TurnStep:
    """What undo or redo did: the turn's prompt (an undo puts it back in the input), and
    each file it changed."""

    action: Literal["undo", "redo"]
    session_id: str
    prompt: str
    files: list[FileStep]

    def summary(self) -> str:
        """For a person: the turn's prompt, then a line per file."""
        done = "Undid" if self.action == "undo" else "Redid"
        lines = [f"{done} the turn: {self.prompt}"]
        lines += [f"  {item.effect} {item.path}" for item in self.files]
        return "\n".join(lines)


async def undo_turn(runtime: Runtime, session_id: str) -> TurnStep:
    """Take back the latest turn of ``session_id`` not yet undone (see module doc)."""
    turns = runtime.store.turns
    turn = turns.last_done(session_id)
    if turn is None:
        raise UndoError("Nothing to undo: this session has no turn left to take back")
    _refuse_past_summary(runtime, turn)
    files = await _apply(runtime, turn, "undo")
    turns.set_state(turn, "undone")
    runtime.store.messages.set_undone(_message_ids(runtime, turn), True)
    _sync_todos(runtime, session_id)
    return TurnStep("undo", session_id, _prompt(runtime, turn), files)


async def redo_turn(runtime: Runtime, session_id: str) -> TurnStep:
    """Re-apply the last turn undone in ``session_id`` (see module doc)."""
    turns = runtime.store.turns
    turn = turns.first_undone(session_id)
    if turn is None:
        raise UndoError(
            "Nothing to redo: no turn was undone since the last prompt (a new prompt ends what redo can bring back)"
        )
    files = await _apply(runtime, turn, "redo")
    turns.set_state(turn, "done")
    runtime.store.messages.set_undone(_message_ids(runtime, turn), False)
    _sync_todos(runtime, session_id)
    return TurnStep("redo", session_id, _prompt(runtime, turn), files)


def _sync_todos(runtime: Runtime, session_id: str) -> None:
    """The todo list follows the turns the model sees: the one the last todowrite of a
    turn still done wrote (front-ends are told through TodosUpdated when it changes)."""
    todos = latest_written(runtime.store.messages.list(session_id))
    if todos != runtime.store.todos.get(session_id):
        runtime.store.todos.replace(session_id, todos)


async def _apply(runtime: Runtime, turn: Turn, action: Literal["undo", "redo"]) -> list[FileStep]:
    """Put every file of the turn back to its content before (undo) or after (redo) it,
    in one change set; refused whole when one file is not as the other step left it."""
    files = runtime.store.turns.files(turn)
    if not files:
        return []
    ctx = runtime.context(turn.session_id)
    # The entries themselves: a symlink the turn removed comes back as a symlink, and one
    # there now is never followed to its target.
    targets = {item.path: ctx.workspace.lexical(item.path) for item in files}

    steps: list[FileStep] = []

    def plan(snapshot: Snapshot) -> ChangeSet:
        changes = []
        steps.clear()  # the change path may plan again after reading the files again
        for item in files:
            expected, wanted = _ends(item, action)
            state = snapshot[targets[item.path]]
            found = Content(state.data, state.mode, state.link)
            steps.append(FileStep(item.path, _effect(expected, wanted)))
            if _same(found, wanted) and wanted.mode in (None, found.mode):
                continue  # already so: a step a crash cut short before the turn was marked, or a no-op
            if not _same(found, expected):  # a mode changed since is put back, content is not overwritten
                raise UndoError(_changed_since(item.path, action))
            changes.append(Change(targets[item.path], wanted.data, mode=wanted.mode, link=wanted.link))
        subject = files[0].path if len(files) == 1 else f"{len(files)} files"
        return ChangeSet(changes=changes, title=f"{action.capitalize()} the turn that changed {subject}", ask_subject=subject)

    try:
        await apply_changes(ctx, TOOL, list(targets.values()), plan, confirmed=True)
    except ToolError as err:  # a deny rule, an unwritable file: still nothing changed
        raise UndoError(f"Could not {action} the turn: {err}") from None
    return steps


def _ends(item: TurnFile, action: str) -> tuple[Content, Content]:
    """(what the file must hold now, what it is to hold) for ``action``."""
    return (item.after, item.before) if action == "undo" else (item.before, item.after)


def _same(one: Content, other: Content) -> bool:
    """The same bytes, or the same symlink (modes aside)."""
    return (one.data, one.link) == (other.data, other.link)


def _effect(now: Content, wanted: Content) -> Effect:
    """What the step does to a path holding ``now``."""
    if wanted.data is None and wanted.link is None:
        return "removed"
    return "restored" if now.data is None and now.link is None else "edited"


def _changed_since(path: str, action: str) -> str:
    if action == "undo":
        return (
            f"{path} changed since that turn (outside the agent): nothing was undone; "
            "put it back as the turn left it, or ask for the change you want in a new prompt"
        )
    return (
        f"{path} changed since the undo: nothing was redone; "
        "put it back as the undo left it, or ask for the change you want in a new prompt"
    )


def _refuse_past_summary(runtime: Runtime, turn: Turn) -> None:
    """A compaction summary made during or after the turn tells the model about it:
    taking the turn back would leave the summary saying otherwise."""
    session = runtime.store.sessions.get(turn.session_id)
    if session is None or session.summary_message_id is None:
        return
    order = [message.id for message in runtime.store.messages.list(turn.session_id, include_undone=True)]
    if session.summary_message_id in order and order.index(session.summary_message_id) > order.index(turn.message_id):
        raise UndoError(
            "Cannot undo a turn from before the conversation was compacted: its summary already holds it; "
            "revert files one by one from the sidebar instead"
        )


def _message_ids(runtime: Runtime, turn: Turn) -> list[str]:
    """The turn's messages: its prompt and all that followed, up to the next turn's prompt."""
    ids = [message.id for message in runtime.store.messages.list(turn.session_id, include_undone=True)]
    start = ids.index(turn.message_id)
    following = runtime.store.turns.following(turn)
    end = ids.index(following.message_id) if following is not None else len(ids)
    return ids[start:end]


def _prompt(runtime: Runtime, turn: Turn) -> str:
    message = runtime.store.messages.get(turn.message_id)
    return text_of(message.parts) if message is not None else ""


async def undo_command(call: CommandCall) -> str:
    """``/undo`` as a slash command (app.slash_commands): what was undone, for the user."""
    return (await undo_turn(_idle(call), call.session_id)).summary()


async def redo_command(call: CommandCall) -> str:
    """``/redo`` as a slash command: what was redone, for the user."""
    return (await redo_turn(_idle(call), call.session_id)).summary()


def _idle(call: CommandCall) -> Runtime:
    """The runtime of the call's loop, once no turn runs in the session."""
    if call.loop.is_running(call.session_id):
        raise UndoError("A turn is running in this session: cancel it or wait for it, then undo or redo")
    runtime: Runtime = call.loop.runtime
    return runtime
