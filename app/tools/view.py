"""The view tool: a text file with line numbers, a page at a time.

The file is streamed line by line, so a page near the start of a huge log costs what the
page costs. Every view records the read (also a partial one): the editing tools refuse to
change a file the session has not seen, or one that changed since.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from pydantic import Field

from app.core.errors import BinaryFileError, ToolError
from app.tools.base import Tool, ToolContext, ToolParams, ToolResult
from app.tools.descriptions import tool_description
from app.tools.reading import (
    MAX_LINE_CHARS,
    ReadTarget,
    authorize_read,
    cut_line,
    special_kind,
    special_kind_at,
)
from app.tools.suggest import similar_names
from app.workspace import is_binary
from app.workspace.beneath import Beneath

DEFAULT_LIMIT = 2000
_SNIFF = 8192 + 1  # one byte more than is_binary inspects, so it knows whether the file goes on
MAX_LINE_BYTES = 1024 * 1024
"""What is read of one line at most; only MAX_LINE_CHARS of it are shown anyway."""

# Leading bytes of the image formats a model is likely to meet, and their names.
_IMAGE_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
    (b"\x00\x00\x01\x00", "ICO"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
_IMAGE_EXTENSIONS = {
    ".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".gif": "GIF", ".bmp": "BMP", ".ico": "ICO",
    ".tif": "TIFF", ".tiff": "TIFF", ".webp": "WEBP", ".avif": "AVIF", ".heic": "HEIC",
}  # fmt: skip


class ViewParams(ToolParams):
    filePath: str = Field(
        min_length=1, description="The file to read, relative to the workspace root (or absolute)."
    )
    offset: int = Field(0, ge=0, description="The line to start at, counting from 0. Default 0.")
    limit: int = Field(DEFAULT_LIMIT, ge=1, description="The number of lines to read. Default 2000.")


class Page(NamedTuple):
    """(A NamedTuple: a frozen dataclass compiles its methods at every start of every command.)"""

    lines: list[str]
    more: bool  # lines follow the page
    unread: dict[int, int]
    """Index in ``lines`` -> bytes of that line left unread (a line over MAX_LINE_BYTES)."""


class ViewTool(Tool):
    name = "view"
    params = ViewParams
    description = tool_description("view")
    read_only = True

    async def run(self, params: ViewParams, ctx: ToolContext) -> ToolResult:
        target = await authorize_read(ctx, self.name, params.filePath)
        if ctx.vision:  # only a model that takes images needs app.core.images
            from app.core.images import is_image_name

            if is_image_name(target.path.name):
                return await self._image(target, ctx)
        try:
            page = await asyncio.to_thread(read_page, target, params.offset, params.limit)
        except OSError as err:  # a name too long, no permission: an answer, not a crash
            raise ToolError(f"{target.shown} cannot be read: {err.strerror or err}; check the path") from None
        ctx.records.record_read(ctx.session_id, target.path)
        return ToolResult(
            output=render_page(page, params.offset),
            metadata={
                "path": target.shown,
                "offset": params.offset,
                "lines": len(page.lines),
                "more": page.more,
            },
            title=target.shown,
        )


    async def _image(self, target: ReadTarget, ctx: ToolContext) -> ToolResult:
        """The image itself, for a model that takes images: the loop shows it to the model
        after the call's result (metadata["image"])."""
        from app.core.images import ImageError, read_image

        if not target.path.is_file():
            raise missing_file_error(target.path, target.shown)
        try:
            image = await asyncio.to_thread(lambda: read_image(open_beneath_root(target.path), target.shown))
        except ImageError as err:
            raise ToolError(str(err)) from None
        except OSError as err:
            raise ToolError(f"{target.shown} cannot be read: {err.strerror or err}; check the path") from None
        ctx.records.record_read(ctx.session_id, target.path)
        return ToolResult(
            output=f"{target.shown} is an image ({_human_size(image.size)}): it is shown to you below.",
            metadata={"path": target.shown, "image": {"path": target.shown, "mime": image.mime, "data": image.data}},
            title=target.shown,
        )


def render_page(page: Page, offset: int) -> str:
    if not page.lines:
        return "(the file is empty)"
    numbered = "\n".join(
        f"{offset + i + 1:>6}\t{_shown_line(line, page.unread.get(i, 0))}" for i, line in enumerate(page.lines)
    )
    if not page.more:
        return numbered
    end = offset + len(page.lines)
    return f"{numbered}\n\n(File has more lines. Use offset {end} to read beyond line {end})"


def _shown_line(line: str, unread: int) -> str:
    if not unread:
        return cut_line(line)
    rest = len(line) - MAX_LINE_CHARS
    return f"{line[:MAX_LINE_CHARS]}... [line cut: {rest} more characters, then {unread} bytes not read]"


def read_page(target: ReadTarget, offset: int, limit: int) -> Page:
    """Lines ``offset`` to ``offset + limit`` of the file, without reading past them."""
    path, shown = target.path, target.shown
    if not path.exists():
        raise missing_file_error(path, shown)
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file: use the ls tool to list it")
    if (kind := special_kind_at(path)) is not None:
        raise _special_file_error(shown, kind)
    # Without blocking, then checked again on the descriptor: a FIFO swapped in after the
    # check above would otherwise hold the call until someone writes to it.
    fd = open_beneath_root(path)
    with open(fd, "rb") as handle:
        if (kind := special_kind(os.fstat(fd).st_mode)) is not None:
            raise _special_file_error(shown, kind)
        head = handle.read(_SNIFF)
        if is_binary(head):
            raise _binary_error(path, shown, head)
        handle.seek(0)
        lines: list[str] = []
        unread: dict[int, int] = {}
        total = 0
        for total, (raw, left) in enumerate(_bounded_lines(handle), start=1):
            if total <= offset:
                continue
            if len(lines) == limit:
                return Page(lines, more=True, unread=unread)
            if left:
                unread[len(lines)] = left
            lines.append(_decode_line(raw, path, shown, first=total == 1, cut=bool(left)))
    if offset and total and not lines:
        raise ToolError(
            f"offset {offset} is past the end of {shown}, which has {total} lines: use an offset below {total}"
        )
    return Page(lines, more=False, unread=unread)


def _bounded_lines(handle: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line (with its newline) up to MAX_LINE_BYTES, and how many bytes of it were
    left unread: a file of one endless line costs a megabyte of memory, not its size."""
    while raw := handle.readline(MAX_LINE_BYTES):
        left = 0
        if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while chunk := handle.readline(MAX_LINE_BYTES):
                ended = chunk.endswith(b"\n")
                left += len(chunk) - ended  # the line's bytes, not its newline
                if ended:
                    break
        yield raw, left


def _special_file_error(shown: str, kind: str) -> ToolError:
    return ToolError(f"{shown} is {kind}, not a regular file: view reads files only")


def open_beneath_root(path: Path) -> int:
    """The canonical ``path`` opened for reading without blocking, walked from "/"
    without following a symlink, so what is read is the file whose path was judged: a
    folder swapped for a link to elsewhere after the check fails the read instead of
    redirecting it."""
    with Beneath(Path("/")) as fs:
        return fs.open_file(fs.relative(path))


def _decode_line(raw: bytes, path: Path, shown: str, *, first: bool, cut: bool = False) -> str:
    """``cut``: ``raw`` is the start of a longer line, which may end inside a character."""
    if first:
        raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
    except UnicodeDecodeError as err:
        if cut and err.reason == "unexpected end of data":
            return raw[: err.start].decode("utf-8")
        raise _binary_error(path, shown, b"") from None  # not UTF-8 after the sniffed start


def _binary_error(path: Path, shown: str, head: bytes) -> BinaryFileError:
    size = _human_size(path.stat().st_size)
    kind = image_type(path, head)
    if kind:
        return BinaryFileError(
            f"{shown} is an image ({kind}, {size}): view shows text only, so it cannot show its content"
        )
    return BinaryFileError(f"{shown} is a binary file ({size}), not UTF-8 text: view shows text files only")


def image_type(path: Path, head: bytes) -> str | None:
    """The image format of a binary file, by its first bytes, else by its extension."""
    for signature, kind in _IMAGE_SIGNATURES:
        if head.startswith(signature):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return _IMAGE_EXTENSIONS.get(path.suffix.lower())


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def missing_file_error(path: Path, shown: str) -> ToolError:
    """Not found, with up to three similar names from the same folder (typos, wrong case,
    a wrong extension are the usual reasons)."""
    folder = posixpath.dirname(shown)
    if not path.parent.is_dir():
        return ToolError(
            f"{shown} does not exist, nor does its folder {folder}: use glob or ls to find the file"
        )
    similar = similar_names(path.parent, path.name)
    if similar:
        guesses = ", ".join(posixpath.join(folder, name) for name in similar)
        return ToolError(
            f"{shown} does not exist. Did you mean: {guesses}? View one of those, or use glob to search"
        )
    return ToolError(f"{shown} does not exist: use ls {folder or '.'} or glob to find the file")
