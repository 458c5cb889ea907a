"""The multiedit tool: several edits to one file, all or nothing.

The edits run in order on an in-memory draft (the edit tool's engine), so each one
sees the text the previous ones left; only when every edit applies is the result
written, after one permission question showing the combined diff.
"""

from __future__ import annotations

from pydantic import Field

from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.diagnostics import with_lsp_errors
from app.tools.edit import EditItem, edit_file, fuzzy_note
from app.tools.whole_file import FilePath, change_metadata, target_path, unchanged_metadata

DESCRIPTION = """Make several edits to one file in one call: all of them are applied, or none.

WHEN TO USE
- Several changes to the same file (renaming in a few places, changing a function and
  its callers below it). For one change, edit is enough; for different files, one call
  per file.

HOW TO USE
- Read the file with view first; the call is refused if you have not read it in this
  session or it changed on disk since.
- filePath: the file, relative to the workspace root or absolute (inside it).
- edits: a list of {oldString, newString, replaceAll?}, each exactly as for the edit
  tool. They are applied in order, each to the text the previous ones produced.
- To create a file, give the first edit an empty oldString: its newString becomes the
  content, and the later edits apply to it.

LIMITATIONS
- If any edit fails (oldString not found, found several times, identical strings), no
  edit is written; the error starts with "edit i of n" (counting from 1) and says why.
- Text files only; paths outside the workspace are refused.

TIPS
- Plan the edits in order: an edit must match the text as the earlier edits left it, so
  do not reuse an oldString an earlier edit has already changed.
- When the result says a fuzzy strategy was used for an edit, view those lines to check.
"""


class MultiEditParams(ToolParams):
    filePath: FilePath
    edits: list[EditItem] = Field(
        min_length=1, description="The edits to apply in order, each {oldString, newString, replaceAll?}"
    )


class MultiEditTool(Tool):
    name = "multiedit"
    params = MultiEditParams
    description = DESCRIPTION

    async def run(self, params: MultiEditParams, ctx: ToolContext) -> ToolResult:
        path = target_path(ctx, params.filePath)
        edits = _count(len(params.edits))
        applied, strategies = await edit_file(
            ctx, self.name, path, params.edits, title=f"Apply {edits} to", numbered=True
        )
        if applied is None:
            rel = ctx.workspace.relative(path)
            output = f"Applied {edits} to {rel}: together they leave it as it was; nothing was written."
            return ToolResult(output, {**unchanged_metadata(rel), "strategies": strategies}, title=rel)
        notes = [
            f"edit {index} {note}"
            for index, strategy in enumerate(strategies, start=1)
            if (note := fuzzy_note(strategy))
        ]
        output = f"Applied {edits} to {applied.path}." + (f" ({'; '.join(notes)})" if notes else "")
        result = ToolResult(output, {**change_metadata(applied), "strategies": strategies}, title=applied.path)
        return await with_lsp_errors(ctx, result, path)


def _count(edits: int) -> str:
    return "1 edit" if edits == 1 else f"{edits} edits"
