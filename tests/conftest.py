"""Shared fixtures: a real workspace on disk and an empty home folder beside it, a real
runtime (SQLite file, bus, services) built on the workspace, and a helper that plays the
user answering permission questions."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from app.config import Config
from app.runtime import Runtime

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# `opencode -p` attaches to an `opencode serve` listening in $XDG_RUNTIME_DIR/opencode: a
# server the machine's user runs must not answer the tests' runs, so the session has a
# runtime folder of its own, empty (tests/serve start servers in folders of their own).
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="opencode-tests-run-")

# Property tests judge what the code does, never how fast this machine makes examples:
# on a busy 2-core machine input generation alone can pass hypothesis's limits (1 s per
# ten examples with the default 200 ms deadline). Every example is still run and checked.
settings.register_profile("any-machine-speed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("any-machine-speed")


@pytest.fixture
def interruptible() -> Iterator[None]:
    """Children started meanwhile take ctrl+c as a terminal's foreground command does,
    even when this test run was started ignoring it (a background job of a script): an
    ignored signal stays ignored across exec, a caught one is reset to its default."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home folder beside the workspace, for a test that sets HOME (the user's
    config and data folders) away from the real one."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


JUDGE_ALONE = {"mechanism": "off"}


@pytest.fixture
def make_runtime(workspace: Path) -> Callable[..., Runtime]:
    """Build a runtime on the workspace; ``config`` may be a Config or a dict in file format.
    Without one, language servers are off, so a pylsp on PATH cannot slow unrelated tests,
    and bash runs outside the sandbox unless the config has a `sandbox` section: the tests
    of the judge see it alone, and `$$` is a process id of this machine (tests/sandbox
    test the sandbox)."""
    built: list[Runtime] = []

    def make(policy: str = "headless-yes", config: Config | dict | None = None) -> Runtime:
        if isinstance(config, dict):
            config = Config.model_validate({"sandbox": JUDGE_ALONE, **config})
        config = config or Config.model_validate({"lsp": {"python": {"disabled": True}}, "sandbox": JUDGE_ALONE})
        runtime = Runtime.build(workspace, config=config, policy=policy)
        built.append(runtime)
        return runtime

    yield make
    for runtime in built:
        runtime.close()


@pytest.fixture
def runtime(make_runtime) -> Runtime:
    return make_runtime()


@pytest.fixture
def session_id(runtime: Runtime) -> str:
    return runtime.store.sessions.create(title="test").id


@pytest.fixture
def ctx(runtime: Runtime, session_id: str):
    return runtime.context(session_id)


class PermissionAnswers:
    """Answers interactive permission requests from the bus, in order, like a user would,
    and keeps the requests it saw so tests can assert what was asked."""

    def __init__(self, runtime: Runtime, replies: list) -> None:
        from app.permission import PermissionRequested

        self.requests: list = []
        self._runtime = runtime
        self._replies = list(replies)
        self._sub = runtime.bus.subscribe(PermissionRequested)
        self._task = asyncio.get_running_loop().create_task(self._answer())

    async def _answer(self) -> None:
        async for event in self._sub:
            self.requests.append(event.request)
            reply = self._replies.pop(0) if self._replies else None
            if reply is not None:
                self._runtime.permissions.reply(event.request_id, reply)

    def close(self) -> None:
        self._sub.close()
        self._task.cancel()


@pytest.fixture
async def permission_answers():
    """``answers = permission_answers(runtime, PermissionReply("allow_once"), ...)``."""
    made: list[PermissionAnswers] = []

    def start(runtime: Runtime, *replies) -> PermissionAnswers:
        answers = PermissionAnswers(runtime, list(replies))
        made.append(answers)
        return answers

    yield start
    for answers in made:
        answers.close()


DEEP_TREE_LEVELS = 1_000


@pytest.fixture
def deep_tree(workspace: Path) -> Iterator[Path]:
    """``t/d/d/.../d/f.txt``, DEEP_TREE_LEVELS folders below t, made and removed one level
    at a time: os.makedirs and shutil.rmtree recurse once per level (pytest's clean-up of
    old temporary folders would meet the tree otherwise)."""
    top = workspace / "t"
    folders = [str(top)]
    for _ in range(DEEP_TREE_LEVELS):
        folders.append(folders[-1] + "/d")
    for folder in folders:
        os.mkdir(folder)
    Path(folders[-1], "f.txt").write_text("deep\n")
    yield top
    if top.exists():
        os.unlink(Path(folders[-1], "f.txt"))
        for folder in reversed(folders):
            os.rmdir(folder)
