"""The system message of a request: the agent's prompt, where it is working, and the
project's own instructions (AGENTS.md, CLAUDE.md, .cursorrules and config contextPaths).

Context files are read on every request, so editing AGENTS.md mid-session takes effect
on the next step without a restart.
"""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from app.config import Config
from app.llm.agents import get_agent, system_prompt

ALWAYS_READ = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
MAX_CONTEXT_FILE_CHARS = 50_000
"""A bigger instructions file is cut, so one huge file cannot fill the model's window."""


def context_files(root: Path, config: Config) -> list[tuple[str, str]]:
    """(relative path, text) of every instructions file present, without duplicates."""
    found: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for rel in dict.fromkeys((*ALWAYS_READ, *config.context_paths)):
        path = (root / rel).resolve()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # unreadable instructions are skipped, not a failed turn
        if len(text) > MAX_CONTEXT_FILE_CHARS:
            text = text[:MAX_CONTEXT_FILE_CHARS] + f"\n[... cut at {MAX_CONTEXT_FILE_CHARS} characters]"
        found.append((rel, text.strip()))
    return found


def environment(root: Path) -> str:
    return "\n".join(
        (
            "<env>",
            f"Workspace root: {root}",
            f"Is a git repository: {'yes' if (root / '.git').exists() else 'no'}",
            f"Platform: {platform.system().lower()}",
            f"Today's date: {date.today().isoformat()}",
            "</env>",
        )
    )


def build_system_prompt(agent: str, root: Path, config: Config) -> str:
    """The whole system message for ``agent`` working in ``root``."""
    sections = [system_prompt(agent)]
    if get_agent(agent).conversational:
        sections.append(environment(root))
        files = context_files(root, config)
        if files:
            sections.append(
                "Instructions from the project (follow them):\n\n"
                + "\n\n".join(f"# {rel}\n\n{text}" for rel, text in files)
            )
    return "\n\n".join(sections)
