"""Undo, redo and rewind of whole turns (docs/undo.md): core, for every front-end.

``undo_turn`` takes back the session's latest turn not yet undone: every file it changed
(its sub-agents' changes included) goes back to what it held before the turn, as one
change through the change path (journal, locks, history, FileVersionCreated), and the
turn's messages are marked undone, so the model no longer sees them, and the todo list
goes back to what the last todowrite still seen wrote. ``rewind_to`` does the same for a
turn and every later one at once, as one change, and may take back only their files or
only their messages. ``redo_turn`` brings back what the last step took back, byte for
byte, with its messages (and its todo list). Nothing is deleted: the files' history
gains versions, the messages keep their rows.

Every step is all or nothing: under the change path's locks, every file must still be as
the turns left it (undo, rewind) or as the step left it (redo); a file changed since, by
anything else, refuses the whole step with one line naming it, before anything is
written. A file already as the step would leave it is left alone, so a step whose files
changed but whose turns a crash left unmarked completes when asked again.
A new prompt after an undo ends the redo (app/store/turns.py).

The caller makes sure no turn is running in the session (front-ends ask their loop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.errors import OpencodeError, ToolError
from app.llm.messages import text_of
from app.prompt.slash_commands import CommandCall
from app.runtime import Runtime
from app.store.turns import Content, Turn, TurnFile, UndoScope
from app.tools.changes import Change, ChangeSet, Snapshot, apply_changes
from app.tools.todo import latest_written

TOOL = "undo"
"""The permission key the change is judged under: deny rules (this key's, and the edit
and delete groups') still hold; nobody is asked, since the user asked for it."""

Effect = Literal["restored", "removed", "edited"]
Action = Literal["undo", "redo", "rewind"]
SCOPES: dict[str, UndoScope] = {"both": "both", "files": "files", "conversation": "conversation"}
"""What /rewind may take back of its turns, by the word typed after the turn's number."""
_SCOPE_WORDS = {"both": "files and conversation", "files": "files only", "conversation": "conversation only"}
_DONE = {"undo": "undone", "redo": "redone", "rewind": "rewound"}


class UndoError(OpencodeError):
    """Nothing to undo or redo, or a file changed since: nothing was changed."""


@dataclass(frozen=True)
class FileStep:
    path: str
    effect: Effect
    """What happened to the file: ``restored`` (it exists again), ``removed``, ``edited``."""


@dataclass(frozen=True)
class TurnStep:
    """What undo, redo or rewind did: the (earliest) turn's prompt (an undo puts it back
    in the input), each file it changed, how many turns and what of them."""

    action: Action
    session_id: str
    prompt: str
    files: list[FileStep]
    turns: int = 1
    scope: UndoScope = "both"

    def summary(self) -> str:
        """For a person: the turn's prompt, then a line per file."""
        if self.action == "rewind":
            plural = "" if self.turns == 1 else "s"
            lines = [f"Rewound {self.turns} turn{plural} ({_SCOPE_WORDS[self.scope]}), from: {self.prompt}"]
        else:
            done = "Undid" if self.action == "undo" else "Redid"
            count = "the turn" if self.turns == 1 else f"{self.turns} turns, from"
            lines = [f"{done} {count}: {self.prompt}"]
        lines += [f"  {item.effect} {item.path}" for item in self.files]
        return "\n".join(lines)


@dataclass(frozen=True)
class TurnEntry:
    """One turn as /rewind lists it: its number (what ``/rewind N`` takes) and prompt."""

    number: int
    prompt: str


async def undo_turn(runtime: Runtime, session_id: str) -> TurnStep:
    """Take back the latest turn of ``session_id`` not yet undone (see module doc)."""
    turn = runtime.store.turns.last_done(session_id)
    if turn is None:
        raise UndoError("Nothing to undo: this session has no turn left to take back")
    return await _take_back(runtime, [turn], "both", "undo")


def rewindable(runtime: Runtime, session_id: str) -> list[TurnEntry]:
    """The session's turns the model still sees, numbered from 1, oldest first."""
    prompts = {
        message.id: text_of(message.parts)
        for message in runtime.store.messages.list(session_id)
        if message.role == "user"
    }
    turns = runtime.store.turns.done(session_id)
    return [TurnEntry(number, prompts.get(turn.message_id, "")) for number, turn in enumerate(turns, start=1)]


async def rewind_to(runtime: Runtime, session_id: str, number: int, scope: UndoScope = "both") -> TurnStep:
    """Take back turn ``number`` (as ``rewindable`` numbers them) and every later one, in
    one step: their files, their messages, or both (``scope``)."""
    turns = runtime.store.turns.done(session_id)
    if not turns:
        raise UndoError("Nothing to rewind: this session has no turn left to take back")
    if not 1 <= number <= len(turns):
        raise UndoError(f"No turn {number}: this session's turns are 1 to {len(turns)} (/rewind lists them)")
    return await _take_back(runtime, turns[number - 1 :], scope, "rewind")


def parse_rewind(arguments: str) -> tuple[int | None, UndoScope]:
    """``/rewind [N] [both|files|conversation]``: the turn's number (None: list the turns)
    and what to take back; UndoError (one line) for anything else."""
    words = arguments.split()
    usage = "/rewind takes a turn's number and optionally files or conversation, e.g. /rewind 2 files"
    if not words:
        return None, "both"
    if not words[0].isdigit() or len(words) > 2 or (len(words) == 2 and words[1] not in SCOPES):
        raise UndoError(f"Cannot read {arguments.strip()!r}: {usage}")
    return int(words[0]), SCOPES[words[1]] if len(words) == 2 else "both"


async def _take_back(runtime: Runtime, turns: list[Turn], scope: UndoScope, action: Action) -> TurnStep:
    """Put ``turns`` (oldest first, the session's latest among them) back: files first
    (refused whole when one is not as the turns left it), then the marks."""
    _refuse_past_summary(runtime, turns[0])
    files = await _apply(runtime, turns, action) if scope != "conversation" else []
    runtime.store.turns.set_state(turns, "undone", scope)
    if scope != "files":
        runtime.store.messages.set_undone(_message_ids(runtime, turns), True)
    session_id = turns[0].session_id
    _sync_todos(runtime, session_id)
    return TurnStep(action, session_id, _prompt(runtime, turns[0]), files, len(turns), scope)


async def redo_turn(runtime: Runtime, session_id: str) -> TurnStep:
    """Bring back what the last undo or rewind of ``session_id`` took back (see module doc)."""
    turns = runtime.store.turns
    turn = turns.first_undone(session_id)
    if turn is None:
        raise UndoError(
            "Nothing to redo: no turn was undone since the last prompt (a new prompt ends what redo can bring back)"
        )
    group = turns.taken_back_with(turn)
    scope = turn.undo_scope or "both"
    files = await _apply(runtime, group, "redo") if scope != "conversation" else []
    turns.set_state(group, "done")
    if scope != "files":
        runtime.store.messages.set_undone(_message_ids(runtime, group), False)
    _sync_todos(runtime, session_id)
    return TurnStep("redo", session_id, _prompt(runtime, turn), files, len(group), scope)


def _sync_todos(runtime: Runtime, session_id: str) -> None:
    """The todo list follows the turns the model sees: the one the last todowrite of a
    turn still done wrote (front-ends are told through TodosUpdated when it changes)."""
    todos = latest_written(runtime.store.messages.list(session_id))
    if todos != runtime.store.todos.get(session_id):
        runtime.store.todos.replace(session_id, todos)


async def _apply(runtime: Runtime, turns: list[Turn], action: Action) -> list[FileStep]:
    """Put every file of ``turns`` back to its content before (undo, rewind) or after
    (redo) them, in one change set; refused whole when one file is not as the other step
    left it."""
    files = _combined(runtime, turns, action)
    if not files:
        return []
    ctx = runtime.context(turns[0].session_id)
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
        what = "the turn" if len(turns) == 1 else f"{len(turns)} turns"
        return ChangeSet(changes=changes, title=f"{action.capitalize()} {what} that changed {subject}", ask_subject=subject)

    try:
        await apply_changes(ctx, TOOL, list(targets.values()), plan, confirmed=True)
    except ToolError as err:  # a deny rule, an unwritable file: still nothing changed
        raise UndoError(f"Could not {action} the turn: {err}") from None
    return steps


def _combined(runtime: Runtime, turns: list[Turn], action: Action) -> list[TurnFile]:
    """Each path the turns changed, sorted, with what it held before the first of them
    to change it and after the last. Between two of them the path must have held what
    the earlier left (as undoing them one by one would require): else nothing is done."""
    merged: dict[str, TurnFile] = {}
    for turn in turns:
        for item in runtime.store.turns.files(turn):
            earlier = merged.get(item.path)
            if earlier is not None and not _same(earlier.after, item.before):
                raise UndoError(
                    f"{item.path} changed outside the agent between two of these turns: nothing was {_DONE[action]}; "
                    "take back fewer turns (choose a turn after that change)"
                )
            merged[item.path] = item if earlier is None else TurnFile(item.path, earlier.before, item.after)
    return [merged[path] for path in sorted(merged)]


def _ends(item: TurnFile, action: Action) -> tuple[Content, Content]:
    """(what the file must hold now, what it is to hold) for ``action``."""
    return (item.before, item.after) if action == "redo" else (item.after, item.before)


def _same(one: Content, other: Content) -> bool:
    """The same bytes, or the same symlink (modes aside)."""
    return (one.data, one.link) == (other.data, other.link)


def _effect(now: Content, wanted: Content) -> Effect:
    """What the step does to a path holding ``now``."""
    if wanted.data is None and wanted.link is None:
        return "removed"
    return "restored" if now.data is None and now.link is None else "edited"


def _changed_since(path: str, action: Action) -> str:
    if action != "redo":
        return (
            f"{path} changed since that turn (outside the agent): nothing was {_DONE[action]}; "
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


def _message_ids(runtime: Runtime, turns: list[Turn]) -> list[str]:
    """The turns' messages: each one's prompt and all that followed, up to the next turn's prompt."""
    ids = [message.id for message in runtime.store.messages.list(turns[0].session_id, include_undone=True)]
    taken: list[str] = []
    for turn in turns:
        start = ids.index(turn.message_id)
        following = runtime.store.turns.following(turn)
        end = ids.index(following.message_id) if following is not None else len(ids)
        taken += ids[start:end]
    return taken


def _prompt(runtime: Runtime, turn: Turn) -> str:
    message = runtime.store.messages.get(turn.message_id)
    return text_of(message.parts) if message is not None else ""


async def undo_command(call: CommandCall) -> str:
    """``/undo`` as a slash command (app.prompt.slash_commands): what was undone, for the user."""
    return (await undo_turn(_idle(call), call.session_id)).summary()


async def redo_command(call: CommandCall) -> str:
    """``/redo`` as a slash command: what was redone, for the user."""
    return (await redo_turn(_idle(call), call.session_id)).summary()


async def rewind_command(call: CommandCall) -> str:
    """``/rewind N [files|conversation]`` as a slash command: what was rewound; bare
    ``/rewind`` lists the turns by number."""
    number, scope = parse_rewind(call.arguments)
    runtime = _idle(call)
    if number is None:
        return turn_list(rewindable(runtime, call.session_id))
    return (await rewind_to(runtime, call.session_id, number, scope)).summary()


def turn_list(entries: list[TurnEntry]) -> str:
    """The turns as a person reads them, one line each (the prompt's first line)."""
    if not entries:
        return "Nothing to rewind: this session has no turn left to take back"
    lines = ["Turns (/rewind N takes back turn N and every later one; add files or conversation for only those):"]
    lines += [f"{entry.number:>4}. {first_line(entry.prompt)}" for entry in entries]
    return "\n".join(lines)


def first_line(prompt: str, width: int = 100) -> str:
    """A prompt's first line, cut to ``width`` characters."""
    line = prompt.strip().splitlines()[0] if prompt.strip() else "(empty prompt)"
    return line if len(line) <= width else line[: width - 1] + "…"


def _idle(call: CommandCall) -> Runtime:
    """The runtime of the call's loop, once no turn runs in the session."""
    if call.loop.is_running(call.session_id):
        raise UndoError("A turn is running in this session: cancel it or wait for it, then undo or redo")
    runtime: Runtime = call.loop.runtime
    return runtime
