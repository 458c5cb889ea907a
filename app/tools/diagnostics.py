"""The diagnostics tool, and step 10 of docs/specs/001-edit.md for the tools that write: after a change,
the file is touched in its language server and the errors it reports are appended to
the tool's result. A missing, slow or crashed server only means no diagnostics."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from pydantic import Field

from app.core.errors import ToolError
from app.lsp import MAX_DIAGNOSTICS_PER_FILE, Diagnostic, format_errors
from app.lsp.diagnostic import ERROR, WARNING, errors_only
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.reading import allowed_by_rules, authorize_read

SHOWN_SEVERITIES = (ERROR, WARNING)


class DiagnosticsParams(ToolParams):
    path: str | None = Field(
        None, description="A file, relative to the workspace root or absolute; omit for every open file"
    )


async def file_diagnostics(ctx: ToolContext, path: Path) -> list[Diagnostic] | None:
    """The file's diagnostics once its server has seen the current content, waiting at
    most tools.lsp.diagnosticsTimeout; None when no server answered."""
    if ctx.lsp is None:
        return None
    return await ctx.lsp.touch(path, ctx.config.tools.lsp.diagnostics_timeout)


async def with_lsp_errors(ctx: ToolContext, result: ToolResult, path: Path) -> ToolResult:
    """Spec 001 step 10 for a one-file change: the file's errors (at most 20) appended
    to the output, and in metadata["diagnostics"] when there are any."""
    errors = errors_only(await file_diagnostics(ctx, path) or [])
    if not errors:
        return result
    result.metadata["diagnostics"] = [d.as_dict() for d in errors[:MAX_DIAGNOSTICS_PER_FILE]]
    return replace(result, output=result.output + format_errors(ctx.workspace.relative(path), errors))


async def lsp_error_lines(ctx: ToolContext, rels: list[str]) -> dict[str, list[str]]:
    """For a change to several files (patch): each file's errors as "line L:C: message"
    lines, files without errors left out; the files are checked concurrently."""
    found = await asyncio.gather(*(file_diagnostics(ctx, ctx.workspace.root / rel) for rel in rels))
    lines = {}
    for rel, diagnostics in zip(rels, found, strict=True):
        if errors := errors_only(diagnostics or []):
            lines[rel] = [d.pretty() for d in errors[:MAX_DIAGNOSTICS_PER_FILE]]
    return lines


def _describe(rel: str, diagnostics: list[Diagnostic]) -> str:
    shown = [d for d in diagnostics if d.severity in SHOWN_SEVERITIES]
    lines = [f"  {d.severity_name}: {d.pretty()}" for d in shown[:MAX_DIAGNOSTICS_PER_FILE]]
    if len(shown) > MAX_DIAGNOSTICS_PER_FILE:
        lines.append(f"  ... and {len(shown) - MAX_DIAGNOSTICS_PER_FILE} more")
    return f"{rel}:\n" + "\n".join(lines) if lines else ""


class DiagnosticsTool(Tool):
    name = "diagnostics"
    params = DiagnosticsParams
    description = tool_description("diagnostics")
    read_only = True

    async def run(self, params: DiagnosticsParams, ctx: ToolContext) -> ToolResult:
        if params.path is None:
            return await self._open_files(ctx)
        path = ctx.workspace.resolve(params.path)  # refuses a path outside the workspace
        target = await authorize_read(ctx, self.name, params.path)
        if not path.is_file():
            raise ToolError(f"{target.shown} is not a file: give the path of a file in the workspace")
        if ctx.lsp is None or (spec := ctx.lsp.spec_for(path)) is None:
            return ToolResult(
                f"No language server handles {target.shown}: configure one under `lsp` in the config",
                {"path": target.shown, "count": 0},
            )
        diagnostics = await file_diagnostics(ctx, path)
        if diagnostics is None:
            state, message = ctx.lsp.states().get(spec.language, ("starting", ""))
            why = message or f"it is {state} and did not answer in time; try again shortly"
            return ToolResult(
                f"No diagnostics for {target.shown}: the {spec.language} language server is unavailable ({why})",
                {"path": target.shown, "count": 0},
            )
        text = _describe(target.shown, diagnostics) or f"No errors or warnings in {target.shown}."
        count = sum(d.severity in SHOWN_SEVERITIES for d in diagnostics)
        return ToolResult(text, {"path": target.shown, "count": count}, title=target.shown)

    async def _open_files(self, ctx: ToolContext) -> ToolResult:
        target = await authorize_read(ctx, self.name, ".")
        allowed = allowed_by_rules(ctx, self.name, target)
        reported = ctx.lsp.diagnostics() if ctx.lsp is not None else {}
        sections, count = [], 0
        for path, diagnostics in sorted(reported.items()):
            if not ctx.workspace.is_inside(path) or not allowed(rel := ctx.workspace.relative(path)):
                continue
            if section := _describe(rel, diagnostics):
                sections.append(section)
                count += sum(d.severity in SHOWN_SEVERITIES for d in diagnostics)
        text = "\n\n".join(sections) or "No errors or warnings in the open files."
        return ToolResult(text, {"path": None, "count": count}, title="open files")
