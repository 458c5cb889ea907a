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
    """(relative path, text) of every instructions file present, without duplicates;
    a directory in contextPaths (such as .cursor/rules/) gives every file inside it."""
    found: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for rel, path in _candidates(root, (*ALWAYS_READ, *config.context_paths)):
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


def _candidates(root: Path, names: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(name as shown, resolved path) for each configured name, directories expanded."""
    candidates: list[tuple[str, Path]] = []
    for rel in dict.fromkeys(names):
        path = (root / rel).resolve()
        if path.is_dir():
            inside = sorted(child for child in path.rglob("*") if child.is_file())
            candidates.extend(
                (f"{rel.rstrip('/')}/{child.relative_to(path).as_posix()}", child) for child in inside
            )
        else:
            candidates.append((rel, path))
    return candidates


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
