"""ACP: a configured model whose provider has no API key is refused at once, in one
line naming the variable, before anything is sent to any provider."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError
from acp.schema import TextContentBlock


async def test_a_model_without_its_key_is_refused_before_any_request(workspace, fake_llm, acp_agent):
    (workspace / ".opencode.json").write_text(json.dumps({"agents": {"coder": {"model": "anthropic/claude-sonnet-4-5"}}}))
    async with acp_agent(workspace, fake_llm) as client:
        sid = (await client.connection.new_session(cwd=str(workspace))).session_id
        with pytest.raises(RequestError) as caught:
            await asyncio.wait_for(
                client.connection.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="hi")]), 60
            )

    assert caught.value.data["message"] == (
        "no API key for anthropic/claude-sonnet-4-5: set ANTHROPIC_API_KEY in the environment "
        "or providers.anthropic.apiKey in .opencode.json"
    )
    assert fake_llm.requests == []
