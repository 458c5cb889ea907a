"""Images a model can be shown: a prompt's attachments and what `view` reads (a
prompt's are read by `view` too, app/prompt/mentions.py).

Vision APIs take PNG, JPEG, GIF and WEBP, as base64 data URLs in the chat format
litellm converts for each provider; Anthropic refuses an image over 5 MB, so that is the
cap for every provider. Pure: the loop and the tools decide whether the model in use
takes images at all.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import OpencodeError
from app.core.file_kinds import kind_of

MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_MIME_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}  # fmt: skip
_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


class ImageError(OpencodeError):
    """An image that cannot be sent: too big, not a format models take, unreadable."""


@dataclass(frozen=True)
class Image:
    shown: str
    """The path as the user or the model wrote it, for messages."""
    mime: str
    data: str
    """Base64 of the file."""
    size: int

    def part(self) -> dict[str, str]:
        """The stored form (a message part)."""
        return {"type": "image", "path": self.shown, "mime": self.mime, "data": self.data}


def is_image_name(name: str) -> bool:
    """Whether the name ends in an image extension a model takes (.png .jpg .jpeg .gif .webp)."""
    return Path(name).suffix.lower() in IMAGE_MIME_TYPES


def sniff_mime(head: bytes) -> str | None:
    """The image type of a file's first bytes, among those models take."""
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_image(fd: int, shown: str) -> Image:
    """The image in the open file ``fd`` (closed here), refusing in one line what no
    provider would take: not a regular file, over MAX_IMAGE_BYTES (no more than that is
    ever read), not a PNG, JPEG, GIF or WEBP."""
    with os.fdopen(fd, "rb") as file:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ImageError(f"{shown} is {kind_of(info.st_mode)}, not an image file: give the path of the image itself")
            if info.st_size > MAX_IMAGE_BYTES:
                raise ImageError(_too_big(shown, info.st_size))
            raw = file.read(MAX_IMAGE_BYTES + 1)
        except OSError as err:
            raise ImageError(f"{shown} cannot be read: {err.strerror or err}; check the path") from None
    if len(raw) > MAX_IMAGE_BYTES:  # it grew since the check
        raise ImageError(_too_big(shown, len(raw)))
    mime = sniff_mime(raw[:16])
    if mime is None:
        raise ImageError(f"{shown} is not a PNG, JPEG, GIF or WEBP image: convert it to one of those")
    return Image(shown, mime, base64.b64encode(raw).decode("ascii"), len(raw))


def _too_big(shown: str, size: int) -> str:
    return (
        f"{shown} is {size / 1024 / 1024:.1f} MB; images are capped at "
        f"{MAX_IMAGE_BYTES // 1024 // 1024} MB (the providers' limit): shrink or crop it"
    )


# A path in a prompt: @name, or a pasted path (quoted, or with backslash-escaped spaces,
# as terminals paste a dragged file) ending in an image extension.
_PROMPT_PATH = re.compile(
    r"""(?:(?<=\s)|^)(?:@(?P<at>\S+)|'(?P<single>[^']+)'|"(?P<double>[^"]+)"|(?P<bare>(?:[^\s'"\\]|\\ )+))"""
)


@dataclass(frozen=True)
class Mention:
    """An image path a prompt names. `explicit` (written @path) must exist; a bare path
    is an attachment only when it is absolute (pasted) and exists, otherwise it is text."""

    path: str
    explicit: bool


def image_mentions(prompt: str) -> list[Mention]:
    """The image paths a prompt names, in order, each once: `@shot.png`, or a pasted
    absolute path ending in .png, .jpg, .jpeg, .gif or .webp (quoted or with escaped spaces)."""
    found: list[Mention] = []
    for match in _PROMPT_PATH.finditer(prompt):
        raw = next(group for group in match.groups() if group is not None)
        path = raw.replace("\\ ", " ").rstrip(".,;:!?)")
        explicit = match.group("at") is not None
        pasted = path.startswith(("/", "~"))
        # The cheap test first: is_image_name builds a Path, which interns each word it is given.
        if (explicit or pasted) and is_image_name(path) and all(path != known.path for known in found):
            found.append(Mention(path, explicit))
    return found
