"""Diagnostics as the rest of the program sees them: a small value type free of
lsprotocol (which costs most of a second to import), and the text models read."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ERROR = 1
WARNING = 2
SEVERITY_NAMES = {1: "error", 2: "warning", 3: "info", 4: "hint"}

MAX_DIAGNOSTICS_PER_FILE = 20
"""docs/specs/001-edit.md: at most this many errors of a file are shown after an edit."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in a file; ``line`` and ``column`` count from 1, as editors show them."""

    line: int
    column: int
    severity: int
    message: str
    source: str = ""

    @property
    def severity_name(self) -> str:
        return SEVERITY_NAMES.get(self.severity, "error")

    def pretty(self) -> str:
        """``line L:C: message``, the message on one line."""
        message = " ".join(self.message.split())
        return f"line {self.line}:{self.column}: {message}"

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, the severity by its name: what tool results carry."""
        return {**asdict(self), "severity": self.severity_name}


def errors_only(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == ERROR]


def format_errors(rel: str, diagnostics: list[Diagnostic]) -> str:
    """Spec 001 step 10: the block appended to a writing tool's output ("" when the
    file has no errors), at most MAX_DIAGNOSTICS_PER_FILE of them."""
    errors = errors_only(diagnostics)
    if not errors:
        return ""
    lines = [f"  {d.pretty()}" for d in errors[:MAX_DIAGNOSTICS_PER_FILE]]
    if len(errors) > MAX_DIAGNOSTICS_PER_FILE:
        lines.append(f"  ... and {len(errors) - MAX_DIAGNOSTICS_PER_FILE} more")
    return f"\n\nLSP errors in {rel}:\n" + "\n".join(lines)
