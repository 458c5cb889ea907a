"""Skills: folders holding a ``SKILL.md`` (YAML front matter ``name``, ``description``,
optionally ``allowed-tools``, then the instructions) that the agent loads only when a
task needs one (docs/skills.md).

They are found in ``.opencode/skills/NAME/`` and ``.claude/skills/NAME/`` of the project,
then ``~/.config/opencode/skills/NAME/`` and ``~/.claude/skills/NAME/`` of the user; the
first skill of a name wins. Only names and descriptions enter the system prompt; the
``skill`` tool loads a body (``SkillCatalog.load``), which lets ``view`` read that skill's
folder for the rest of the session, even outside the workspace, and limits the turn's
tools to the skill's ``allowed-tools`` when it names any.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from app.core.frontmatter import FrontMatterError, split
from app.hooks.events import CLAUDE_TOOL_NAMES

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024
MAX_LISTED_FILES = 100
"""Files of a skill's folder listed when it loads; the rest are counted."""
ALWAYS_ALLOWED = ("skill",)
"""Tools a skill's ``allowed-tools`` never takes away: loading another skill."""
_OUR_NAMES = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()}


class Skill(NamedTuple):
    name: str
    description: str
    allowed_tools: tuple[str, ...] | None
    """Our names of the tools the skill limits a turn to, or None (no limit)."""
    folder: Path
    """Canonical (symlinks resolved)."""


class LoadedSkill(NamedTuple):
    skill: Skill
    body: str
    files: list[str]
    """The other files of its folder, absolute paths, sorted."""
    more: int
    """Files not listed past MAX_LISTED_FILES."""


def skill_folders(root: Path, env: Mapping[str, str]) -> list[Path]:
    """Where skills are looked for, in order of precedence."""
    folders = [root / ".opencode" / "skills", root / ".claude" / "skills"]
    xdg = env.get("XDG_CONFIG_HOME")
    home = env.get("HOME")
    if xdg:
        folders.append(Path(xdg) / "opencode" / "skills")
    elif home:
        folders.append(Path(home) / ".config" / "opencode" / "skills")
    if home:
        folders.append(Path(home) / ".claude" / "skills")
    return folders


class SkillCatalog:
    """The skills found, one notice per skill file that cannot be used, and per session
    the folders loaded skills let ``view`` read and the turn's tool limit."""

    def __init__(self, skills: dict[str, Skill], notices: list[str]) -> None:
        self.skills = skills
        self.notices = notices
        self._folders: dict[str, set[Path]] = {}
        self._limits: dict[str, tuple[str, tuple[str, ...]]] = {}
        """session -> (skill name, the tools it allows), for the turn running."""

    def summaries(self) -> list[tuple[str, str]]:
        """(name, description) of every skill, in name order: all the system prompt holds."""
        return [(skill.name, skill.description) for skill in sorted(self.skills.values())]

    def load(self, session_id: str, name: str) -> LoadedSkill:
        """The skill's body, read now, and its other files; from now on ``view`` may read
        its folder in this session, and the turn's tools are limited to its allowed ones.
        KeyError for an unknown name, OSError or FrontMatterError for a file that went bad."""
        skill = self.skills[name]
        body = _read_document(skill.folder / SKILL_FILE).body
        files = sorted(
            str(Path(folder) / file)
            for folder, _, names in os.walk(skill.folder)
            for file in names
            if Path(folder, file) != skill.folder / SKILL_FILE
        )
        self._folders.setdefault(session_id, set()).add(skill.folder)
        if skill.allowed_tools is not None:
            self._limits[session_id] = (skill.name, (*skill.allowed_tools, *ALWAYS_ALLOWED))
        return LoadedSkill(skill, body, files[:MAX_LISTED_FILES], max(0, len(files) - MAX_LISTED_FILES))

    def readable_folders(self, session_id: str) -> frozenset[Path]:
        return frozenset(self._folders.get(session_id, ()))

    def refusal(self, session_id: str, tool: str) -> str | None:
        """Why ``tool`` may not run in this turn (a loaded skill's allowed-tools), or None."""
        limit = self._limits.get(session_id)
        if limit is None or tool in limit[1]:
            return None
        return f"The skill {limit[0]} allows only these tools in this turn: {', '.join(limit[1])}; {tool} was not run"

    def end_turn(self, session_id: str) -> None:
        """The turn is over: its skill's tool limit ends with it."""
        self._limits.pop(session_id, None)


def load_skills(root: Path, env: Mapping[str, str]) -> SkillCatalog:
    """Every skill of ``skill_folders``; a skill that cannot be used gives one notice
    naming its file and key, and the others load."""
    skills: dict[str, Skill] = {}
    notices: list[str] = []
    for base in skill_folders(root, env):
        try:
            entries = sorted(base.iterdir())
        except OSError:
            continue
        for folder in entries:
            file = folder / SKILL_FILE
            if not file.is_file():
                continue
            try:
                skill = _read_skill(file)
            except (OSError, FrontMatterError, ValueError) as err:
                notices.append(f"skill not loaded: {err}")
                continue
            skills.setdefault(skill.name, skill)
    return SkillCatalog(skills, notices)


def _read_document(file: Path) -> Any:
    with open(file, "rb") as handle:
        data = handle.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise ValueError(f"{file}: larger than {MAX_SKILL_BYTES // 1024} KiB: keep SKILL.md short and put the rest in files beside it")
    return split(data.decode("utf-8", "replace"), str(file))


def _read_skill(file: Path) -> Skill:
    meta = _read_document(file).meta
    name = meta.get("name", file.parent.name)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f'{file}: "name" must be a non-empty string')
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f'{file}: "description" is missing: say in one line when the skill is to be used')
    return Skill(name.strip(), " ".join(description.split()), _allowed_tools(meta.get("allowed-tools"), file), file.parent.resolve())


def _allowed_tools(value: Any, file: Path) -> tuple[str, ...] | None:
    """``allowed-tools`` as our tool names: a list or a comma-separated string of ours or
    Claude Code's names (``Bash(git:*)`` counts as bash)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError(f'{file}: "allowed-tools" must be a list of tool names or one comma-separated string')
    names = [item.strip().split("(", 1)[0].strip() for item in items]
    return tuple(dict.fromkeys(_OUR_NAMES.get(name, name) for name in names if name))
