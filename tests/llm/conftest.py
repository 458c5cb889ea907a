"""Fixtures for the fake provider servers on 127.0.0.1: `fake_llm` (OpenAI chat
completions, fake_openai.py), `fake_anthropic` (Messages API, fake_anthropic.py) and
`fake_gemini` (generateContent, fake_gemini.py).

Point a model call at one with model=fake.model, base_url=fake.base_url,
api_key=fake.api_key; script replies with fake.reply(...) / fake.fail(...);
read what was sent in fake.requests (bodies) or fake.received (with headers and times).
"""

import os
from collections.abc import Iterator

import pytest

from tests.llm.fake_anthropic import FakeAnthropic
from tests.llm.fake_gemini import FakeGemini
from tests.llm.fake_openai import FakeOpenAI

# Anything that imports litellm in this session must use the bundled price map, not GitHub.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _serve(server):
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    yield from _serve(FakeOpenAI())


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    yield from _serve(FakeAnthropic())


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    yield from _serve(FakeGemini())
