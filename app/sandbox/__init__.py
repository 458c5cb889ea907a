"""The OS sandbox bash commands run in (docs/sandbox.md): bubblewrap or Landlock on
Linux, `sandbox-exec` on macOS, with a policy made from the permission rules."""

from __future__ import annotations

from app.config import Config
from app.sandbox.mechanisms import Availability, detect, unavailable_notice


def sandbox_notice(config: Config, availability: Availability) -> str | None:
    """The start-up line when bash runs without the sandbox wanted here, or None."""
    return unavailable_notice(availability, config.sandbox.mechanism, config.sandbox.required)


__all__ = ["Availability", "detect", "sandbox_notice"]
