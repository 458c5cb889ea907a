"""Put a file back as it was before the session changed it (the sidebar's revert).

The revert is one more change through ``apply_changes``: it takes the lock, checks the
rules (one that denies tool "revert" refuses it), writes atomically and records a new
history version. So a revert shows in the sidebar like any change, and can itself be
undone by reverting again. It is the user's own action: the front-end asks its own
yes/no question first and passes ``confirmed``, so the agent's permission question is
not asked again; without it, that question (with the diff as preview) is the
confirmation.
"""

from __future__ import annotations

from app.core.errors import ToolError
from app.store.models import FileChange
from app.tools.base import ToolContext
from app.tools.changes import AppliedFile, Change, ChangeSet, Snapshot, apply_changes

TOOL = "revert"


def session_change(ctx: ToolContext, path: str) -> FileChange:
    """The session tree's change to ``path``; ToolError when it never changed it."""
    for change in ctx.history.list_latest_session_files(ctx.session_id):
        if change.path == path:
            return change
    raise ToolError(f"{path} was not changed in this session: there is nothing to revert")


async def revert_file(ctx: ToolContext, path: str, *, confirmed: bool = False) -> AppliedFile:
    """Write the initial content of ``path`` back, with its mode: a deleted file or
    symlink comes back, a file the session created is removed."""
    change = session_change(ctx, path)
    target = ctx.workspace.lexical(path)  # the entry itself: a symlink is put back, never followed
    initial: bytes | None = None
    if not change.created and change.initial_link is None:
        # A binary file's exact bytes are kept beside its placeholder text.
        initial = change.initial_data if change.initial_data is not None else change.initial_content.encode("utf-8")
    wanted = Change(target, initial, mode=change.initial_mode, link=change.initial_link)

    def plan(snapshot: Snapshot) -> ChangeSet:
        state = snapshot[target]
        if (state.data, state.link) == (initial, wanted.link) and wanted.mode in (None, state.mode):
            raise ToolError(f"{path} already has its initial content: there is nothing to revert")
        if change.created:
            title = f"Remove {path}, which this session created"
        elif wanted.link is not None:
            title = f"Put back the symlink {path} -> {wanted.link}, as before this session"
        else:
            title = f"Revert {path} to its content before this session"
        return ChangeSet(changes=[wanted], title=title, ask_subject=path)

    applied = await apply_changes(ctx, TOOL, [target], plan, confirmed=confirmed)
    return applied[0]
