"""Long paths cut to a width the way a reader needs them: the file name kept whole, the
folders cut in the middle ("opencode-demo/…/cache-1.txt"). Every place the TUI shortens
a path uses this one function."""

from __future__ import annotations

ELLIPSIS = "…"


def shorten_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` characters: unchanged when it fits; else its leading
    folders (whole ones when one fits), "…/" and the file name; a file name too long by
    itself keeps its end (the extension) after "…"."""
    if len(path) <= width:
        return path
    if width <= 1:
        return ELLIPSIS[:width]
    folder, slash, name = path.rpartition("/")
    cut = f"{ELLIPSIS}/"
    room = width - len(name) - len(cut)
    if not slash or room < 0:
        return name if len(name) <= width else ELLIPSIS + name[len(name) - width + 1 :]
    head = folder[:room]
    if "/" in head:
        head = head[: head.rindex("/") + 1]
    return head + cut + name
