"""Compiled dataclass methods, kept between runs, as ``__pycache__`` keeps modules.

Every ``@dataclass`` writes the source of its ``__init__``, ``__repr__``, ``__eq__``...
and compiles it, at import time, on every start: about 470 compilations before
``opencode tool`` can work (70 ms here, a quarter of its start-up) and 320 before the
TUI's first frame (50-60 ms), ours and our libraries' alike. The compiled code depends
on nothing but that source, so a start can take it from the last one: ``install`` gives
the ``dataclasses`` module an ``exec`` that looks the source up in a file of code
objects and compiles only what is new; ``save`` writes that file back when something
was new. The methods made are the same as without it; a missing, stale or damaged file
costs the compilations it would have saved, nothing else.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
from contextlib import suppress
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

MAX_ENTRIES = 5_000
"""Past this many, only what the current process used is kept."""

_cached: dict[str, CodeType] = {}
_used: dict[str, CodeType] = {}
_compiled_anew = False


def cache_file(env: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """One file per Python bytecode format, in the user's cache folder."""
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "opencode" / f"dataclass-code-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.marshal"


def install(path: Path | None = None) -> None:
    """Read the cache and route the dataclass compilations through it (idempotent)."""
    global _cached
    if getattr(dataclasses, "exec", None) is _exec:
        return
    _cached = _load(path or cache_file())
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # shadows the builtin for that module only


def save(path: Path | None = None) -> None:
    """Write the cache when this process compiled something it lacked; quietly skipped
    when the folder cannot be written (a read-only home)."""
    if not _compiled_anew:
        return
    entries = {**_cached, **_used} if len(_cached) + len(_used) <= MAX_ENTRIES else dict(_used)
    target = path or cache_file()
    temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(marshal.dumps(entries))
        os.replace(temp, target)
    except OSError:
        with suppress(OSError):  # nothing to remove, or no folder to remove it from
            temp.unlink()


def _load(path: Path) -> dict[str, CodeType]:
    try:
        entries = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {source: code for source, code in entries.items() if isinstance(source, str) and isinstance(code, CodeType)}


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, with the compilation of a source text taken
    from the cache. ``dont_inherit``: compiled as that module's own exec would be, without
    the ``from __future__`` flags of this one."""
    global _compiled_anew
    if isinstance(source, str):
        code = _cached.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _compiled_anew = True
        _used[source] = code
        source = code
    builtins.exec(source, globals, locals)
