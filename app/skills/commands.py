"""``/skills``: the skills the agent can load, with where each is (a ``session`` slash
command of app/prompt/slash_commands.py, in every front-end)."""

from __future__ import annotations

from app.prompt.slash_commands import CommandCall


async def skills_command(call: CommandCall) -> str:
    catalog = call.loop.runtime.skills
    lines = [f"{skill.name}: {skill.description}  ({skill.folder})" for skill in sorted(catalog.skills.values())]
    lines += catalog.notices
    return "\n".join(lines) or (
        "No skills: add a folder with a SKILL.md to .opencode/skills/ or .claude/skills/ (docs/skills.md)"
    )
