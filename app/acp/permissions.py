"""ACP permission options and how each answer maps onto the permission service: "always"
means for this session only (the service remembers the tool and exact subject), never a
rule written to config."""

from __future__ import annotations

from typing import Literal

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from app.permission import PermissionReply
from app.permission.request import ReplyDecision

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Reject for this session", kind="reject_always"),
]
DECISIONS: dict[str, ReplyDecision] = {
    "allow_once": "allow_once",
    "allow_always": "allow_session",
    "reject_once": "deny",
    "reject_always": "deny_session",
}


def reply_for(response: RequestPermissionResponse) -> PermissionReply:
    """The service's reply for the client's answer; a cancelled or unknown answer denies."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome) and outcome.option_id in DECISIONS:
        return PermissionReply(DECISIONS[outcome.option_id])
    return PermissionReply("deny", "the editor cancelled the question", automatic=True)


def headless_policy(response: RequestPermissionResponse) -> Literal["headless", "headless-yes"] | None:
    """The policy a headless client answers by, named in the answer's ``_meta.opencode.policy``
    (a ``-p`` attached to ``opencode serve``): the question is then answered as that policy
    answers it in a run of its own (``PermissionService.headless_reply``), the same refusal
    message and the same calls counted as needing approval. None for a person's answer."""
    meta = (response.field_meta or {}).get("opencode")
    policy = meta.get("policy") if isinstance(meta, dict) else None
    return policy if policy in ("headless", "headless-yes") else None


def unanswered(error: Exception) -> PermissionReply:
    """The reply when the question itself failed (the editor answered with an error, or
    is gone): a denial, so the waiting call ends instead of hanging the turn."""
    return PermissionReply("deny", f"the editor could not answer the question ({error})", automatic=True)
