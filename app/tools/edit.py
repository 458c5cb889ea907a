"""The edit tool: replace one piece of a file (docs/specs/001-edit.md), through the replacer cascade.

The engine here also serves multiedit: a list of edits is applied in order to an
in-memory draft of the file, and only the final draft goes through the change path,
so a failing edit leaves the file untouched. The draft is the file's text as it is on
disk (BOM and line endings included): `apply_edit` matches on "\\n" text and changes
only the replaced text, so every other line keeps its own ending. A fuzzy match gets
the change the model asked for fitted to the text found (`adapt=True`: re-indented,
the file's own context kept), and the result says how it was fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import Field

from app.core.errors import ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.changes import AppliedFile, Change, ChangeSet, FileState, Snapshot, apply_changes
from app.tools.descriptions import tool_description
from app.tools.diagnostics import with_lsp_errors
from app.tools.suggest import similar_names
from app.tools.text.replace import EditMatchError, ReplaceOutcome, apply_edit
from app.tools.whole_file import (
    FilePath,
    change_metadata,
    new_text_file,
    refuse_directory,
    require_text,
    target_path,
    unchanged_metadata,
)

OldString = Annotated[
    str,
    Field(description="The exact text to replace, including indentation; empty to create a new file"),
]
NewString = Annotated[str, Field(description="The text to replace it with (must differ from oldString)")]
ReplaceAll = Annotated[
    bool, Field(description="Replace every occurrence of oldString instead of exactly one (default false)")
]

EXACT = "simple"
"""The replacer that matches oldString byte for byte; every other one is fuzzy."""
CREATE = "create"
"""The strategy reported for an edit with an empty oldString, which created the file."""


class EditItem(ToolParams):
    """One replacement in the file: oldString becomes newString (each entry of multiedit's edits)."""

    oldString: OldString
    newString: NewString
    replaceAll: ReplaceAll = False


class EditParams(ToolParams):
    filePath: FilePath
    oldString: OldString
    newString: NewString
    replaceAll: ReplaceAll = False


def apply_item(draft: str | None, state: FileState, item: EditItem) -> ReplaceOutcome:
    """One edit on the draft (the file's decoded text; None: the file does not exist yet):
    the new draft, the strategy that matched and the notes on fitting the change to
    the text found. Raises a ToolError the model can act on."""
    require_text("newString", item.newString)
    if item.oldString == item.newString:
        raise EditMatchError("identical")
    if not item.oldString:
        if draft is not None:
            raise ToolError(
                f"oldString cannot be empty on an existing file: {state.rel}; give the text to replace, "
                "or use the write tool to replace the whole file"
            )
        created = new_text_file(state, item.newString)
        return ReplaceOutcome(created.render(created.text).decode("utf-8"), CREATE)
    if draft is None:
        raise missing_file_error(state)
    return apply_edit(draft, item.oldString, item.newString, item.replaceAll, adapt=True)


def missing_file_error(state: FileState) -> ToolError:
    """Not found, with the names in the same folder that look like a typo of it."""
    names = similar_names(state.path.parent, state.path.name)
    hint = ", ".join(PurePosixPath(state.rel).with_name(name).as_posix() for name in names)
    did_you_mean = f" Did you mean {hint}?" if hint else ""
    return ToolError(
        f"File {state.rel} not found.{did_you_mean} Check the path, or create the file with the write tool"
    )


class FileEdits:
    """The plan for apply_changes: the edits, in order, on one file. Remembers the
    strategy of each edit and the notes on fitting it, for the result. `numbered` prefixes an edit's error with
    "edit i of n" (multiedit) so the model knows which one to fix."""

    def __init__(self, path: Path, items: Sequence[EditItem], *, title: str, numbered: bool) -> None:
        self.path = path
        self.items = items
        self.title = title
        self.numbered = numbered
        self.strategies: list[str] = []
        self.notes: list[tuple[str, ...]] = []

    def __call__(self, snapshot: Snapshot) -> ChangeSet:
        state = snapshot[self.path]
        refuse_directory(state)
        # text_file() refuses binary and non-UTF-8 content before anything is matched.
        draft = state.text_file().raw.decode("utf-8") if state.exists else None
        outcomes = []
        for index, item in enumerate(self.items, start=1):
            try:
                outcome = apply_item(draft, state, item)
            except ToolError as err:
                if not self.numbered:
                    raise
                raise ToolError(f"edit {index} of {len(self.items)}: {err}") from err
            draft = outcome.content
            outcomes.append(outcome)
        self.strategies = [outcome.strategy for outcome in outcomes]
        self.notes = [outcome.notes for outcome in outcomes]
        assert draft is not None  # apply_item returns a draft or raises
        data = draft.encode("utf-8")
        # A fuzzy match may already read as newString: the model's intent holds, so this
        # succeeds with nothing to ask, write or record (OpenCode applies it too).
        changes = [] if data == state.data else [Change(self.path, data)]
        return ChangeSet(changes, title=f"{self.title} {state.rel}", ask_subject=state.rel)


async def edit_file(
    ctx: ToolContext, tool: str, path: Path, items: Sequence[EditItem], *, title: str, numbered: bool
) -> tuple[AppliedFile | None, FileEdits]:
    """Apply `items` to the file at `path` (from target_path) through the change path:
    the applied change (None when the edits leave the file exactly as it was, so nothing
    was written) and the plan, which holds each edit's strategy and notes. Nothing is
    written unless every edit applies."""
    plan = FileEdits(path, items, title=title, numbered=numbered)
    applied = await apply_changes(ctx, tool, [path], plan, require_read=[path], reads=[path])
    return (applied[0] if applied else None), plan


def fuzzy_note(strategy: str, notes: Sequence[str] = ()) -> str:
    """Tells the model to look again when the match was not exact, and how the change
    was fitted to the text found (empty when the match was exact)."""
    if strategy in (EXACT, CREATE) and not notes:
        return ""
    said = [] if strategy in (EXACT, CREATE) else [f"matched with the {strategy} strategy: check the result"]
    return "; ".join([*said, *notes])


class EditTool(Tool):
    name = "edit"
    params = EditParams
    description = tool_description("edit")

    async def run(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        path = target_path(ctx, params.filePath)
        if params.oldString == params.newString:  # spec 001 checks this before the file
            raise EditMatchError("identical")
        item = EditItem(oldString=params.oldString, newString=params.newString, replaceAll=params.replaceAll)
        applied, plan = await edit_file(ctx, self.name, path, [item], title="Edit", numbered=False)
        [strategy], [notes] = plan.strategies, plan.notes
        if applied is None:
            rel = ctx.workspace.relative(path)
            output = (
                f"No change needed: {rel} already reads as newString there (matched with the {strategy} "
                "strategy); nothing was written."
            )
            return ToolResult(output, {**unchanged_metadata(rel), "strategy": strategy}, title=rel)
        note = fuzzy_note(strategy, notes)
        output = "Edit applied successfully." + (f" ({note})" if note else "")
        metadata: dict[str, Any] = {**change_metadata(applied), "strategy": strategy}
        return await with_lsp_errors(ctx, ToolResult(output, metadata, title=applied.path), path)
