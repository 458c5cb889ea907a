"""The scripted model: its file format, how it picks what to play, and the packaged demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.llm.provider import Finish, Provider, ProviderError, ReasoningDelta, TextDelta, ToolCall, Usage
from app.llm.scripted import (
    DEMO_MODEL,
    DEMO_SCRIPT,
    Script,
    ScriptedProvider,
    ScriptError,
    load_script,
    provider_for,
    script_path,
)
from app.tools.registry import all_tools

TOOLS = {tool.name: tool for tool in all_tools()}


def provider(turns: list[dict], **top) -> ScriptedProvider:
    return ScriptedProvider(Script.model_validate({"turns": turns, **top}))


async def play(scripted: ScriptedProvider, messages: list[dict]) -> list:
    return [event async for event in scripted.stream(model="scripted/x", messages=messages, tools=None)]


def user(text: str) -> dict:
    return {"role": "user", "content": text}


ASSISTANT = {"role": "assistant", "content": "…"}


def write_script(tmp_path: Path, content: str | dict) -> Path:
    path = tmp_path / "script.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


# -- loading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ({"turns": []}, "turns: List should have at least 1 item"),
        ({"turns": [{"steps": []}]}, "turns.0.steps: List should have at least 1 item"),
        (
            {"turns": [{"match": "(", "steps": [{"text": "x"}]}]},
            "turns.0.match: not a valid regular expression",
        ),
        (
            {"turns": [{"steps": [{"toolCalls": [{"name": "view", "arguments": 5}]}]}]},
            "turns.0.steps.0.toolCalls.0.arguments: should be a JSON object, or a string sent as is;",
        ),
        ([], "the top level: should be a JSON object;"),
        ({"turns": [None]}, "turns.0: should be a JSON object;"),
        ({"turns": [{"steps": [{"txt": "x"}]}]}, "turns.0.steps.0.txt: Extra inputs are not permitted"),
        (
            {"turns": [{"steps": [{"toolCalls": [{"arguments": {}}]}]}]},
            "turns.0.steps.0.toolCalls.0.name: Field required",
        ),
        (
            {"contextWindow": 0, "turns": [{"steps": [{"text": "x"}]}]},
            "contextWindow: Input should be greater than 0",
        ),
    ],
)
def test_a_malformed_script_is_one_line_naming_file_and_key(tmp_path: Path, content, expected):
    path = write_script(tmp_path, content)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    message = str(caught.value)
    assert expected in message and str(path) in message and "\n" not in message


def test_a_missing_script_says_what_to_pass(tmp_path: Path):
    with pytest.raises(ScriptError, match="no script at .*missing.json; pass --model scripted/"):
        ScriptedProvider.from_model(f"scripted/{tmp_path}/missing.json")


def test_model_names_route_to_the_script_or_to_litellm(tmp_path: Path):
    path = write_script(tmp_path, {"contextWindow": 1234, "turns": [{"steps": [{"text": "hi"}]}]})
    scripted = provider_for(f"scripted/{path}")
    assert isinstance(scripted, ScriptedProvider) and scripted.context_window("any") == 1234
    assert script_path(DEMO_MODEL) == DEMO_SCRIPT
    assert isinstance(provider_for("openai/gpt-5"), Provider)


# -- playing -------------------------------------------------------------------------------


async def test_a_step_streams_reasoning_text_calls_usage_and_finish():
    scripted = provider(
        [{"steps": [{"reasoning": "think first", "text": "Hello there, world.", "toolCalls": [
            {"name": "view", "arguments": {"filePath": "a.py"}},
            {"name": "edit", "arguments": "{broken"},
        ]}]}]
    )  # fmt: skip

    events = await play(scripted, [user("hi")])

    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["think ", "first"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello ", "there, ", "world."]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [("view", '{"filePath": "a.py"}'), ("edit", "{broken")]
    assert len({c.id for c in calls}) == 2
    usage = [e for e in events if isinstance(e, Usage)]
    assert len(usage) == 1 and usage[0].prompt_tokens > 0 and usage[0].completion_tokens > 0
    assert events[-1] == Finish("tool_calls")


async def test_the_turn_is_chosen_by_match_and_the_step_by_the_answers_since_the_prompt():
    scripted = provider(
        [
            {"match": "^deploy", "steps": [{"text": "deploy 1"}, {"text": "deploy 2"}]},
            {"steps": [{"text": "anything 1"}, {"text": "anything 2"}]},
        ]
    )

    def text(events: list) -> str:
        return "".join(e.text for e in events if isinstance(e, TextDelta))

    assert text(await play(scripted, [user("deploy now")])) == "deploy 1"
    assert (
        text(await play(scripted, [user("deploy now"), ASSISTANT, {"role": "tool", "content": "ok"}]))
        == "deploy 2"
    )
    assert text(await play(scripted, [user("deploy now"), ASSISTANT, user("please deploy")])) == "anything 1"
    assert (await play(scripted, [user("x")]))[-1] == Finish("stop")


async def test_no_matching_turn_or_no_step_left_is_a_provider_error():
    scripted = provider([{"match": "^only this", "steps": [{"text": "one"}]}])
    with pytest.raises(ProviderError, match="no turn matches the prompt 'something else'"):
        await play(scripted, [user("something else")])
    with pytest.raises(ProviderError, match="turn 1 has no step 2"):
        await play(scripted, [user("only this"), ASSISTANT])


# -- the packaged demo ---------------------------------------------------------------------


def test_the_demo_script_is_valid_and_every_call_fits_a_builtin_tool():
    script = load_script(DEMO_SCRIPT)
    calls = [call for turn in script.turns for step in turn.steps for call in step.tool_calls]
    assert {call.name for call in calls} >= {"view", "edit", "patch", "delete"}
    for call in calls:
        TOOLS[call.name].parse(call.arguments)  # raises ToolError on a bad argument


async def test_a_closing_report_lists_only_the_steps_that_happened():
    scripted = provider([{"steps": [
        {"report": "edited a", "toolCalls": [{"name": "edit", "arguments": {}}]},
        {"report": "edited b", "toolCalls": [{"name": "edit", "arguments": {}}]},
        {"report": "wrote c", "reportIf": "^Wrote", "toolCalls": [{"name": "write", "arguments": {}}]},
        {"text": "Done:\n{report}"},
    ]}])  # fmt: skip

    def text(events: list) -> str:
        return "".join(e.text for e in events if isinstance(e, TextDelta))

    def tool(content: str) -> dict:
        return {"role": "tool", "content": content}

    answers = [
        ASSISTANT, tool("Edit applied successfully."),
        ASSISTANT, tool('{"ok": false, "error": "The user denied this patch: \\"no\\""}'),
        ASSISTANT, tool("wrote.txt does not exist"),
    ]  # fmt: skip
    assert text(await play(scripted, [user("go"), *answers])) == "Done:\n- edited a"
    answers[3] = tool("Edit applied successfully.")
    answers[5] = tool("Wrote c.txt: +1 -0 lines.")
    assert text(await play(scripted, [user("go"), *answers])) == "Done:\n- edited a\n- edited b\n- wrote c"
    answers[1] = answers[3] = tool("edit a.py: needs approval: run with --yes to allow it")
    answers[5] = tool("skipped: an earlier call in this message was denied")
    assert text(await play(scripted, [user("go"), *answers])) == "Done:\n- nothing: no change was made"
