"""Put a file back as it was before the session changed it (the sidebar's revert).

The revert is one more change through ``apply_changes``: it takes the lock, asks the
permission question (tool "revert", with the diff as preview: that question is the
user's confirmation), writes atomically and records a new history version. So a revert
shows in the sidebar like any change, and can itself be undone by reverting again.
"""

from __future__ import annotations

from app.errors import ToolError
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


async def revert_file(ctx: ToolContext, path: str) -> AppliedFile:
    """Write the initial content of ``path`` back (a deleted file comes back).

    History cannot tell a file the session created from one that was empty before, so
    an empty initial content gives an empty file rather than a deletion: removing an
    empty ``__init__.py`` would do more harm than leaving an empty new file.
    """
    change = session_change(ctx, path)
    target = ctx.workspace.resolve_for_write(path)
    # A binary file's exact bytes are kept beside its placeholder text.
    initial = change.initial_data if change.initial_data is not None else change.initial_content.encode("utf-8")

    def plan(snapshot: Snapshot) -> ChangeSet:
        if snapshot[target].data == initial:
            raise ToolError(f"{path} already has its initial content: there is nothing to revert")
        return ChangeSet(
            changes=[Change(target, initial)],
            title=f"Revert {path} to its content before this session",
            ask_subject=path,
        )

    applied = await apply_changes(ctx, TOOL, [target], plan)
    return applied[0]
