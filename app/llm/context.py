"""The system message of a request: the agent's prompt, where it is working, and the
project's own instructions (AGENTS.md, CLAUDE.md, .cursorrules and config contextPaths).

Context files are read on every request, so editing AGENTS.md mid-session takes effect
on the next step without a restart.

A context file that leads outside the workspace (a symlinked AGENTS.md, a contextPaths
entry with `..`, an absolute one, a symlinked folder) sends text from elsewhere to the
model: think of an AGENTS.md linked to ~/.ssh/id_rsa in a repository someone else wrote.
Such a file is read only when `external_directory` allows its path for the turn
(``outside_allowed``, decided by ``allowed_outside`` at the turn's start), and never when
the entry naming it comes from the project's own .opencode.json: cloning a repository
cannot widen what is read outside; only the user's global config (or environment) can
list outside files. The system message names each file left out, so nothing is silent.
"""

from __future__ import annotations

import os
import platform
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from app.agents.catalog import Agent
from app.config import Config
from app.config.models import DEFAULT_CONTEXT_PATHS
from app.config.sources import read_json_object
from app.core.config_paths import CONFIG_FILE
from app.core.errors import ConfigError, PermissionDeniedError
from app.permission import PermissionPreview, PermissionService

ALWAYS_READ = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
MAX_CONTEXT_FILE_CHARS = 50_000
"""A bigger instructions file is cut, so one huge file cannot fill the model's window."""
_MAX_CONTEXT_FILE_BYTES = 4 * MAX_CONTEXT_FILE_CHARS
"""What is read of a file at most: more than the characters kept, whatever their encoding."""
INSTRUCTIONS_HEADING = "Instructions from the project (follow them):"
LEFT_OUT_HEADING = "Instructions files left out:"
_BUILT_IN = frozenset((*ALWAYS_READ, *DEFAULT_CONTEXT_PATHS))
"""Names read without any config: the project naming one of them again adds nothing."""


@dataclass(frozen=True)
class ContextFile:
    """One instructions file: ``shown`` as its entry names it, ``path`` resolved (links
    followed), ``outside`` the workspace or not, ``project_listed`` when it is outside and
    only the project's .opencode.json names it (then it is never read)."""

    shown: str
    path: Path
    outside: bool
    project_listed: bool


def context_candidates(root: Path, config: Config) -> list[ContextFile]:
    """Every instructions file present, in entry order, without duplicates; a folder
    entry (such as .cursor/rules/) gives every file inside it."""
    root = root.resolve()
    project_entries: set[str] | None = set()
    read_project = False  # .opencode.json is read only when an entry it may list leads outside
    found: dict[Path, ContextFile] = {}
    for entry in dict.fromkeys((*ALWAYS_READ, *config.context_paths)):
        for shown, path in _files(root, entry):
            if path in found:
                continue
            outside = not path.is_relative_to(root)
            if outside and entry not in _BUILT_IN and not read_project:
                project_entries, read_project = _project_entries(root), True
            project_listed = (
                outside and entry not in _BUILT_IN and (project_entries is None or entry in project_entries)
            )
            found[path] = ContextFile(shown, path, outside, project_listed)
    return list(found.values())


async def allowed_outside(
    root: Path, config: Config, permissions: PermissionService, session_id: str, agent: str
) -> frozenset[Path]:
    """The outside instructions files a turn may read, decided at its start: each one not
    listed by the project is judged as a read of its absolute path (`external_directory`):
    a rule or an earlier "allow for the session" answers at once, otherwise a person is
    asked (headless: denied; --yes: allowed)."""
    allowed = set()
    for candidate in context_candidates(root, config):
        if not candidate.outside or candidate.project_listed:
            continue
        subject = candidate.path.as_posix()
        preview = PermissionPreview(
            "text",
            f"The instructions file {candidate.shown} leads to {subject}, outside the workspace {root}; "
            "allowing it sends that file's text to the model.",
        )
        try:
            await permissions.check(
                session_id, "external_directory", subject, agent,
                f"read instructions from outside the workspace: {subject}", preview, absolute=subject,
            )  # fmt: skip
        except PermissionDeniedError:
            continue
        allowed.add(candidate.path)
    return frozenset(allowed)


def _readable(candidates: list[ContextFile], outside_allowed: frozenset[Path]) -> list[tuple[str, str]]:
    """(name as shown, text) of every instructions file the model may see: those inside
    the workspace, and those outside that ``outside_allowed`` holds."""
    return [
        (candidate.shown, text)
        for candidate in candidates
        if _may_read(candidate, outside_allowed) and (text := _read(candidate.path)) is not None
    ]


def _may_read(candidate: ContextFile, outside_allowed: frozenset[Path]) -> bool:
    return not candidate.outside or (not candidate.project_listed and candidate.path in outside_allowed)


def _left_out(candidate: ContextFile) -> str:
    why = (
        "the project's .opencode.json lists it, and a project cannot add files from outside"
        if candidate.project_listed
        else "external_directory does not allow reading there"
    )
    return f"- {candidate.shown} was not read: it leads outside the workspace, and {why}"


def _project_entries(root: Path) -> set[str] | None:
    """The contextPaths the project's .opencode.json lists (camelCase or snake_case key);
    None when the file cannot be read now (edited since start-up): every configured entry
    then counts as the project's."""
    try:
        data = read_json_object(root / CONFIG_FILE) or {}
    except ConfigError:
        return None
    entries = data.get("contextPaths", data.get("context_paths", []))
    return {entry for entry in entries if isinstance(entry, str)} if isinstance(entries, list) else set()


def _files(root: Path, entry: str) -> Iterator[tuple[str, Path]]:
    """(name as shown, resolved path) of each regular file ``entry`` names: itself, or
    every file below it when it is a folder, sorted."""
    real = os.path.realpath(root / entry)  # a symlink loop resolves to no file, not an error
    try:
        mode = os.stat(real).st_mode  # one call for both questions: most entries name nothing
    except (OSError, ValueError):
        return
    if stat.S_ISDIR(mode):
        prefix = entry.rstrip("/")
        for rel, found in sorted(_walk_files(Path(real))):
            yield f"{prefix}/{rel}", Path(os.path.realpath(found))
    elif stat.S_ISREG(mode):
        yield entry, Path(real)


def _walk_files(top: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``top``, path) of the files below ``top`` (links to files
    included, links to folders not entered), from a stack of folders, not recursion."""
    pending = [(top, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue
        for item in entries:
            if item.is_dir(follow_symlinks=False):
                pending.append((Path(item.path), f"{prefix}{item.name}/"))
            elif item.is_file():
                yield f"{prefix}{item.name}", item.path


def _read(path: Path) -> str | None:
    """The file's text, cut at MAX_CONTEXT_FILE_CHARS; None when it cannot be read or is
    not a regular file (checked on the descriptor, opened without blocking on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # unreadable instructions are skipped, not a failed turn
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            raw = handle.read(_MAX_CONTEXT_FILE_BYTES + 1)
        except OSError:
            return None
    text = raw.decode("utf-8", errors="replace")
    if len(text) > MAX_CONTEXT_FILE_CHARS:
        text = text[:MAX_CONTEXT_FILE_CHARS] + f"\n[... cut at {MAX_CONTEXT_FILE_CHARS} characters]"
    return text.strip()


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


def build_system_prompt(
    agent: Agent,
    root: Path,
    config: Config,
    outside_allowed: frozenset[Path] = frozenset(),
    skills: Sequence[tuple[str, str]] = (),
) -> str:
    """The whole system message for ``agent`` working in ``root``; instructions files
    outside the workspace are read only if ``outside_allowed`` holds them. ``skills``:
    (name, description) of the skills the agent may load, listed without their bodies."""
    sections = [agent.system_prompt()]
    if agent.conversational:
        sections.append(environment(root))
        candidates = context_candidates(root, config)
        if files := _readable(candidates, outside_allowed):
            sections.append(
                f"{INSTRUCTIONS_HEADING}\n\n" + "\n\n".join(f"# {rel}\n\n{text}" for rel, text in files)
            )
        if left_out := [_left_out(c) for c in candidates if not _may_read(c, outside_allowed)]:
            sections.append(f"{LEFT_OUT_HEADING}\n" + "\n".join(left_out))
    if skills:
        sections.append(
            "Skills: load one with the skill tool, by name, as soon as the task matches its description "
            "(only then are its instructions yours):\n" + "\n".join(f"- {name}: {text}" for name, text in skills)
        )
    return "\n\n".join(sections)


def instructions_of(system: str) -> str:
    """The instructions files' section of a system message ``build_system_prompt`` wrote
    ("" when it has none): its part of what a request costs (app/llm/context_size.py)."""
    start = system.find(f"\n\n{INSTRUCTIONS_HEADING}\n\n")
    if start < 0:
        return ""
    end = system.rfind(f"\n\n{LEFT_OUT_HEADING}\n")
    return system[start : end if end > start else len(system)]
