"""The agent's side of the wire: session updates and permission questions sent to the
editor. A thin layer over the SDK's JSON-RPC ``Connection`` so a diff can carry docs/specs/004-acp-deleted.md's
``deleted`` flag, which the SDK's models (and so its typed client proxy) would drop."""

from __future__ import annotations

from typing import Any

from acp.connection import Connection
from acp.meta import CLIENT_METHODS
from acp.schema import (
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    ToolCallUpdate,
)
from acp.utils import serialize_params

from app.acp.updates import mark_deleted


class ClientChannel:
    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def update(self, session_id: str, update: Any) -> None:
        payload = serialize_params(SessionNotification(session_id=session_id, update=update))
        await self._connection.send_notification(CLIENT_METHODS["session_update"], mark_deleted(payload))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        request = RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
        payload = mark_deleted(serialize_params(request))
        answer = await self._connection.send_request(CLIENT_METHODS["session_request_permission"], payload)
        return RequestPermissionResponse.model_validate(answer)
