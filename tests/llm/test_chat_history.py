"""The history a request sends, extended step by step (app/llm/chat_history.py), is the
same, byte for byte, as ``to_chat`` over the whole stored session: across prompts, tool
results, streamed rewrites, undo, redo, compaction, a change of model and a vision model,
on a real SQLite store, both driven directly and through the real loop speaking to the
fake OpenAI server."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app.llm.agent import AgentLoop
from app.llm.chat_history import ChatHistories
from app.llm.messages import (
    estimate_tokens,
    signed_reasoning_part,
    text_part,
    to_chat,
    tool_call_part,
    tool_result_part,
)
from app.llm.provider import Provider
from app.llm.transcript import Transcripts
from app.prompt.turn_undo import redo_turn, undo_turn
from app.runtime import Runtime
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall
from tests.llm.test_images import png

MODELS = ("gw/plain-model", "gw/vision-model")
IMAGE = {"path": "shot.png", "mime": "image/png", "data": base64.b64encode(b"\x89PNG fake").decode()}


class Conversation:
    """One session written straight to the store by random operations, and the histories
    built from the loop's transcript of it."""

    def __init__(self, runtime: Runtime, seed: int) -> None:
        self.runtime = runtime
        self.random = random.Random(seed)
        self.session_id = runtime.store.sessions.create(title="property").id
        self.transcripts = Transcripts(runtime.store.messages, runtime.bus)
        self.histories = ChatHistories()
        self.undone: list[list[str]] = []
        self.last_calls: list[str] = []

    def step(self) -> None:
        operation = self.random.choice(
            [self.prompt] * 4 + [self.answer] * 4 + [self.results] * 3
            + [self.rewrite_last, self.rewrite_earlier, self.undo, self.redo, self.compact]
        )  # fmt: skip
        operation()

    def prompt(self) -> None:
        parts = [text_part(f"prompt {self.random.random()} é")]
        if self.random.random() < 0.3:
            parts.append({"type": "image", **IMAGE})
        self.runtime.store.messages.add(self.session_id, "user", parts)

    def answer(self) -> None:
        parts: list[dict[str, Any]] = []
        if self.random.random() < 0.5:
            parts.append(signed_reasoning_part("thinking", signature=f"sig{self.random.random()}"))
        if self.random.random() < 0.7:
            parts.append(text_part(f"answer {self.random.random()}"))
        self.last_calls = [f"call_{self.random.randrange(10**6)}" for _ in range(self.random.randrange(3))]
        parts += [tool_call_part(call, "view", '{"filePath": "a.py"}') for call in self.last_calls]
        self.runtime.store.messages.add(self.session_id, "assistant", parts, model=self.random.choice(MODELS))

    def results(self) -> None:
        kept = self.last_calls[: self.random.randrange(len(self.last_calls) + 1)]  # some may be missing
        parts = [
            tool_result_part(call, "view", f"output of {call}", {"image": IMAGE} if self.random.random() < 0.3 else {})
            for call in kept
        ]
        self.runtime.store.messages.add(self.session_id, "tool", parts)

    def rewrite_last(self) -> None:
        """A streamed message written again as it grows."""
        if messages := self.runtime.store.messages.list(self.session_id):
            last = messages[-1]
            self.runtime.store.messages.update(last.id, [*last.parts, text_part(" more")])

    def rewrite_earlier(self) -> None:
        """Any message may be written again, not only the last."""
        if messages := self.runtime.store.messages.list(self.session_id):
            chosen = self.random.choice(messages)
            self.runtime.store.messages.update(chosen.id, [*chosen.parts, text_part(" edited")])

    def undo(self) -> None:
        messages = self.runtime.store.messages.list(self.session_id)
        taken = [message.id for message in messages[-self.random.randrange(1, 4) :]]
        if taken:
            self.runtime.store.messages.set_undone(taken, True)
            self.undone.append(taken)

    def redo(self) -> None:
        if self.undone:
            self.runtime.store.messages.set_undone(self.undone.pop(), False)

    def compact(self) -> None:
        summary = self.runtime.store.messages.add(
            self.session_id, "assistant", [text_part(f"summary {self.random.random()}")], model=MODELS[0]
        )
        self.runtime.store.sessions.update(self.session_id, summary_message_id=summary.id)
        self.undone.clear()  # an undo does not reach past a summary

    async def check(self, model: str, vision: bool) -> None:
        session = self.runtime.store.sessions.get(self.session_id)
        assert session is not None
        summary = session.summary_message_id
        built = await self.histories.build(
            self.session_id, self.transcripts.list(self.session_id), summary, model=model, vision=vision
        )
        rebuilt = to_chat(self.runtime.store.messages.list(self.session_id), summary, model=model, vision=vision)
        assert json.dumps(list(built.messages)) == json.dumps(rebuilt)
        assert built.tokens == (estimate_tokens(rebuilt) if rebuilt else 0)


async def test_the_extended_history_equals_a_full_rebuild_after_every_operation(runtime: Runtime):
    for seed in range(4):
        conversation = Conversation(runtime, seed)
        for _ in range(120):
            conversation.step()
            model = conversation.random.choice([*MODELS, None])
            await conversation.check(model or MODELS[0], vision=conversation.random.random() < 0.5)
            if conversation.random.random() < 0.2:  # the summarizer reads it between two steps
                await conversation.check(MODELS[1], vision=False)
        conversation.transcripts.close()


@pytest.mark.parametrize("server", ["fake_llm", "fake_anthropic"])
async def test_the_provider_leaves_the_messages_it_is_given_as_they_were(server: str, request):
    """The loop keeps the dicts of a request for the next ones (app.llm.chat_history):
    neither the provider (its prompt-cache breakpoints) nor litellm may change them."""
    fake = request.getfixturevalue(server)
    calls = [{"id": "call_a", "type": "function", "function": {"name": "view", "arguments": "{}"}}]
    messages = [
        {"role": "system", "content": "You are opencode."},
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_a", "content": "seen"},
        {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
    ]
    kept, objects = json.dumps(messages), [id(message) for message in messages]
    fake.reply(Text("done"))
    stream = Provider().stream(
        model=fake.model, messages=messages, tools=None, base_url=fake.base_url, api_key=fake.api_key,
        prompt_cache=True,
    )  # fmt: skip
    assert [event async for event in stream]
    assert json.dumps(messages) == kept and [id(message) for message in messages] == objects
    assert messages[2]["tool_calls"] is calls and len(fake.requests) == 1


class CheckingProvider:
    """The real provider, asserting before each conversational request that the history
    the loop sends is, byte for byte, ``to_chat`` of the stored session for that model."""

    def __init__(self, runtime: Runtime, vision: dict[str, bool]) -> None:
        self.inner = Provider(retry_base_delay=0.005)
        self.runtime = runtime
        self.vision = vision
        self.checked = 0

    async def stream(self, *, model: str, messages: list[dict], tools, **options) -> AsyncIterator:
        if tools:  # a turn's step (compaction and title requests carry no tools)
            [session] = [s for s in self.runtime.store.sessions.list() if s.title == "checked"]
            stored = self.runtime.store.messages.list(session.id)
            rebuilt = to_chat(stored, session.summary_message_id, model=model, vision=self.vision[model])
            assert json.dumps(messages[1:]) == json.dumps(rebuilt)
            self.checked += 1
        async for event in self.inner.stream(model=model, messages=messages, tools=tools, **options):
            yield event


async def test_every_request_of_the_real_loop_equals_a_full_rebuild(
    make_runtime, fake_llm: FakeOpenAI, workspace: Path
):
    (workspace / "a.py").write_text("a = 1\n")
    (workspace / "shot.png").write_bytes(png())
    models = {"plain-model": {"vision": False}, "vision-model": {"vision": True}}
    runtime = make_runtime(
        config={"providers": {"gw": {"api": "openai", "baseURL": fake_llm.base_url, "models": models}},
                "lsp": {"python": {"disabled": True}}}
    )  # fmt: skip
    provider = CheckingProvider(runtime, {"gw/plain-model": False, "gw/vision-model": True})
    loop = AgentLoop(runtime, provider, env={})
    session_id = runtime.store.sessions.create(title="checked").id  # titled: no title request

    async def turn(prompt: str, model: str, *calls: ToolCall) -> None:
        for call in calls:
            fake_llm.reply(call)
        fake_llm.reply(Text(f"answered {prompt}"))
        result = await loop.run(session_id, prompt, model=model)
        assert result.reason == "stop", result.error

    view = ToolCall("view", json.dumps({"filePath": "a.py"}), id="call_a")
    await turn("look at a", MODELS[0], view)
    await turn("and again", MODELS[0], view, ToolCall("view", json.dumps({"filePath": "a.py"}), id="call_b"))
    await undo_turn(runtime, session_id)
    await turn("after the undo", MODELS[0])
    await undo_turn(runtime, session_id)
    await redo_turn(runtime, session_id)
    await turn("after the redo", MODELS[0], view)
    fake_llm.reply(Text("SUMMARY of it all"))
    await loop.compact(session_id, model=MODELS[1])
    await turn("after compacting", MODELS[1], view)
    await turn("look at the image", MODELS[1], ToolCall("view", json.dumps({"filePath": "shot.png"}), id="call_i"))
    await turn("back to the plain model", MODELS[0], view)
    assert provider.checked == 14  # every step of every turn was checked
    assert "image_url" in json.dumps(fake_llm.requests[-3]["messages"])  # the vision model saw the image

    # The status bar measures the history as a turn of that model would send it.
    session = runtime.store.sessions.get(session_id)
    assert session is not None
    stored = runtime.store.messages.list(session_id)
    for model, vision in (("gw/vision-model", True), ("gw/plain-model", False)):
        fresh = AgentLoop(runtime, provider, env={})  # no provider count yet: the estimate stands
        size = await fresh.context_size(session_id, model=model)
        rebuilt = to_chat(stored, session.summary_message_id, model=model, vision=vision)
        assert dict(size.parts)["Messages"] == estimate_tokens(rebuilt)
        await fresh.aclose()
    await loop.aclose()
