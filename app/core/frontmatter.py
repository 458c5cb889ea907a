"""Markdown files that begin with YAML front matter: agent files (``.opencode/agents``)
and custom commands (``.opencode/commands``).

A file is ``---``, YAML mapping lines, ``---``, then the body. A file without the opening
``---`` is all body. Errors are one line naming the file and what is wrong, so a caller
can show it and go on without that file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from app.core.errors import OpencodeError

FENCE = "---"
MAX_BYTES = 256 * 1024
"""A definition file larger than this is refused rather than read whole."""


class FrontMatterError(OpencodeError):
    """A definition file that cannot be used; the message names the file."""


class Document(NamedTuple):
    """(A NamedTuple: every command lists the agent folders through this module, and a
    frozen dataclass compiles its methods at each start.)"""

    meta: dict[str, Any]
    body: str


def split(text: str, origin: str) -> Document:
    """Separate ``text`` into its front matter (a mapping) and body; ``origin`` names the
    file in errors."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return Document({}, text.strip())
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == FENCE:
            header, body = "".join(lines[1:index]), "".join(lines[index + 1 :])
            break
    else:
        raise FrontMatterError(f"{origin}: front matter opened with --- is never closed: add a line with ---")
    import yaml  # only when a file has front matter

    try:
        meta = yaml.safe_load(header) if header.strip() else {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise FrontMatterError(f"{origin}: front matter{where}: {problem}") from None
    if not isinstance(meta, dict):
        raise FrontMatterError(f"{origin}: front matter must be 'key: value' lines, not {type(meta).__name__}")
    return Document({str(key): value for key, value in meta.items()}, body.strip())


def markdown_files(folder: Path, what: str, limit: int, notices: list[str]) -> list[Path]:
    """The ``.md`` files of a definition folder, sorted, at most ``limit``; a missing
    folder (or a file in its place) has none; other faults and the cut are one notice
    naming the folder and ``what`` it holds."""
    try:
        files = sorted(path for path in folder.iterdir() if path.suffix == ".md")
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as err:
        notices.append(f"{folder}: {what} not read: {err.strerror or err}")
        return []
    if len(files) > limit:
        notices.append(f"{folder}: {len(files)} {what}; only the first {limit} are read")
    return files[:limit]


def read(path: Path) -> Document:
    """Read and split one definition file; unreadable, oversized or non-UTF-8 files raise
    FrontMatterError naming the file."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as err:
        raise FrontMatterError(f"{path}: cannot read: {err.strerror or err}") from None
    if len(data) > MAX_BYTES:
        raise FrontMatterError(f"{path}: larger than {MAX_BYTES // 1024} KiB: shorten it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FrontMatterError(f"{path}: not UTF-8 text: save it as UTF-8") from None
    return split(text, str(path))
