"""Language-server clients: diagnostics for the files the tools change."""

from typing import TYPE_CHECKING, Any

from app.lsp.diagnostic import MAX_DIAGNOSTICS_PER_FILE, Diagnostic, format_errors
from app.lsp.events import LspStatusChanged

if TYPE_CHECKING:  # the type checker sees the class that __getattr__ loads
    from app.lsp.manager import LspManager

__all__ = ["MAX_DIAGNOSTICS_PER_FILE", "Diagnostic", "LspManager", "LspStatusChanged", "format_errors"]


def __getattr__(name: str) -> Any:
    """The manager pulls in the config models (pydantic); the TUI imports this package for
    its events before the first frame, so the manager loads on first use instead."""
    if name == "LspManager":
        from app.lsp.manager import LspManager

        return LspManager
    raise AttributeError(f"module 'app.lsp' has no attribute {name!r}")
