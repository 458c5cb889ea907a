"""Language-server clients: diagnostics for the files the tools change."""

from app.lsp.diagnostic import MAX_DIAGNOSTICS_PER_FILE, Diagnostic, format_errors
from app.lsp.events import LspStatusChanged
from app.lsp.manager import LspManager

__all__ = ["MAX_DIAGNOSTICS_PER_FILE", "Diagnostic", "LspManager", "LspStatusChanged", "format_errors"]
