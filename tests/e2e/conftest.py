"""The fake provider servers of tests/llm, for the end-to-end runs."""

from tests.llm.conftest import fake_llm  # noqa: F401 - the fixture, shared
