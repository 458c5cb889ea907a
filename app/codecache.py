"""Code compiled at import time, kept between runs, as ``__pycache__`` keeps modules.

Two things compile source text on every start, before any work: each ``@dataclass``
writes and compiles its ``__init__``, ``__repr__``, ``__eq__``... (about 470 before
``opencode tool`` can work, 320 before the TUI's first frame), and ``typing`` compiles
every string annotation it wraps in a ``ForwardRef`` (about 740, most of them in
pydantic-core's schema types). Together that was a quarter of ``opencode tool``'s
start-up here (about 90 ms). What they compile depends on nothing but the source text,
so a start can take it from the last one: ``install`` gives those two modules an
``exec`` and a ``compile`` that look the text up in a file of code objects and compile
only what is new; ``save`` writes the file back when something was new. The functions
and references made are the same as without it; a missing, stale or damaged file costs
the compilations it would have saved, nothing else.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
import threading
import typing
from collections.abc import Mapping
from contextlib import suppress
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

MAX_ENTRIES = 4_000
"""Past this many, only what the current process used is kept."""

Key = tuple[str, str]
"""(mode, source): "exec" for dataclass methods, "eval" for forward references."""

_file: Path | None = None
_cached: dict[Key, CodeType] = {}
_used: dict[Key, CodeType] = {}
_compiled_anew = False
_lock = threading.Lock()
"""Compilations happen on several threads (the TUI imports litellm in one), saves on another."""


def cache_file(profile: str, env: Mapping[str, str] = os.environ) -> Path:
    """One file per command (``profile``: each loads what it compiles, not what every
    other command did; the TUI's is five times ``opencode tool``'s) and per Python
    bytecode format, in the user's cache folder."""
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    tag = f"{profile}-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"
    return base / "opencode" / f"compiled-{tag}.marshal"


def install(profile: str) -> None:
    """Read the command's cache and route those compilations through it (once per
    process). Both names are module globals that shadow the builtins for that one module."""
    global _cached, _file
    if _file is not None:
        return
    _file = cache_file(profile)
    _cached = _load(_file)
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    typing.compile = _compile  # type: ignore[attr-defined]


def save() -> None:
    """Write the cache when this process compiled something it lacked since it was read
    or last saved; quietly skipped when the folder cannot be written (a read-only home).
    A long-running front-end saves once its start-up is done, not only when it ends: a
    closed terminal ends it with no chance to."""
    global _cached, _compiled_anew
    with _lock:  # held while writing too: two saves must not share the temp file
        if _file is None or not _compiled_anew:
            return
        entries = {**_cached, **_used} if len(_cached) + len(_used) <= MAX_ENTRIES else dict(_used)
        _cached, _compiled_anew = entries, False
        temp = _file.with_name(f"{_file.name}.{os.getpid()}.tmp")
        try:
            _file.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # this user's alone
            with os.fdopen(descriptor, "wb") as cache:
                cache.write(marshal.dumps(entries))
            os.replace(temp, _file)
        except OSError:
            with suppress(OSError):  # nothing to remove, or no folder to remove it from
                temp.unlink()


def _load(path: Path) -> dict[Key, CodeType]:
    """The cached code, from a file only this user can have written: code from it runs,
    so one another user could change (a shared or careless cache folder) is ignored."""
    try:
        with path.open("rb") as cache:
            owner = os.fstat(cache.fileno())
            if owner.st_uid != os.getuid() or owner.st_mode & 0o022:
                return {}
            entries = marshal.loads(cache.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {
        key: code for key, code in entries.items()
        if isinstance(key, tuple) and len(key) == 2 and isinstance(code, CodeType)
    }


def _compiled(source: str, mode: str) -> CodeType:
    """``dont_inherit``: compiled as those modules' own calls compile it, without the
    ``from __future__`` flags of this one."""
    global _compiled_anew
    key = (mode, source)
    code = _cached.get(key)
    if code is None:
        code = builtins.compile(source, "<string>", mode, dont_inherit=True)
    with _lock:
        _compiled_anew = _compiled_anew or key not in _cached
        _used[key] = code
    return code


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it."""
    if isinstance(source, str):
        source = _compiled(source, "exec")
    builtins.exec(source, globals, locals)


def _compile(source: Any, filename: str, mode: str, flags: int = 0, dont_inherit: bool = False,
             optimize: int = -1, **options: Any) -> Any:
    """``compile`` as ``typing`` calls it; any other use goes to the builtin unchanged."""
    if isinstance(source, str) and filename == "<string>" and not flags and optimize == -1 and not options:
        return _compiled(source, mode)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize, **options)
