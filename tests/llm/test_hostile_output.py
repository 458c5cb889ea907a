"""Hostile model output through the real litellm client and the fake server: arguments
too deep or too large, and a tool that fails in a way nobody foresaw, each come back to
the model as a tool error naming the problem, and the session goes on."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from app.headless.run import run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.tool_calls import MAX_CALLS_PER_MESSAGE, over_the_cap
from tests.llm.fake_openai import Reply, Text, ToolCall
from tests.llm.test_agent import Harness, tool_messages
from tests.tools.web_server import web_server

TURN_BOUND_S = 120
"""Generous: each turn takes about a second; the bound only turns a hang into a failure."""


async def run_bounded(h: Harness, prompt: str):
    return await asyncio.wait_for(h.run(prompt), TURN_BOUND_S)


@pytest.mark.parametrize(
    ("arguments", "limit"),
    [
        ('{"filePath": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON nested deeper than 64 levels"),
        ('{"filePath": "a.txt", "content": "' + "x" * (20 * 1024 * 1024) + '"}', "over the limit of 10,485,760 (10 MB)"),
    ],
    ids=["100,000 levels", "20 MB"],
)
async def test_arguments_beyond_a_limit_are_a_tool_error_and_the_session_goes_on(
    make_runtime, fake_llm, workspace: Path, arguments: str, limit: str
) -> None:
    h = Harness(make_runtime(), fake_llm)
    h.fake.reply(ToolCall("write", arguments, id="call_hostile"))
    h.fake.reply(Text("I will send less."))
    h.fake.reply(Text("still here"))

    result = await run_bounded(h, "write a.txt")

    assert (result.reason, result.response) == ("stop", "I will send less.")
    (answer,) = tool_messages(h.fake.requests[1])
    assert answer["content"].startswith("write: the arguments break a limit (")
    assert limit in answer["content"]
    replayed = next(m for m in h.fake.requests[1]["messages"] if m["role"] == "assistant")
    assert replayed["tool_calls"][0]["function"]["arguments"] == "{}"  # not sent back to the provider
    assert not (workspace / "a.txt").exists()

    assert (await run_bounded(h, "again")).response == "still here"


async def test_ten_thousand_fetch_calls_in_one_message_run_the_cap_and_refuse_the_rest(make_runtime, fake_llm) -> None:
    """Each call past the cap is answered with one bounded error, without being run: the
    page server sees at most the capped number of requests, however many were asked."""
    routes = {"/page": lambda handler: handler.reply(200, "text/plain", b"a small page")}
    config = {"autoCompact": False, "tools": {"webfetch": {"allowPrivate": True}}, "lsp": {"python": {"disabled": True}}}
    with web_server(routes) as pages:
        h = Harness(make_runtime(config=config), fake_llm)
        arguments = json.dumps({"url": pages.url("/page")})
        calls = tuple(ToolCall("webfetch", arguments, id=f"call_{number}", fragments=1) for number in range(10_000))
        h.fake.push(Reply(calls, calls_per_chunk=500))
        h.fake.reply(Text("done"))

        result = await asyncio.wait_for(h.run("fetch it a lot"), TURN_BOUND_S * 5)  # ten thousand results to send

    assert (result.reason, result.response) == ("stop", "done")
    answers = tool_messages(h.fake.requests[1])
    assert len(answers) == 10_000
    ran, refused = answers[:MAX_CALLS_PER_MESSAGE], answers[MAX_CALLS_PER_MESSAGE:]
    assert all("a small page" in answer["content"] for answer in ran)
    assert {answer["content"] for answer in refused} == {over_the_cap(10_000)}
    assert len(pages.requests) == MAX_CALLS_PER_MESSAGE


def test_control_characters_in_a_calls_arguments_are_escaped_in_the_progress_lines(workspace: Path, fake_llm) -> None:
    """The model names a file and a tool with terminal escapes in them: -p's progress
    lines on stderr show the escapes as text."""
    fake_llm.reply(
        ToolCall("view", json.dumps({"filePath": "a\x1b]0;owned\x07.txt"})),
        ToolCall("bash\x1b[2J", json.dumps({"command": "echo \x9b31m"})),
    )
    fake_llm.reply(Text("done"))
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(workspace, HeadlessRequest("look", model=fake_llm.model), env=fake_llm.env, stdout=out, stderr=err)
    assert code == 0 and out.getvalue() == "done\n"
    lines = err.getvalue().splitlines()
    assert lines[0] == "→ view a\\x1b]0;owned\\x07.txt"
    assert "→ bash\\x1b[2J echo \\x9b31m" in lines
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in err.getvalue().replace("\n", ""))
