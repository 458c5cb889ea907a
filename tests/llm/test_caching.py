"""Where prompt-cache breakpoints go, for which routes (pure; the Anthropic fake shows
the cache reads they earn in test_anthropic.py)."""

from app.llm.caching import EPHEMERAL, takes_breakpoints, with_breakpoints


def test_anthropics_models_take_breakpoints_wherever_they_are_served():
    assert takes_breakpoints("anthropic/claude-sonnet-4-5")
    assert takes_breakpoints("anthropic/my-gateway-model")  # a custom anthropic-compatible route
    assert takes_breakpoints("bedrock/anthropic.claude-3-7-sonnet-20250219-v1:0")
    assert takes_breakpoints("vertex_ai/claude-sonnet-4-5@20250929")
    assert takes_breakpoints("openrouter/anthropic/claude-sonnet-4.5")
    assert not takes_breakpoints("openai/gpt-5")
    assert not takes_breakpoints("gemini/gemini-2.5-pro")
    assert not takes_breakpoints("bedrock/meta.llama3-70b-instruct-v1:0")


def test_the_system_prompt_and_the_last_two_messages_are_marked_and_the_input_is_kept():
    call = {"id": "c1", "type": "function", "function": {"name": "view", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ]

    marked = with_breakpoints(messages)

    assert marked[0]["content"] == [{"type": "text", "text": "rules", "cache_control": EPHEMERAL}]
    assert marked[1] == messages[1]
    assert marked[2]["tool_calls"][-1]["cache_control"] == EPHEMERAL  # the last block of that turn
    assert marked[3]["cache_control"] == EPHEMERAL
    assert "cache_control" not in messages[3] and "cache_control" not in call
    image_prompt = [{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}]
    assert with_breakpoints(image_prompt)[0]["content"][-1]["cache_control"] == EPHEMERAL
