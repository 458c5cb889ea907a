from tests.hooks.conftest import harness  # noqa: F401 - the fixture, shared
from tests.llm.conftest import fake_llm  # noqa: F401 - the fixture, shared
