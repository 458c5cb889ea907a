"""A scripted model: plays answers from a JSON file, so the whole product runs offline
(tests, demos, the TUI with no provider configured). ``--model scripted/PATH.json``
selects it; ``scripted/demo`` is the packaged demo (app/llm/demo.json).

It has the same ``stream(...)`` as the litellm Provider, so the agent loop cannot tell
them apart. The format (docs/agents.md):

    {"contextWindow": 200000, "chunkDelay": 0.02,
     "turns": [{"match": "optional regex", "steps": [
         {"reasoning": "...", "text": "...", "toolCalls": [{"name": "edit", "arguments": {...}}]},
         ...]}]}

A request is answered from the first turn whose ``match`` is found (re.search) in the
request's last user message (a turn without ``match`` takes any); the step played is the
number of assistant messages since that user message, so after the tool results of step
1 comes step 2. ``arguments`` may be a string, sent as is (to script malformed JSON).

A step's ``report`` says what it did; ``{report}`` in a later step's text becomes the
list of the reports of the steps whose tool calls happened, or the script's
``reportNone``: so a closing summary tells what happened, not what was planned. A step
happened when each of its tool results matches its ``reportIf`` pattern (re.search) or,
without one, when none reads as a refusal (``FAILED_RESULT``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from app.core.errors import OpencodeError
from app.core.file_kinds import kind_of
from app.llm.messages import estimate_tokens
from app.llm.provider import (
    Finish,
    Provider,
    ProviderError,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from app.llm.provider import context_window as litellm_window
from app.llm.provider import supports_vision as litellm_vision

SCRIPTED_PREFIX = "scripted/"
DEMO_MODEL = "scripted/demo"
DEMO_SCRIPT = Path(__file__).parent / "demo.json"
_CHUNK = re.compile(r"\S+\s*|\s+")
"""Streaming pieces: a word with the spaces after it, like a real model's tokens."""
REPORT = "{report}"
FAILED_RESULT = (
    r'^(The user denied|Permission denied|skipped: |\{"ok": false)'
    r"|: (needs approval|denied by|the turn was cancelled)"
)
"""Tool results that say a call did not happen: a person's or a rule's refusal (as the
permission service words it), a call skipped after one, a failed patch (spec 002). Other
failures have no common form: a script names the success it expects with ``reportIf``."""


class ScriptError(OpencodeError):
    """The script file is missing or malformed; the message names the file and the key."""


class _ScriptModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)


class ScriptedCall(_ScriptModel):
    name: str
    arguments: dict[str, Any] | str = {}

    @field_validator("arguments", mode="before")
    @classmethod
    def _object_or_text(cls, arguments: Any) -> Any:
        """Checked here so the error names the key, not each member of the union."""
        if not isinstance(arguments, dict | str):
            raise ValueError("should be a JSON object, or a string sent as is")
        return arguments


def _compiled(pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ValueError(f"not a valid regular expression ({err})") from None
    return pattern


class Step(_ScriptModel):
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ScriptedCall] = []
    report: str = ""
    report_if: str | None = None

    _compiles = field_validator("report_if")(_compiled)

    def happened(self, results: list[str]) -> bool:
        """Whether the step's tool calls did what it reports (see the module doc)."""
        if self.report_if is not None:
            return all(re.search(self.report_if, result) for result in results)
        return not any(re.search(FAILED_RESULT, result) for result in results)


class Turn(_ScriptModel):
    match: str | None = None
    steps: list[Step] = Field(min_length=1)

    _compiles = field_validator("match")(_compiled)


class Script(_ScriptModel):
    context_window: int = Field(200_000, gt=0)
    chunk_delay: float = Field(0.0, ge=0)
    turns: list[Turn] = Field(min_length=1)
    report_none: str = "- nothing: no change was made"


def is_scripted(model: str) -> bool:
    return model.startswith(SCRIPTED_PREFIX)


def script_path(model: str) -> Path:
    """The file a ``scripted/...`` model names: the packaged demo, or a path (relative
    paths are taken from the current directory, as a shell user expects)."""
    name = model[len(SCRIPTED_PREFIX) :]
    return DEMO_SCRIPT if name == "demo" else Path(name).expanduser()


MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""A script larger than this is refused: no play needs it, and a file without end
(/dev/zero) must not be read whole."""


def _unreadable(path: Path, err: OSError) -> str:
    if isinstance(err, FileNotFoundError):
        return f"scripted model: no script at {path}; pass --model scripted/<existing file>.json"
    return f"scripted model: cannot read {path} ({err.strerror or err}); check the file"


def _not_a_script(path: Path, info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return f"scripted model: {path} is {kind_of(info.st_mode)}, not a regular file; pass --model scripted/<file>.json"
    if info.st_size > MAX_SCRIPT_BYTES:
        return (
            f"scripted model: {path} is {info.st_size:,} bytes, over the limit of {MAX_SCRIPT_BYTES:,} "
            "for a script; check that it is the right file"
        )
    return None


def _read_script(path: Path) -> bytes:
    """The file's bytes, opened without blocking (a FIFO put in its place) and checked
    on the descriptor before anything is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise ScriptError(_unreadable(path, err)) from None
    with os.fdopen(fd, "rb") as file:
        problem = _not_a_script(path, os.fstat(fd))
        if problem is not None:
            raise ScriptError(problem)
        return file.read(MAX_SCRIPT_BYTES + 1)


def load_script(path: Path) -> Script:
    raw_bytes = _read_script(path)
    try:
        raw = json.loads(raw_bytes.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ScriptError(f"scripted model: cannot read {path} ({err}); check the file") from None
    except json.JSONDecodeError as err:
        raise ScriptError(
            f"scripted model {path}: not valid JSON ({err.msg} at line {err.lineno}:{err.colno}); fix the file"
        ) from None
    try:
        return Script.model_validate(raw)
    except ValidationError as err:
        item = err.errors()[0]
        where = ".".join(str(part) for part in item["loc"]) or "the top level"
        raise ScriptError(f"scripted model {path}: {where}: {_problem(item)}; fix the script") from None


def _problem(item: ErrorDetails) -> str:
    """pydantic's words for one error, without its class names and prefixes."""
    if item["type"] in ("model_type", "dict_type"):
        return "should be a JSON object"
    return item["msg"].removeprefix("Value error, ")


class ScriptedProvider:
    """Plays a Script. Stateless between requests: what to play is read from the request."""

    def __init__(self, script: Script, *, name: str = "script") -> None:
        self.script = script
        self.name = name

    @classmethod
    def from_model(cls, model: str) -> ScriptedProvider:
        path = script_path(model)
        return cls(load_script(path), name=str(path))

    def context_window(self, model: str) -> int:
        return self.script.context_window

    def supports_vision(self, model: str) -> bool:
        """A script reads no images (and answering must not wait for litellm's import)."""
        return False

    async def stream(
        self, *, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, **options: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        """The next step of the matching turn, as a real provider would stream it.
        ``options`` (max_tokens, keys...) are accepted and ignored."""
        prompt, step_number = _position(messages)
        turn_number, turn = self._turn_for(prompt)
        if step_number >= len(turn.steps):
            raise ProviderError(
                f"scripted model {self.name}: turn {turn_number} has no step {step_number + 1}; "
                "end the turn with a step without toolCalls",
                "request",
            )
        step = turn.steps[step_number]
        answer = step.text
        if REPORT in answer:
            answer = answer.replace(REPORT, self._report(turn.steps[:step_number], _step_results(messages)))
        for kind, text in ((ReasoningDelta, step.reasoning), (TextDelta, answer)):
            for piece in _CHUNK.findall(text):
                if self.script.chunk_delay:
                    await asyncio.sleep(self.script.chunk_delay)
                yield kind(piece)
        for call in step.tool_calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            yield ToolCall(f"call_{uuid.uuid4().hex[:16]}", call.name, arguments)
        output = [step.reasoning, step.text, [call.model_dump() for call in step.tool_calls]]
        yield Usage(estimate_tokens([messages, tools]), estimate_tokens(output), 0.0)
        yield Finish("tool_calls" if step.tool_calls else "stop")

    def _report(self, steps: list[Step], results: list[list[str]]) -> str:
        """The reports of the steps played that happened, one "- " line each, or the
        script's ``reportNone``."""
        done = [
            f"- {step.report}"
            for step, outputs in zip(steps, results, strict=False)
            if step.report and step.happened(outputs)
        ]
        return "\n".join(done) or self.script.report_none

    def _turn_for(self, prompt: str) -> tuple[int, Turn]:
        for number, turn in enumerate(self.script.turns, start=1):
            if turn.match is None or re.search(turn.match, prompt):
                return number, turn
        shown = " ".join(prompt.split())[:60]
        raise ProviderError(
            f"scripted model {self.name}: no turn matches the prompt {shown!r}; add a turn whose match finds it",
            "request",
        )


def _position(messages: list[dict]) -> tuple[str, int]:
    """(text of the last user message, assistant messages after it)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            later = messages[index + 1 :]
            return _content_text(messages[index]["content"]), sum(m["role"] == "assistant" for m in later)
    return "", sum(m["role"] == "assistant" for m in messages)


def _step_results(messages: list[dict]) -> list[list[str]]:
    """The tool results after each assistant message since the last user message."""
    results: list[list[str]] = []
    for message in messages:
        if message["role"] == "user":
            results = []
        elif message["role"] == "assistant":
            results.append([])
        elif message["role"] == "tool" and results:
            results[-1].append(_content_text(message.get("content")))
    return results


def _content_text(content: str | list | None) -> str:
    if isinstance(content, list):  # the OpenAI "content parts" form
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def provider_for(model: str) -> ScriptedProvider | Provider:
    """The provider that serves ``model``: a ScriptedProvider for ``scripted/...``,
    otherwise the litellm Provider. Raises ScriptError for a bad script."""
    return ScriptedProvider.from_model(model) if is_scripted(model) else Provider()


class ProviderPerModel:
    """A provider for a loop whose turns may each name a different model (the sessions of
    ``opencode acp`` and ``opencode serve``): every call goes to the provider of its own
    model. A script is read again on each call, so a turn plays the file as it is now,
    as the run of a fresh process would; every other model shares one litellm Provider."""

    def __init__(self) -> None:
        self._litellm = Provider()

    def provider(self, model: str) -> ScriptedProvider | Provider:
        return ScriptedProvider.from_model(model) if is_scripted(model) else self._litellm

    def context_window(self, model: str) -> int:
        provider = self.provider(model)
        if isinstance(provider, ScriptedProvider):
            return provider.context_window(model)
        return litellm_window(model)

    def supports_vision(self, model: str) -> bool:
        provider = self.provider(model)
        if isinstance(provider, ScriptedProvider):
            return provider.supports_vision(model)
        return litellm_vision(model)

    def stream(self, *, model: str, **options: Any) -> AsyncGenerator[StreamEvent, None]:
        return self.provider(model).stream(model=model, **options)
