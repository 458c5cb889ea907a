"""Permissions: pure rule evaluation (`rules`), the asking service (`service`), its bus
events (`events`) and the CLI explanation (`explain`). See docs/permissions.md."""

from app.permission.events import ApprovalMissing, PermissionGranted, PermissionRequested, PermissionResolved
from app.permission.explain import explain, normalize_subject
from app.permission.request import PermissionPreview, PermissionReply, PermissionRequest
from app.permission.rules import Decision, default_action, evaluate_rules, match_wildcard
from app.permission.service import PermissionService

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
    "explain",
    "match_wildcard",
    "normalize_subject",
]
