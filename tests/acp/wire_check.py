"""A recorded ACP conversation held to the protocol: each frame's shape against
acp_schema.json (ACP v1's rules for the messages we use, written from the official
schema), and the rules no schema can state: JSON-RPC envelopes and error codes, every
request answered once and no notification answered, nothing about a session before the
editor knows its id, and no turn output once the turn's response is out.

``conversation_problems(frames)`` takes ``(sender, message)`` pairs in the order the editor
saw them (sender "client" or "agent") and returns one line per problem: an empty list is
a conforming conversation."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA = json.loads(Path(__file__).with_name("acp_schema.json").read_text())
CLIENT, AGENT = "client", "agent"

# method -> (definition of its params, definition of its result, or None for a notification)
CLIENT_METHODS = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/set_mode": ("SetSessionModeRequest", "SetSessionModeResponse"),
    "session/prompt": ("PromptRequest", "PromptResponse"),
    "session/cancel": ("CancelNotification", None),
}
# The editor advertises no fs or terminal capability, so the agent may use only these.
AGENT_METHODS = {
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "session/update": ("SessionNotification", None),
}
# Requests during which the agent streams a session's output (a load replays it).
TURN_REQUESTS = {"session/prompt", "session/load"}
TURN_UPDATES = {"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update",
                "usage_update", "plan"}  # fmt: skip
# JSON-RPC reserves -32768..-32000: there only its own codes, ACP's -32800 (request
# cancelled) and the implementation-defined server errors -32099..-32000 may be used.
RESERVED = range(-32768, -31999)
SERVER_ERRORS = range(-32099, -31999)
DEFINED_CODES = {-32700, -32600, -32601, -32602, -32603, -32800}


def definition_problems(definition: str, instance: Any) -> list[str]:
    """Where ``instance`` breaks ``#/$defs/<definition>``, one line per rule broken. When a
    variant fails, every field it declares also reads as "unevaluated": that echo is left
    out unless nothing else is wrong (then it is a field no variant knows)."""
    errors = list(_validator(definition).iter_errors(instance))
    errors = [error for error in errors if error.validator != "unevaluatedProperties"] or errors
    errors.sort(key=lambda error: list(map(str, error.absolute_path)))
    return [f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}" for error in errors]


@cache
def _validator(definition: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]})


def error_code_problem(code: Any) -> str | None:
    if not isinstance(code, int) or isinstance(code, bool):
        return f"error code {code!r} is not an integer"
    if code in RESERVED and code not in DEFINED_CODES and code not in SERVER_ERRORS:
        return f"error code {code} is reserved by JSON-RPC and means nothing defined"
    return None


@dataclass
class _Request:
    method: str
    session_id: str | None


@dataclass
class _Conversation:
    problems: list[str] = field(default_factory=list)
    pending: dict[tuple[str, Any], _Request] = field(default_factory=dict)
    known_sessions: set[str] = field(default_factory=set)
    running_turns: Counter[str] = field(default_factory=Counter)

    def read(self, index: int, sender: str, message: dict[str, Any]) -> None:
        if message.get("jsonrpc") != "2.0":
            self._note(index, sender, message, f'jsonrpc is {message.get("jsonrpc")!r}, not "2.0"')
        if "method" in message:
            self._call(index, sender, message)
        else:
            self._response(index, sender, message)

    def finish(self) -> list[str]:
        for (asker, request_id), request in self.pending.items():
            self.problems.append(f"{asker}'s {request.method} request {request_id!r} was never answered")
        return self.problems

    def _call(self, index: int, sender: str, message: dict[str, Any]) -> None:
        method = message["method"]
        methods = CLIENT_METHODS if sender == CLIENT else AGENT_METHODS
        if method not in methods:
            self._note(index, sender, message, "a method the other side never offered")
            return
        params_definition, result_definition = methods[method]
        params = message.get("params")
        for problem in definition_problems(params_definition, params):
            self._note(index, sender, message, f"params {problem}")
        is_request = "id" in message
        if is_request and result_definition is None:
            self._note(index, sender, message, "a notification sent with an id")
        if not is_request and result_definition is not None:
            self._note(index, sender, message, "a request sent without an id")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if sender == AGENT:
            self._check_agent_timing(index, message, session_id)
        if is_request:
            self._open(index, sender, message, _Request(method, session_id))

    def _open(self, index: int, sender: str, message: dict[str, Any], request: _Request) -> None:
        key = (sender, message["id"])
        if not isinstance(message["id"], (int, str)) or isinstance(message["id"], bool):
            self._note(index, sender, message, f"request id {message['id']!r} is neither a number nor a string")
        if key in self.pending:
            self._note(index, sender, message, f"request id {message['id']!r} is already waiting for an answer")
        self.pending[key] = request
        if sender == CLIENT and request.session_id:
            self.known_sessions.add(request.session_id)
            if request.method in TURN_REQUESTS:
                self.running_turns[request.session_id] += 1

    def _check_agent_timing(self, index: int, message: dict[str, Any], session_id: str | None) -> None:
        if session_id is None:
            return
        if session_id not in self.known_sessions:
            self._note(index, AGENT, message, f"names session {session_id} before the editor learned its id")
        update = message["params"].get("update") or {}
        is_turn_output = message["method"] == "session/request_permission" or update.get("sessionUpdate") in TURN_UPDATES
        if is_turn_output and not self.running_turns[session_id]:
            self._note(index, AGENT, message, f"turn output for {session_id} while no prompt or load of it runs")

    def _response(self, index: int, sender: str, message: dict[str, Any]) -> None:
        asker = AGENT if sender == CLIENT else CLIENT
        request = self.pending.pop((asker, message.get("id")), None)
        if request is None:
            self._note(index, sender, message, f"answers id {message.get('id')!r}, which no open request has")
            return
        if ("result" in message) == ("error" in message):
            self._note(index, sender, message, "a response needs exactly one of result and error")
        if "error" in message:
            self._error(index, sender, message)
        elif "result" in message:
            self._result(index, sender, message, request)
        if asker == CLIENT and request.method in TURN_REQUESTS and request.session_id:
            self.running_turns[request.session_id] -= 1

    def _error(self, index: int, sender: str, message: dict[str, Any]) -> None:
        for problem in definition_problems("Error", message["error"]):
            self._note(index, sender, message, f"error {problem}")
        code_problem = error_code_problem((message["error"] or {}).get("code"))
        if code_problem:
            self._note(index, sender, message, code_problem)

    def _result(self, index: int, sender: str, message: dict[str, Any], request: _Request) -> None:
        methods = CLIENT_METHODS if sender == AGENT else AGENT_METHODS
        result = message["result"]
        for problem in definition_problems(methods[request.method][1], result):
            self._note(index, sender, message, f"result of {request.method} {problem}")
        if request.method == "session/new" and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self.known_sessions.add(result["sessionId"])

    def _note(self, index: int, sender: str, message: dict[str, Any], problem: str) -> None:
        what = message.get("method") or f"response {message.get('id')!r}"
        self.problems.append(f"frame {index} ({sender} {what}): {problem}")


def conversation_problems(frames: list[tuple[str, dict[str, Any]]]) -> list[str]:
    conversation = _Conversation()
    for index, (sender, message) in enumerate(frames):
        conversation.read(index, sender, message)
    return conversation.finish()
