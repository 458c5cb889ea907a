"""The one door to litellm: streams a chat completion as our own small event types.

litellm is imported here only, lazily and in a background thread, because its import
costs seconds and the TUI's first frame must not wait for it. Nothing litellm-typed
leaves this module: callers see the frozen dataclasses below and `ProviderError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import importlib
import json
import os
import random
import re
import threading
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, Unpack

from app.core.child_environment import set_own
from app.core.errors import OpencodeError
from app.llm.caching import takes_breakpoints, with_breakpoints
from app.llm.models import DEFAULT_MODELS, PROVIDER_ENV_VARS, Prices, StreamOptions, provider_of

DEFAULT_CONTEXT_WINDOW = 128_000
# Modules litellm imports only during the first request, which runs on the event loop:
# importing them in the background thread too keeps that request from freezing the UI.
# Public modules only; one missing in another version is skipped.
FIRST_REQUEST_MODULES = ("openai.resources",)
# Retry-After is honoured up to this many base delays (60 s with the default 1 s base).
MAX_DELAY_FACTOR = 60

# -- stream events ------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A fragment of a tool call as it streams, so a front-end can show it early.
    `id` and `name` are set on the fragment that first carries them."""

    index: int
    id: str | None
    name: str | None
    arguments_delta: str


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call, emitted after the stream ends. `arguments` is the JSON text
    as the model wrote it ("{}" when it sent none); parsing it is the caller's job."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ThinkingBlock:
    """One whole thinking block as the provider signed it, emitted after the stream ends,
    to be sent back unchanged when the conversation goes on (Anthropic requires it after
    a tool call). `redacted` holds the opaque data of a redacted block (text empty)."""

    text: str
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True)
class Usage:
    """Tokens of one response. `prompt_tokens` counts the whole prompt, cached parts
    included; `cache_read_tokens` of it came from the prompt cache and
    `cache_write_tokens` were written to it (each priced differently)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Finish:
    reason: str  # "stop" | "tool_calls" | "length" | "content_filter" | ...


@dataclass(frozen=True)
class Retrying:
    """The request failed before any content and will be sent again after `delay` seconds."""

    attempt: int
    delay: float
    reason: str


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | ToolCall | ThinkingBlock | Usage | Finish | Retrying

# -- errors -------------------------------------------------------------------------------

ErrorKind = Literal[
    "auth", "unknown_model", "context_length", "rate_limit", "timeout", "connection", "server", "request", "unsent"
]
RETRYABLE_KINDS: frozenset[ErrorKind] = frozenset({"rate_limit", "timeout", "connection", "server"})


class ProviderError(OpencodeError):
    """The model call failed. `kind` lets the agent loop react (e.g. compact the session on
    "context_length"); `str(err)` is the one line shown to the user."""

    def __init__(self, message: str, kind: ErrorKind) -> None:
        super().__init__(message)
        self.kind = kind


# -- lazy import --------------------------------------------------------------------------


class _LitellmLoader:
    """Imports litellm once, in a daemon thread, and hands the module to whoever waits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._module: ModuleType | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load, name="litellm-import", daemon=True)
                self._thread.start()

    def _load(self) -> None:
        # The price map would otherwise be fetched from GitHub at import time; litellm
        # reads the switch from the environment only, so it is set there, for us alone.
        if "LITELLM_LOCAL_MODEL_COST_MAP" not in os.environ:
            set_own("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except BaseException as exc:  # noqa: BLE001 - reported to every waiter instead
            self._error = exc
            return
        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on errors
        # litellm counts a streamed request's prompt with a tokenizer (tens of megabytes,
        # loaded on the event loop by the first request) to price it as it starts; the
        # providers' usage chunk gives the counts and our price is computed from it, so
        # counting is off, and on only for a reply that came without usage (_estimated).
        litellm.disable_token_counter = True
        _import_available(FIRST_REQUEST_MODULES)
        self._module = litellm

    def _result(self) -> ModuleType:
        if self._module is None:
            raise ProviderError(
                f"Could not import litellm ({self._error}): reinstall opencode's dependencies", "request"
            )
        return self._module

    async def imported(self) -> ModuleType:
        self.start()
        if self._module is None:
            assert self._thread is not None
            await asyncio.to_thread(self._thread.join)
        return self._result()

    def get_blocking(self) -> ModuleType:
        self.start()
        assert self._thread is not None
        self._thread.join()
        return self._result()


def _import_available(names: tuple[str, ...]) -> None:
    """Import what this litellm version has of ``names`` (a renamed module is skipped)."""
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


_loader = _LitellmLoader()


def start_background_import() -> None:
    """Begin importing litellm (and warming its first request) now, idempotently, so it is
    ready when the first prompt is sent."""
    _loader.start()


async def litellm_imported() -> ModuleType:
    """The litellm module once the background import is done (started if it was not),
    without loading what a request adds: for a front-end that acts after the import."""
    return await _loader.imported()


async def ensure_litellm() -> ModuleType:
    """The litellm module ready for a request, waiting without blocking the event loop."""
    return await _loader.imported()


# -- model facts --------------------------------------------------------------------------


def _model_info(model: str) -> Mapping[str, Any] | None:
    """litellm's entry for the model, or None when its price map does not know it.
    Blocks until litellm is imported: call after `ensure_litellm()` in UI code."""
    litellm = _loader.get_blocking()
    try:
        return litellm.get_model_info(model)
    except Exception:  # litellm raises a bare Exception for models it has not mapped
        return None


def context_window(model: str) -> int:
    """How many input tokens the model accepts (DEFAULT_CONTEXT_WINDOW when unknown)."""
    info = _model_info(model) or {}
    return info.get("max_input_tokens") or info.get("max_tokens") or DEFAULT_CONTEXT_WINDOW


def supports_vision(model: str) -> bool:
    """Whether litellm's model map says the model takes images (False when unknown)."""
    return bool((_model_info(model) or {}).get("supports_vision"))


def _cost(litellm: ModuleType, model: str, tokens: TokenCounts, prices: Prices | None) -> float:
    """What the response cost: the configured prices of a custom model, else litellm's
    (cache reads and writes at their own prices), else 0 for a model nobody priced."""
    if prices is not None:
        return prices.cost(
            tokens.uncached, tokens.completion, tokens.cache_read, tokens.cache_write
        )
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model,
            prompt_tokens=tokens.prompt,
            completion_tokens=tokens.completion,
            cache_read_input_tokens=tokens.cache_read,
            cache_creation_input_tokens=tokens.cache_write,
        )
    except Exception:  # unknown model: free as far as we can tell, never an error
        return 0.0
    return prompt_cost + completion_cost


@dataclass(frozen=True)
class TokenCounts:
    prompt: int = 0
    """The whole prompt, cached parts included."""
    completion: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def uncached(self) -> int:
        return max(0, self.prompt - self.cache_read - self.cache_write)


def _estimated(litellm: Any, request: Mapping[str, Any], reply: str) -> TokenCounts:
    """Token counts for a reply whose server sent no usage, by litellm's token counter,
    on only for this count (it loads its tokenizer on the first use: in a thread)."""
    litellm.disable_token_counter = False
    try:
        prompt = litellm.token_counter(model=request["model"], messages=request["messages"])
        completion = litellm.token_counter(model=request["model"], text=reply)
    finally:
        litellm.disable_token_counter = True
    return TokenCounts(prompt=prompt, completion=completion)


# -- assembling a stream ------------------------------------------------------------------


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _PendingThinking:
    text: list[str] = field(default_factory=list)
    signature: str = ""
    redacted: str = ""


def _token_counts(usage: Any) -> TokenCounts:
    """litellm's usage object: Anthropic's cache counts are its own fields, OpenAI's and
    Gemini's cached tokens are under prompt_tokens_details."""
    details = getattr(usage, "prompt_tokens_details", None)
    cache_read = getattr(usage, "cache_read_input_tokens", None) or getattr(details, "cached_tokens", None)
    return TokenCounts(
        prompt=usage.prompt_tokens or 0,
        completion=usage.completion_tokens or 0,
        cache_read=cache_read or 0,
        cache_write=getattr(usage, "cache_creation_input_tokens", None) or 0,
    )


class _StreamAssembler:
    """Turns litellm chunks into events, gathering tool-call fragments by index and
    remembering the finish reason and usage that arrive on the last chunks."""

    def __init__(self) -> None:
        self.streamed_content = False
        self._calls: dict[int, _PendingCall] = {}
        self._thinking: dict[int, _PendingThinking] = {}
        self._finish_reason: str | None = None
        self._usage: TokenCounts | None = None
        self._text: list[str] = []

    def feed(self, chunk: Any) -> list[StreamEvent]:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = _token_counts(usage)
        events: list[StreamEvent] = []
        for choice in chunk.choices or []:
            self._finish_reason = choice.finish_reason or self._finish_reason
            delta = choice.delta
            for block in getattr(delta, "thinking_blocks", None) or []:
                self._thinking_fragment(block)
            if reasoning := getattr(delta, "reasoning_content", None):
                events.append(ReasoningDelta(reasoning))
            if delta.content:
                events.append(TextDelta(delta.content))
                self._text.append(delta.content)
            events.extend(self._tool_fragment(fragment) for fragment in delta.tool_calls or [])
        self.streamed_content = self.streamed_content or bool(events)
        return events

    def _tool_fragment(self, fragment: Any) -> ToolCallDelta:
        """litellm gives every fragment an index (it fills one in for providers that don't)."""
        call = self._calls.setdefault(fragment.index, _PendingCall())
        name = fragment.function.name
        arguments = fragment.function.arguments or ""
        call.id = call.id or fragment.id or ""
        call.name = call.name or name or ""
        call.arguments.append(arguments)
        return ToolCallDelta(fragment.index, fragment.id, name, arguments)

    def _thinking_fragment(self, block: Mapping[str, Any]) -> None:
        """litellm streams a thinking block as pieces of text, then its signature, all
        carrying the block's index; a redacted block comes whole."""
        pending = self._thinking.setdefault(block.get("index") or 0, _PendingThinking())
        pending.text.append(block.get("thinking") or "")
        pending.signature = block.get("signature") or pending.signature
        pending.redacted = block.get("data") or pending.redacted

    def thinking_blocks(self) -> list[ThinkingBlock]:
        """The signed blocks (unsigned reasoning cannot be sent back, so it is not one)."""
        blocks = [
            ThinkingBlock("".join(pending.text), pending.signature, pending.redacted)
            for _, pending in sorted(self._thinking.items())
        ]
        return [block for block in blocks if block.signature or block.redacted]

    def tool_calls(self) -> list[ToolCall]:
        return [
            ToolCall(call.id, call.name, "".join(call.arguments) or "{}")
            for _, call in sorted(self._calls.items())
        ]

    def usage_tokens(self) -> TokenCounts:
        """The usage chunk's counts; litellm fills in zeros when the server sends none
        (its token counter is off: see _estimated)."""
        return self._usage or TokenCounts()

    def text(self) -> str:
        """What the reply said (its text and its tool calls' arguments), for an estimate."""
        return "".join(self._text) + "".join("".join(call.arguments) for call in self._calls.values())

    def finish_reason(self) -> str:
        reason = self._finish_reason or "stop"
        if self._calls and reason == "stop":  # some providers say "stop" even when they call tools
            return "tool_calls"
        return reason


# -- error mapping ------------------------------------------------------------------------

_CONTEXT_HINTS = re.compile(
    r"context_length_exceeded|maximum context length|context window|prompt is too long|too many tokens",
    re.IGNORECASE,
)
# Gemini answers a bad key with HTTP 400 and this reason, not 401.
_KEY_REFUSED = re.compile(r"API_KEY_INVALID|API key not valid")
_NETWORK_HINTS = re.compile(
    r"connect|disconnect|closed|reset by peer|refused|network|unreachable|EOF|SSL|RemoteProtocol|ReadError",
    re.IGNORECASE,
)
_NO_PROVIDER = "LLM Provider NOT provided"
"""litellm's words for a model name whose prefix is no provider it knows."""
# litellm prefixes messages with its class names: "litellm.BadRequestError: OpenAIException - ..."
_LITELLM_PREFIX = re.compile(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)(?::| -)\s*)+")


def _detached(value: Any) -> Any:
    """A copy of a JSON-shaped value whose dicts and lists are its own (strings are shared):
    the loop keeps the messages of earlier requests (app.llm.chat_history), and nothing
    promises that each of litellm's provider routes leaves what it is given as it was."""
    if isinstance(value, dict):
        return {key: _detached(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_detached(item) for item in value]
    return value


def _detail(exc: BaseException) -> str:
    """The provider's own words, on one line and short."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, Mapping) else None
    text = message if isinstance(message, str) and message else _quoted_message(str(exc))
    text = _LITELLM_PREFIX.sub("", " ".join(text.split()))
    text = text.split(" Original exception:")[0] or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


_QUOTED_BODY = re.compile(r"\{.*\}", re.DOTALL)


def _quoted_message(text: str) -> str:
    """The error message inside a response body that litellm quotes whole (Anthropic's
    {"error": {"message"}}, Google's likewise), else the text as it is."""
    found = _QUOTED_BODY.search(text)
    if found is None:
        return text
    try:
        error = json.loads(found.group()).get("error")
    except (ValueError, AttributeError):
        return text
    message = error.get("message") if isinstance(error, Mapping) else None
    return message if isinstance(message, str) and message else text


def _classify(litellm: ModuleType, exc: BaseException) -> ErrorKind:
    status = getattr(exc, "status_code", None)
    text = str(exc)
    if isinstance(exc, litellm.ContextWindowExceededError) or _CONTEXT_HINTS.search(text):
        return "context_length"
    if isinstance(exc, litellm.AuthenticationError) or status in (401, 403) or _KEY_REFUSED.search(text):
        return "auth"
    if isinstance(exc, litellm.NotFoundError) or status == 404 or _NO_PROVIDER in text:
        return "unknown_model"
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return "rate_limit"
    client_error = isinstance(status, int) and 400 <= status < 500
    if isinstance(exc, litellm.Timeout) or status == 408 or ("timeout" in text.lower() and not client_error):
        return "timeout"
    if "Connection error" in text:  # litellm reports a refused connection as HTTP 500
        return "connection"
    if isinstance(exc, litellm.APIConnectionError):
        # litellm also wraps, as a connection error "HTTP 500", what failed before any
        # request was sent (a history it cannot convert): retrying cannot help that.
        # Its own words only: not the class names before them nor the traceback after.
        first_line = _LITELLM_PREFIX.sub("", text.strip().split("\n", 1)[0])
        return "connection" if _NETWORK_HINTS.search(first_line) else "unsent"
    if isinstance(status, int) and status >= 500:
        return "server"
    return "request"


def _error_message(
    kind: ErrorKind, model: str, exc: BaseException, retries: int, base_url: str | None
) -> str:
    detail = _detail(exc)
    status = getattr(exc, "status_code", None)
    after = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
    name = provider_of(model) or "<provider>"
    match kind:
        case "auth":
            var = PROVIDER_ENV_VARS.get(name)
            where = f"{var} or providers.{name}.apiKey" if var else f"providers.{name}.apiKey"
            return f"The provider rejected the API key for {model}: check {where} in .opencode.json"
        case "unknown_model" if not provider_of(model):
            return f"Unknown model {model}: name its provider too, as provider/model (e.g. {DEFAULT_MODELS['anthropic']})"
        case "unknown_model" if _NO_PROVIDER in str(exc):
            return (
                f"Unknown model {model}: there is no provider called {name!r}; "
                f"name a known one, as provider/model (e.g. {DEFAULT_MODELS['anthropic']})"
            )
        case "unknown_model":
            return f"Unknown model {model}: the provider does not serve it ({detail}); check the name or pass another --model"
        case "context_length":
            return (
                f"The conversation is too long for {model} ({detail}): compact the session or start a new one"
            )
        case "rate_limit":
            return f"{model} is rate-limited{after}: wait a minute and try again, or choose another model ({detail})"
        case "timeout":
            return f"{model} did not answer in time{after}: check the network and try again"
        case "connection":
            where = f" at {base_url}" if base_url else ""
            return f"Could not reach the provider for {model}{where}{after}: check the network or the baseURL setting"
        case "server":
            return f"The provider of {model} failed (HTTP {status}){after}: try again later ({detail})"
        case "unsent":
            return f"Could not send the request to {model} ({detail}): please report it"
        case _:
            return f"{model} rejected the request (HTTP {status or '?'}): {detail}"


def _cut_message(model: str) -> str:
    """A connection that broke after part of the answer came: the provider was reached."""
    return (
        f"The connection to the provider of {model} dropped in the middle of its answer: "
        "what it had sent is kept in the conversation; send your prompt again to have it go on"
    )


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, or Retry-After as seconds or a date)."""
    raw = getattr(exc, "litellm_response_headers", None) or getattr(
        getattr(exc, "response", None), "headers", None
    )
    headers = {str(name).lower(): str(value) for name, value in (raw or {}).items()}
    if (millis := _number(headers.get("retry-after-ms"))) is not None:
        return max(0.0, millis / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    if (seconds := _number(value)) is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


# -- the provider -------------------------------------------------------------------------


class Provider:
    """Streams completions through litellm with retries. Built once in the runtime.

    Retries (rate limits, timeouts, 5xx, dropped connections) happen only before any
    content was streamed, so a caller never sees a half answer repeated. Delays grow
    exponentially from `retry_base_delay` with jitter; a Retry-After from the server
    wins, capped at MAX_DELAY_FACTOR base delays (tests shrink both with one knob)."""

    def __init__(
        self, *, max_retries: int = 4, retry_base_delay: float = 1.0, timeout: float = 600.0
    ) -> None:
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.timeout = timeout

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cap = self.retry_base_delay * MAX_DELAY_FACTOR
        if retry_after is not None:
            return min(retry_after, cap)
        return min(self.retry_base_delay * 2 ** (attempt - 1) * random.uniform(1.0, 1.5), cap)

    async def stream(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        **options: Unpack[StreamOptions],
    ) -> AsyncGenerator[StreamEvent, None]:
        """Yield the events of one model turn: deltas as they come, then the complete
        ToolCalls and signed ThinkingBlocks, one Usage and one Finish; a Retrying before
        each new attempt. Raises ProviderError.

        `model` is the name the user knows (errors say it); the option `route` is
        litellm's name for it when they differ (a custom provider's model)."""
        litellm = await ensure_litellm()
        target = options.get("route") or model
        messages = [_detached(message) for message in messages]  # the kept history stays the loop's (see _detached)
        if options.get("prompt_cache") and takes_breakpoints(target):
            messages = with_breakpoints(messages)
        base_url, prices = options.get("base_url"), options.get("prices")
        optional = {
            "tools": tools or None,
            "max_tokens": options.get("max_tokens"),
            "reasoning_effort": options.get("reasoning_effort"),
            "api_key": options.get("api_key"),
            "base_url": base_url,
        }
        request = {
            "model": target,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "max_retries": 0,  # we retry ourselves, with our backoff and events
            "drop_params": True,  # a setting the model does not support is dropped, not an error
            **{key: value for key, value in optional.items() if value is not None},
        }
        attempt = 0
        while True:
            assembler = _StreamAssembler()
            try:
                async with contextlib.aclosing(self._attempt(litellm, request, assembler, prices)) as events:
                    async for event in events:
                        yield event
                return
            except Exception as exc:
                kind = _classify(litellm, exc)
                if assembler.streamed_content and kind == "connection":
                    raise ProviderError(_cut_message(model), kind) from exc
                if assembler.streamed_content or kind not in RETRYABLE_KINDS or attempt >= self.max_retries:
                    raise ProviderError(_error_message(kind, model, exc, attempt, base_url), kind) from exc
                attempt += 1
                retry = Retrying(attempt, self._delay(attempt, _retry_after(exc)), _detail(exc))
            yield retry
            await asyncio.sleep(retry.delay)

    async def _attempt(
        self,
        litellm: ModuleType,
        request: dict[str, Any],
        assembler: _StreamAssembler,
        prices: Prices | None,
    ) -> AsyncGenerator[StreamEvent, None]:
        response = await litellm.acompletion(**request)
        try:
            async for chunk in response:
                for event in assembler.feed(chunk):
                    yield event
        finally:
            await response.aclose()  # also when the caller stops early: free the connection
        for call in assembler.tool_calls():
            yield call
        for block in assembler.thinking_blocks():
            yield block
        tokens = assembler.usage_tokens()
        if not tokens.prompt:  # the server sent no usage
            tokens = await asyncio.to_thread(_estimated, litellm, request, assembler.text())
        yield Usage(
            tokens.prompt,
            tokens.completion,
            _cost(litellm, request["model"], tokens, prices),
            tokens.cache_read,
            tokens.cache_write,
        )
        yield Finish(assembler.finish_reason())
