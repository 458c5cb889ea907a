"""What the prompt's completion lists offer: the workspace's files and folders for ``@``
(as the search tools see them: ignore files and skipped folders respected), and a fuzzy
ranking shared with the command list for ``/``.

The ranking is a fuzzy finder's: every typed character must appear in order, and among
those candidates rapidfuzz scores how well the query reads as the name, the path, or the
initials of the folders followed by the name, so ``sapp`` finds ``src/app.py`` first.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

from app.tools.ignore import walk

MAX_PATHS = 20_000
"""A workspace with more files than this offers the first ones, shallowest first."""
MAX_SHOWN = 50


def workspace_paths(root: Path, skip: Sequence[str] = ()) -> list[str]:
    """The files and folders below ``root`` (folders end with "/"), shallowest first, not
    ignored; ``skip`` are root-relative folders left out (the database folder)."""
    paths: list[str] = []
    for entry in walk(root, root, skip=skip):
        paths.append(entry.rel + "/" if entry.is_dir else entry.rel)
        if len(paths) == MAX_PATHS:
            break
    return paths


def rank(query: str, candidates: Iterable[str], limit: int = MAX_SHOWN) -> list[str]:
    """The candidates that hold the query's characters in order (ignoring case), best
    first (those a way of typing them begins with before the others); all of them, in
    their order, for an empty query."""
    candidates = list(candidates)
    if not query:
        return candidates[:limit]
    from rapidfuzz import fuzz, utils  # loaded when a list is first filtered

    pattern = re.compile(".*?".join(map(re.escape, query)), re.IGNORECASE)
    typed = utils.default_process(query)
    scored = []
    for candidate in filter(pattern.search, candidates):
        views = _views(candidate)
        begins = any(view.startswith(typed) for view in views)
        best = max(fuzz.ratio(typed, view, score_cutoff=0) for view in views)
        scored.append((not begins, -best, len(candidate), candidate))
    return [candidate for *_, candidate in heapq.nsmallest(limit, scored)]


def prepare(candidates: Iterable[str]) -> None:
    """Work out ahead, in the caller's thread, what ``rank`` compares for each candidate
    (kept per candidate), so the first key typed filters as fast as the next."""
    for candidate in candidates:
        _views(candidate)


@lru_cache(maxsize=MAX_PATHS)
def _views(candidate: str) -> tuple[str, ...]:
    """How a candidate may be typed, as rapidfuzz compares it (lower case, punctuation
    as spaces): whole, without its extension, its name alone, and the initials of its
    folders followed by its name ("src/app.py" -> "sapp"). Kept per candidate, since a
    list is filtered again at every key."""
    from rapidfuzz import utils

    path = PurePosixPath(candidate.rstrip("/"))
    stem = path.stem if path.stem else path.name
    initials = "".join(part[0] for part in path.parts[:-1] if part)
    views = (candidate, str(path.with_suffix("")) if path.suffix else str(path), stem, initials + stem)
    return tuple(utils.default_process(view) for view in views)
