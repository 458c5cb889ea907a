"""What every tool is: a parameter model (its JSON schema is what the model sees), a
description written for models, and ``run(params, ctx)``. ``Tool.call`` is the one entry
the agent loop, the CLI and ACP use: it validates raw arguments into the model and turns
every failure into a ``ToolError`` a model can read and fix."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core import boundedjson
from app.core.errors import OpencodeError, ToolError

if TYPE_CHECKING:
    from pathlib import Path

    from app.bus import Bus
    from app.config import Config
    from app.lsp import LspManager
    from app.permission import PermissionService
    from app.store import HistoryService, TodoStore
    from app.store.journal import ChangeJournal
    from app.tools.jobs import JobTable
    from app.workspace import FileRecords, Workspace
    from app.workspace.lock import WorkspaceLock


class ToolParams(BaseModel):
    """Base of parameter models: unknown arguments are refused so typos reach the model."""

    model_config = ConfigDict(extra="forbid")


class ToolContext:
    """The services one tool call may use, and who is calling."""

    session_id: str
    agent: str
    workspace: Workspace
    records: FileRecords
    history: HistoryService
    journal: ChangeJournal
    """The change path's write-ahead journal (app/store/journal.py)."""
    workspace_lock: WorkspaceLock
    """Held by the change path, shared with every opencode process on the workspace."""
    permissions: PermissionService
    bus: Bus
    config: Config
    todos: TodoStore
    """The session's todo list (todowrite, todoread)."""
    message_id: str | None
    call_id: str | None
    lsp: LspManager | None
    """Language servers, for diagnostics after a change; None runs without them."""
    vision: bool
    """Whether the model in use takes images: view then returns an image it reads."""
    readable_folders: frozenset[Path]
    """Folders outside the workspace view may read without asking: those of the skills
    loaded in the session (app/skills/catalog.py)."""

    def __init__(
        self,
        *,
        session_id: str,
        agent: str,
        workspace: Workspace,
        records: FileRecords,
        history: HistoryService,
        journal: ChangeJournal,
        workspace_lock: WorkspaceLock,
        permissions: PermissionService,
        bus: Bus,
        config: Config,
        todos: TodoStore,
        message_id: str | None = None,
        call_id: str | None = None,
        lsp: LspManager | None = None,
        vision: bool = False,
        readable_folders: frozenset[Path] = frozenset(),
        jobs: JobTable | None = None,
    ) -> None:
        self.session_id = session_id
        self.agent = agent
        self.workspace = workspace
        self.records = records
        self.history = history
        self.journal = journal
        self.workspace_lock = workspace_lock
        self.permissions = permissions
        self.bus = bus
        self.config = config
        self.todos = todos
        self.message_id = message_id
        self.call_id = call_id
        self.lsp = lsp
        self.vision = vision
        self.readable_folders = readable_folders
        self.jobs = jobs
        """The runtime's background jobs (bash with background: true); None runs without them."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """``output`` is for the model; ``metadata`` for front-ends (diff, additions, files...)."""

    output: str
    metadata: dict[str, Any] = field(default_factory=dict)
    title: str = ""


class Tool(ABC):
    # A built-in tool sets its name and description on the class; an MCP server's tool, per instance.
    name: str
    params: ClassVar[type[ToolParams]]
    description: str
    read_only: ClassVar[bool] = False
    runs_alongside: ClassVar[bool] = False
    """Runs at the same time as the other such calls of its message, though it may change
    files (task: each child's changes go through the change path's locks and checks).
    Read-only tools always do."""

    @abstractmethod
    async def run(self, params: Any, ctx: ToolContext) -> ToolResult: ...

    def spec(self) -> dict[str, Any]:
        """The OpenAI-style function definition handed to the model."""
        schema = _inline_refs(self.params.model_json_schema())
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }

    def parse(self, arguments: str | dict[str, Any] | None) -> ToolParams:
        """Raw arguments (a JSON string from the model, or a dict) into the parameter model."""
        if arguments is None or arguments == "":
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = boundedjson.loads(arguments, unique_keys=True)
            except json.JSONDecodeError as err:
                raise ToolError(
                    f"{self.name}: the arguments are not valid JSON ({err.msg} at position {err.pos}): "
                    "send one JSON object with the parameters"
                ) from None
            except boundedjson.RepeatedKeyError as err:  # which of the two counts would be a guess
                raise ToolError(f"{self.name}: in the arguments, {err}: send each parameter once") from None
            except boundedjson.JsonLimitError as err:
                raise ToolError(
                    f"{self.name}: the arguments break a limit ({err}): send smaller, flatter arguments, "
                    "or split the work over several calls"
                ) from None
        if not isinstance(arguments, dict):
            raise ToolError(f"{self.name}: the arguments must be a JSON object, not {type(arguments).__name__}")
        _refuse_lone_surrogates(self.name, arguments)
        try:
            return self.params.model_validate(arguments)
        except ValidationError as err:
            raise ToolError(f"{self.name}: invalid arguments: {_describe(err)}") from None

    async def call(self, arguments: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        return await self.run_guarded(self.parse(arguments), ctx)

    async def run_guarded(self, params: Any, ctx: ToolContext) -> ToolResult:
        """``run``, with any exception that is not one of ours (a bug, an OSError no check
        foresaw, a RecursionError) turned into a ToolError the model can read: a tool
        never ends the turn or the command. Cancellation still propagates."""
        try:
            return await self.run(params, ctx)
        except OpencodeError:
            raise
        except Exception as err:
            detail = " ".join(str(err).split())
            raise ToolError(f"{self.name} failed unexpectedly ({type(err).__name__}: {detail})") from err


def _refuse_lone_surrogates(tool: str, arguments: dict[str, Any]) -> None:
    """JSON can carry half of a UTF-16 pair ("\\ud800"), which no text holds: no file name
    or file content can be made of it, and pydantic's own message ("unable to parse raw
    data") does not say so. Walked with a stack: the arguments may be deep."""
    stack: list[tuple[str, Any]] = [(key, value) for key, value in arguments.items()]
    stack += [("a parameter's name", key) for key in arguments]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ToolError(
                    f"{tool}: {where} contains an unpaired surrogate (character {err.start}): send valid Unicode text"
                ) from None
        elif isinstance(value, dict):
            stack += [(f"{where}.{key}", item) for key, item in value.items()]
            stack += [(f"a key in {where}", key) for key in value]
        elif isinstance(value, list):
            stack += [(f"{where}.{i}", item) for i, item in enumerate(value)]


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace pydantic's ``$defs``/``$ref`` with the definitions themselves and drop
    titles: some providers (Gemini among them) refuse references in tool schemas."""
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return resolve(definitions[node["$ref"].rsplit("/", 1)[-1]])
        out = {key: resolve(value) for key, value in node.items() if key not in ("title", "properties")}
        if "properties" in node:  # parameter names, not schema keywords: keep every one
            out["properties"] = {name: resolve(value) for name, value in node["properties"].items()}
        return out

    inlined: dict[str, Any] = resolve(schema)
    return inlined


def _describe(err: ValidationError) -> str:
    problems = []
    for item in err.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"{where} is required")
        elif item["type"] == "extra_forbidden":
            problems.append(f"{where} is not a parameter of this tool")
        else:
            problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)
