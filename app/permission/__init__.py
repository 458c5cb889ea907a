"""Permissions: pure rule evaluation (`rules`), the asking service (`service`), its bus
events (`events`) and the CLI explanation (`explain`). See docs/permissions.md.

The names below are imported on first use (PEP 562), so importing ``app.permission.rules``
alone (the agent catalog does, and the chat's message widgets import the catalog) does not
load the configuration package behind the events and the service too.
``from app.permission import X`` works as with eager imports. The explanation's
functions are imported from ``app.permission.explain`` itself: the package does not hand
them out, as their first one bears the submodule's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from app.permission.events import (
        ApprovalMissing,
        PermissionGranted,
        PermissionRequested,
        PermissionResolved,
    )
    from app.permission.request import PermissionPreview, PermissionReply, PermissionRequest
    from app.permission.rules import Decision, default_action, evaluate_rules, match_wildcard
    from app.permission.service import PermissionService

_HOMES = {
    "app.permission.events": ("ApprovalMissing", "PermissionGranted", "PermissionRequested", "PermissionResolved"),
    "app.permission.request": ("PermissionPreview", "PermissionReply", "PermissionRequest"),
    "app.permission.rules": ("Decision", "default_action", "evaluate_rules", "match_wildcard"),
    "app.permission.service": ("PermissionService",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ApprovalMissing",
    "Decision",
    "PermissionGranted",
    "PermissionPreview",
    "PermissionReply",
    "PermissionRequest",
    "PermissionRequested",
    "PermissionResolved",
    "PermissionService",
    "default_action",
    "evaluate_rules",
    "match_wildcard",
]


__getattr__ = lazy_attributes(__name__, _HOME_OF)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
