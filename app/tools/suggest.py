"""'Did you mean' suggestions for a path that does not exist.

A model that mistypes a file name recovers in one step when the error lists the
near misses beside it; view, edit and the other path-taking tools share this helper
so every tool suggests the same names the same way.
"""

from pathlib import Path

# Below this similarity (0-100) a name is noise rather than a plausible typo.
_MIN_SCORE = 60.0


def similar_names(directory: Path, name: str, limit: int = 3) -> list[str]:
    """Up to `limit` entry names in `directory` that look like `name`, best first.

    Matching ignores case and punctuation differences (rapidfuzz's default
    processor), so `readme.MD` suggests `README.md`. A missing or unreadable
    directory gives no suggestions rather than an error: the caller is already
    reporting a missing path and a second failure would only add noise.
    """
    from rapidfuzz import fuzz, process, utils  # only a missing path pays for its import

    try:
        entries = sorted(entry.name for entry in directory.iterdir())
    except OSError:
        return []
    matches = process.extract(
        name,
        entries,
        scorer=fuzz.ratio,
        processor=utils.default_process,
        limit=limit,
        score_cutoff=_MIN_SCORE,
    )
    return [entry for entry, _score, _index in matches]
