"""Package attributes imported on first use (PEP 562), for packages whose cheap parts are
needed early (event classes before the TUI's first frame, the config loader by every
command) and whose other parts are not."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` for ``package``: ``homes`` maps a name to the module defining
    it; the name is imported from there when first asked for, and kept in the package."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
