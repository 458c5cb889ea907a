"""skill: load one skill's instructions when the task needs them (app/skills/catalog.py).
The system prompt names every skill with its description; this returns the body and the
other files of its folder, which ``view`` may then read, even outside the workspace."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from app.core.errors import ToolError
from app.core.frontmatter import FrontMatterError
from app.permission import PermissionPreview
from app.skills.catalog import SkillCatalog
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult

DESCRIPTION = """Load a skill: instructions for a kind of task, listed by name and description in the system prompt.
Call it with the skill's name as soon as the task matches a skill's description, before doing the work.
The result is the skill's instructions and the other files of its folder (scripts, references), which
you may read with the view tool."""


class SkillParams(ToolParams):
    name: str = Field(min_length=1, description="The skill's name, as the system prompt lists it.")


class SkillTool(Tool):
    name = "skill"
    params = SkillParams
    description = DESCRIPTION
    read_only = True

    def __init__(self, catalog: Callable[[], SkillCatalog]) -> None:
        self._catalog = catalog

    async def run(self, params: SkillParams, ctx: ToolContext) -> ToolResult:
        catalog = self._catalog()
        if params.name not in catalog.skills:
            known = ", ".join(sorted(catalog.skills)) or "none"
            raise ToolError(f"skill: there is no skill {params.name!r}: use one of {known}")
        await ctx.permissions.check(
            ctx.session_id, self.name, params.name, ctx.agent, f"load the skill {params.name}",
            PermissionPreview("text", f"The agent wants to load the skill {params.name}."),
        )  # fmt: skip
        try:
            loaded = catalog.load(ctx.session_id, params.name)
        except (OSError, FrontMatterError, ValueError) as err:
            raise ToolError(f"skill: {params.name} could not be read ({err}): use another skill or none") from None
        parts = [f'<skill name="{params.name}" folder="{loaded.skill.folder}">', loaded.body, "</skill>"]
        if loaded.files:
            listing = "\n".join(f"- {path}" for path in loaded.files)
            more = f"\n({loaded.more} more files)" if loaded.more else ""
            parts.append(f"Files of this skill (read them with view when the instructions need them):\n{listing}{more}")
        if loaded.skill.allowed_tools is not None:
            parts.append(f"This skill limits this turn to the tools: {', '.join(loaded.skill.allowed_tools)}")
        metadata = {"skill": params.name, "folder": str(loaded.skill.folder), "files": len(loaded.files) + loaded.more}
        return ToolResult("\n\n".join(parts), metadata, title=params.name)
