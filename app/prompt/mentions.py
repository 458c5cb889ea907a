"""@ mentions: ``@src/app.py`` in a prompt attaches that file's text to the user message,
``@src/`` the folder's listing, in every front-end (the loop expands them as it stores
the prompt).

A mention is read as the model would read it: a file through the ``view`` tool (numbered
lines, the same limits and the same note when it is cut), a folder through ``ls``, an
image through ``view`` too (``attach_images``), so the same boundary (symlinks resolved),
permission rules and size limits judge it, and the file counts as read for the freshness
rule (an ``edit`` that follows needs no ``view``). A path the user wrote that leads
outside the workspace is asked about, as ``view`` asks; a prompt from a repository's
command template (``confined``) never reaches outside. A path that does not exist stays
plain text (an e-mail address, a decorator, a handle).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import OpencodeError, PermissionDeniedError
from app.core.images import Image, ImageError, Mention, is_image_name

if TYPE_CHECKING:
    from app.tools.base import Tool, ToolContext

_MENTION = re.compile(r"(?:(?<=\s)|^)@(?P<path>[^\s@]+)")
_TRAILING = ".,;:!?)]}'\"`"  # what ends a sentence rather than a path
MAX_MENTIONS = 20
"""Mentions past this many in one prompt are left as text (each may be a whole file)."""
CONFINED = "it is outside the workspace, and a command from the repository attaches files inside it only"


@dataclass(frozen=True)
class Attachment:
    """A mentioned file's text (``kind`` "file") or folder listing ("folder"), as the
    model reads it; ``path`` is workspace-relative."""

    path: str
    kind: str
    text: str

    def part(self) -> dict[str, Any]:
        """The stored form: a part of the user message (app/llm/messages.py)."""
        return {"type": "file", "path": self.path, "kind": self.kind, "text": self.text}


@dataclass(frozen=True)
class Refusal:
    """A mention that was not attached, and why, in one line for the user."""

    path: str
    reason: str

    @property
    def line(self) -> str:
        return f"@{self.path} was not attached: {self.reason}"


def mentioned_paths(text: str) -> list[str]:
    """The paths written ``@path`` in ``text`` (at its start or after a space), in order,
    each once, without the punctuation that ends a sentence."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match["path"].rstrip(_TRAILING)
        if path and path not in found:
            found.append(path)
    return found


async def attach_mentions(
    text: str, ctx: ToolContext, tools: Mapping[str, Tool], *, confined: bool = False
) -> tuple[list[Attachment], list[Refusal]]:
    """Read what ``text`` mentions with ``tools`` ("view" and "ls") in ``ctx``: the
    attachments, and the mentions refused (denied, unreadable; outside the workspace when
    ``confined``). Images are left to ``attach_images``; missing paths to the text."""
    attachments: list[Attachment] = []
    refusals: list[Refusal] = []
    for path in mentioned_paths(text)[:MAX_MENTIONS]:
        if is_image_name(path):
            continue
        try:
            subject = ctx.workspace.subject(path)
        except OpencodeError:  # a name no file can have: it is text
            continue
        absolute = ctx.workspace.root / subject
        if not absolute.exists():
            continue
        if confined and Path(subject).is_absolute():
            refusals.append(Refusal(path, CONFINED))
            continue
        kind, tool = ("folder", tools["ls"]) if absolute.is_dir() else ("file", tools["view"])
        arguments = {"path": subject} if kind == "folder" else {"filePath": subject}
        try:
            result = await tool.run_guarded(tool.parse(arguments), ctx)
        except OpencodeError as err:
            refusals.append(Refusal(path, _first_line(str(err))))
            continue
        attachments.append(Attachment(subject, kind, result.output))
    return attachments, refusals


async def attach_images(
    mentions: list[Mention], ctx: ToolContext, view: Tool, *, confined: bool = False
) -> tuple[list[Image], list[Refusal]]:
    """Read each image mentioned with the ``view`` tool in ``ctx`` (which must say the
    model takes images): the images, and the mentions refused by the rules (or outside
    the workspace when ``confined``). ImageError, in one line, for an image no provider
    would take (too big, not an image): the prompt is then not sent."""
    images: list[Image] = []
    refusals: list[Refusal] = []
    for mention in mentions:
        try:
            outside = Path(ctx.workspace.subject(mention.path)).is_absolute()
        except OpencodeError as err:
            raise ImageError(f"{mention.path}: {_first_line(str(err))}") from None
        if confined and outside:
            refusals.append(Refusal(mention.path, CONFINED))
            continue
        try:
            result = await view.run_guarded(view.parse({"filePath": mention.path}), ctx)
        except PermissionDeniedError as err:
            refusals.append(Refusal(mention.path, _first_line(str(err))))
            continue
        except OpencodeError as err:
            raise ImageError(_first_line(str(err))) from None
        image = result.metadata.get("image")
        if not isinstance(image, dict):
            raise ImageError(f"{mention.path} is not a PNG, JPEG, GIF or WEBP image: convert it to one of those")
        data = image["data"]
        images.append(Image(mention.path, image["mime"], data, len(data) * 3 // 4 - data[-2:].count("=")))
    return images, refusals


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "it could not be read"
