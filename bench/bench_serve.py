"""A warm headless edit end to end: `opencode -p ... --yes` attached to `opencode serve`,
beside the same run in its own process and, when installed, sst/opencode's `opencode run`.

Every run is the same turn against the local fake OpenAI server (answering at once): the
model views notes/todo.txt, edits it, and answers. A text file, so that no language server
runs in either tool: the figures are the agents' own paths. Each figure is the median wall time of 5
runs after one warm-up, measured from starting the client process to its exit. The budget
(docs/serve.md): the attached run within 0.8 s. The machine's load adds to every figure
alike, so the three are only compared within one run of this script.

sst/opencode is measured when its binary is found at OPENCODE_AI_BIN or under
/tmp/opencode-bench (npm install --prefix /tmp/opencode-bench opencode-ai@1.18.33); its
provider is the same fake server, declared in an opencode.json of its own workspace.

Run from the repository root: .venv/bin/python bench/bench_serve.py
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.llm.fake_openai

from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BUDGET_SECONDS = 0.8
RUNS = 5
PEER_VERSION = "1.18.33"
PEER_CANDIDATES = (
    Path("/tmp/opencode-bench/node_modules/opencode-linux-x64/bin/opencode"),
    Path("/tmp/opencode-bench/node_modules/opencode-ai/bin/opencode"),
)


class Edits:
    """Scripts the fake server for one turn per run: view, edit x = n to x = n + 1, answer."""

    def __init__(self, fake: FakeOpenAI, workspace: Path) -> None:
        self.fake, self.workspace, self.value = fake, workspace, 0
        (workspace / "notes").mkdir()
        (workspace / "notes" / "todo.txt").write_text("x = 0\n")

    def script(self) -> None:
        n = self.value
        self.fake.reply(ToolCall("view", json.dumps({"filePath": "notes/todo.txt"})))
        edit = {"filePath": "notes/todo.txt", "oldString": f"x = {n}", "newString": f"x = {n + 1}"}
        self.fake.reply(ToolCall("edit", json.dumps(edit)))
        self.fake.reply(Text(f"x is {n + 1} now."))

    def check(self) -> None:
        self.value += 1
        text = (self.workspace / "notes" / "todo.txt").read_text()
        if text != f"x = {self.value}\n":
            raise SystemExit(f"the edit did not happen: notes/todo.txt holds {text!r}")


def timed_runs(label: str, edits: Edits, command: list[str], env: dict[str, str]) -> list[float]:
    """One warm-up, then RUNS timed runs of ``command``; each must edit the file."""
    times = []
    for attempt in range(RUNS + 1):
        edits.script()
        started = time.perf_counter()
        done = subprocess.run(command, cwd=edits.workspace, env=env, capture_output=True, text=True, timeout=300)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{label}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
        edits.check()
        if attempt:
            times.append(elapsed)
    return times


def ours(workspace: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "app.cli", "-C", str(workspace), "-p", "set x one higher", "--yes", *options]


def with_server(env: dict[str, str], runtime_dir: Path, measure: Callable[[], list[float]]) -> list[float]:
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve"], cwd=REPO, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        path = runtime_dir / "opencode" / "serve.sock"
        deadline = time.monotonic() + 120
        while not _answers(path):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("opencode serve did not start")
            time.sleep(0.05)
        return measure()
    finally:
        server.terminate()
        server.wait(timeout=120)


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(str(path))
            return True
        except OSError:
            return False


def peer_binary() -> Path | None:
    named = os.environ.get("OPENCODE_AI_BIN")
    candidates = (Path(named),) if named else PEER_CANDIDATES
    return next((path for path in candidates if path.is_file() and os.access(path, os.X_OK)), None)


def peer_runs(binary: Path, fake: FakeOpenAI, scratch: Path, env: dict[str, str]) -> list[float]:
    """sst/opencode's `opencode run` on the same turn, its provider the fake server."""
    workspace = scratch / "peer"
    workspace.mkdir()
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": fake.base_url, "apiKey": fake.api_key},
            "models": {"fake-model": {"name": "Fake model"}},
        }},
        "model": "fake/fake-model", "small_model": "fake/fake-model", "share": "disabled", "autoupdate": False,
        "permission": {"edit": "allow", "bash": "allow"},
    }  # fmt: skip
    (workspace / "opencode.json").write_text(json.dumps(config))
    edits = Edits(fake, workspace)
    peer_env = {k: v for k, v in env.items() if not k.startswith("OPENAI_")}  # else it picks its own OpenAI model
    peer_env["PWD"] = str(workspace)  # it takes its project folder from PWD, not from its working directory
    command = [str(binary), "run", "--model", "fake/fake-model", "set x one higher"]
    return timed_runs("sst/opencode", edits, command, peer_env)


def line(label: str, times: list[float]) -> str:
    spread = f"{min(times):.2f}-{max(times):.2f}"
    return f"{label:<40} median {statistics.median(times):5.2f} s  (runs {spread} s)"


def main() -> int:
    fake = FakeOpenAI().start()
    scratch = Path(tempfile.mkdtemp(prefix="oc-bench-serve-", dir="/tmp"))
    try:
        runtime_dir = scratch / "run"
        runtime_dir.mkdir(mode=0o700)
        (scratch / "home").mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_") and not k.endswith("_API_KEY")}
        env = {
            **base, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": fake.base_url, "HOME": str(scratch / "home"),
            "XDG_RUNTIME_DIR": str(runtime_dir), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO),
        }  # fmt: skip
        (scratch / "ours").mkdir()
        edits = Edits(fake, scratch / "ours")
        in_process = timed_runs("in-process", edits, ours(edits.workspace, "--no-attach"), env)
        attached = with_server(
            env, runtime_dir, lambda: timed_runs("attached", edits, ours(edits.workspace, "--attach"), env)
        )
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"warm headless edit (view, edit, answer; fake OpenAI server), median of {RUNS} after a warm-up:")
        print(line("opencode -p, attached to opencode serve", attached))
        print(line("opencode -p, in its own process", in_process))
        binary = peer_binary()
        if binary is None:
            print(f"sst/opencode {PEER_VERSION} `opencode run`: not measured (npm install --prefix "
                  f"/tmp/opencode-bench opencode-ai@{PEER_VERSION}, or set OPENCODE_AI_BIN)")  # fmt: skip
        else:
            print(line(f"sst/opencode {PEER_VERSION} opencode run", peer_runs(binary, fake, scratch, env)))
        median = statistics.median(attached)
        verdict = "within" if median <= BUDGET_SECONDS else "OVER"
        print(f"attached: {median:.2f} s, {verdict} the budget of {BUDGET_SECONDS} s")
        return 0 if median <= BUDGET_SECONDS else 1
    finally:
        fake.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
