"""The multiedit tool: several edits to one file, all or nothing.

The edits run in order on an in-memory draft (the edit tool's engine), so each one
sees the text the previous ones left; only when every edit applies is the result
written, after one permission question showing the combined diff.
"""

from __future__ import annotations

from pydantic import Field

from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.diagnostics import with_lsp_errors
from app.tools.edit import EditItem, edit_file, fuzzy_note
from app.tools.whole_file import FilePath, change_metadata, target_path, unchanged_metadata


class MultiEditParams(ToolParams):
    filePath: FilePath
    edits: list[EditItem] = Field(
        min_length=1, description="The edits to apply in order, each {oldString, newString, replaceAll?}"
    )


class MultiEditTool(Tool):
    name = "multiedit"
    params = MultiEditParams
    description = tool_description("multiedit")

    async def run(self, params: MultiEditParams, ctx: ToolContext) -> ToolResult:
        path = target_path(ctx, params.filePath)
        edits = _count(len(params.edits))
        applied, plan = await edit_file(
            ctx, self.name, path, params.edits, title=f"Apply {edits} to", numbered=True
        )
        strategies = plan.strategies
        if applied is None:
            rel = ctx.workspace.relative(path)
            output = f"Applied {edits} to {rel}: together they leave it as it was; nothing was written."
            return ToolResult(output, {**unchanged_metadata(rel), "strategies": strategies}, title=rel)
        notes = [
            f"edit {index} {note}"
            for index, (strategy, fitted) in enumerate(zip(strategies, plan.notes, strict=True), start=1)
            if (note := fuzzy_note(strategy, fitted))
        ]
        output = f"Applied {edits} to {applied.path}." + (f" ({'; '.join(notes)})" if notes else "")
        result = ToolResult(
            output, {**change_metadata(applied), "strategies": strategies}, title=applied.path
        )
        return await with_lsp_errors(ctx, result, path)


def _count(edits: int) -> str:
    return "1 edit" if edits == 1 else f"{edits} edits"
