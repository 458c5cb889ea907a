"""The write tool: create a file, or replace an existing file's whole content."""

from __future__ import annotations

from pydantic import Field

from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.changes import Change, ChangeSet, Snapshot, apply_changes
from app.tools.descriptions import tool_description
from app.tools.diagnostics import with_lsp_errors
from app.tools.whole_file import (
    BOM,
    FilePath,
    change_metadata,
    new_text_file,
    refuse_directory,
    require_text,
    target_path,
    unchanged_metadata,
)


class WriteParams(ToolParams):
    filePath: FilePath
    content: str = Field(description="The complete content to write to the file")


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


class WriteTool(Tool):
    name = "write"
    params = WriteParams
    description = tool_description("write")

    async def run(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = target_path(ctx, params.filePath)
        require_text("content", params.content)

        def plan(snapshot: Snapshot) -> ChangeSet:
            state = snapshot[path]
            refuse_directory(state)
            if state.exists:
                existing = state.text_file()
                # The file's BOM is kept by render: one sent in content too would double it.
                content = params.content.removeprefix(BOM) if existing.bom else params.content
                data = existing.render(content)
            else:
                created = new_text_file(state, params.content)
                data = created.render(created.text)
            unchanged = data == state.data  # nothing to ask, write or record
            changes = [] if unchanged else [Change(path, data)]
            return ChangeSet(changes, title=f"Write {state.rel}", ask_subject=state.rel)

        applied_files = await apply_changes(ctx, self.name, [path], plan, require_read=[path])
        if not applied_files:
            rel = ctx.workspace.relative(path)
            output = f"{rel} already has exactly this content: nothing was written."
            return ToolResult(output, {**unchanged_metadata(rel), "created": False})
        [applied] = applied_files
        if applied.created:
            lines = _line_count(applied.after)
            output = f"Created {applied.path} ({lines} line{'' if lines == 1 else 's'})."
        else:
            output = f"Wrote {applied.path}: +{applied.additions} -{applied.deletions} lines."
        result = ToolResult(output, {**change_metadata(applied), "created": applied.created}, title=applied.path)
        return await with_lsp_errors(ctx, result, path)
