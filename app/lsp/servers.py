"""Which language server serves which file: the config's `lsp` map, over defaults
for servers found on PATH or beside the Python running opencode (`make run` starts
`.venv/bin/opencode` without activating the venv, where pylsp is installed). Pure apart
from that look-up, which is passed in."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.config.models import LspServerConfig

LANGUAGE_FILES: dict[str, dict[str, str]] = {
    "python": {".py": "python", ".pyi": "python"},
    "typescript": {
        ".ts": "typescript",
        ".mts": "typescript",
        ".cts": "typescript",
        ".tsx": "typescriptreact",
        ".js": "javascript",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".jsx": "javascriptreact",
    },
    "go": {".go": "go"},
    "rust": {".rs": "rust"},
}
"""Language key -> {file extension: LSP languageId}. A configured language not listed
here serves the files named after it (`"lua"` serves `*.lua`)."""

DEFAULT_COMMANDS: dict[str, list[list[str]]] = {
    "python": [["pylsp"], ["pyright-langserver", "--stdio"]],
    "typescript": [["typescript-language-server", "--stdio"]],
    "go": [["gopls"]],
    "rust": [["rust-analyzer"]],
}
"""Per language, the servers tried in order when the config names none; the first
whose executable is found (``find_executable``) is used."""


def find_executable(name: str) -> str | None:
    """``name`` on PATH, else in the running interpreter's own ``bin/`` folder (a venv's,
    whether or not it is activated). The folder of ``sys.executable`` as invoked, not
    resolved: a venv's python is a link to the base interpreter."""
    return shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))


class LspStartError(Exception):
    """A server could not be started or did not initialize; the message says why."""


@dataclass(frozen=True, slots=True)
class ServerSpec:
    language: str
    command: tuple[str, ...]
    extensions: Mapping[str, str]

    def language_id(self, suffix: str) -> str:
        return self.extensions[suffix.lower()]


def server_specs(
    configured: Mapping[str, LspServerConfig], which: Callable[[str], str | None] = find_executable
) -> list[ServerSpec]:
    """Every server that may run: configured ones (a disabled entry also switches its
    default off), then defaults whose executable is found."""
    specs = []
    for language, entry in configured.items():
        if entry.disabled or not entry.command:
            continue
        files = LANGUAGE_FILES.get(language, {f".{language.lower()}": language})
        specs.append(ServerSpec(language, (entry.command, *entry.args), files))
    for language, candidates in DEFAULT_COMMANDS.items():
        if language in configured:
            continue
        found = next((command for command in candidates if which(command[0])), None)
        if found is not None:
            specs.append(ServerSpec(language, tuple(found), LANGUAGE_FILES[language]))
    return specs
