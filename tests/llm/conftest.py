"""The `fake_llm` fixture: a scripted OpenAI-compatible server on 127.0.0.1 (see fake_openai.py).

Point a model call at it with model=fake_llm.model, base_url=fake_llm.base_url,
api_key=fake_llm.api_key; script replies with fake_llm.reply(...) / fake_llm.fail(...);
read what was sent in fake_llm.requests.
"""

import os
from collections.abc import Iterator

import pytest

from tests.llm.fake_openai import FakeOpenAI

# Anything that imports litellm in this session must use the bundled price map, not GitHub.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.close()
