"""TUI benchmarks: start-up and idle memory in tmux, beside the OpenCode TUI, and frame
and typing times while a reply streams.

Start-up (tmux, 120x40, an empty workspace, a scratch HOME): "first frame" is the first
non-blank screen, "ready to type" is when keys typed at the first frame show in the
prompt, "idle memory" is the resident size of the process tree at least IDLE_SECONDS
later, once it has stopped growing (a provider key is set, so the model is a real one
and litellm's background import must be over: on a busy machine it can take longer).
No prompt is sent. OpenCode (npm `opencode-ai`, expected installed in
/tmp/opencode-bench, never in the repo) is measured the same way when present.

Streaming (in-process, headless, once litellm's background import is done, as for a real
first reply): the real agent loop plays a reply paced at 2,000 tokens/s, then one at a
model's pace (80 tokens/s, about ten seconds for 800 words); from its first
token until the chat has drawn the last, we record the interval between frames written
to the terminal driver, the longest stall of the event loop, and how long a typed key
takes to reach the prompt meanwhile.

    .venv/bin/python bench/bench_tui.py [--no-peer] [--startup-only] [--runs N]
    .venv/bin/python bench/bench_tui.py --instructions
    .venv/bin/python bench/bench_tui.py --profile [bare|ours]

--no-peer skips OpenCode, --startup-only skips streaming, --runs sets the start-up runs
(default 3; on a noisy machine more runs give a steadier median).

--instructions counts, with valgrind's callgrind, the instructions each app (the bare one
and opencode) executes from the interpreter's start to its first frame, headless at
120x40 (Textual's ``post_display_hook`` ends the process at its first call): a figure the
machine's load does not move, unlike the tmux timings. --profile runs one of them
(default ours) to its first frame under cProfile and lists where the time goes.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
PEER = Path("/tmp/opencode-bench/node_modules/opencode-linux-x64/bin/opencode")
SIZE = (120, 40)
POLL = 0.005
MARKER = "zqx"
BARE_APP = (
    "from textual.app import App\nfrom textual.widgets import TextArea\n"
    "class Bare(App):\n    def compose(self):\n        yield TextArea(placeholder='Ask anything')\n"
    "Bare().run()"
)
GOAL_READY_MS = 350
IDLE_SECONDS = 6.0
"""How long after "ready" memory is read at the earliest (then again until it is steady)."""
STEADY_SECONDS = 2.0
STEADY_MB = 1.0
"""Memory is steady when readings STEADY_SECONDS apart differ by less than STEADY_MB."""
SETTLE_TIMEOUT = 30.0
GOAL_IDLE_MB = 250
TOKENS_PER_SECOND = 2000
MODEL_TOKENS_PER_SECOND = 80
"""A hosted model's pace (about 50-100 tokens a second): a reply lasts long enough for
hundreds of frames and typed keys, so its p99 rests on more than a handful of samples."""
STREAM_REPLIES = {"a typical reply": (800, TOKENS_PER_SECOND), "a long reply": (4000, TOKENS_PER_SECOND),
                  "a typical reply at a model's pace": (800, MODEL_TOKENS_PER_SECOND)}
"""Words per streamed reply (paragraphs, lists and code blocks in turn) and tokens a second."""
TICK = 0.01
"""The paced model sends tokens_per_second * TICK tokens (one at least) every TICK seconds,
each its own delta, like a fast provider whose network reads deliver a few chunks at a time."""


@dataclass
class Startup:
    first_frame_ms: float
    ready_ms: float
    idle_mb: float
    idle_read_s: float
    """When memory was read, in seconds after "ready"."""


TMUX_SOCKET = Path(tempfile.gettempdir()) / f"bench-tui-{os.getpid()}.tmux"
"""A tmux server of our own: on a shared machine, other people's scripts may kill the
default server (and a measured start with it)."""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-S", str(TMUX_SOCKET), *args], capture_output=True, text=True, check=False).stdout


def steady_rss_mb(root_pid: int, at_least: float) -> tuple[float, float]:
    """(resident MB of the process tree, seconds waited): read ``at_least`` seconds on,
    then every half second until it is steady (see STEADY_SECONDS), SETTLE_TIMEOUT at most."""
    started = time.perf_counter()
    time.sleep(at_least)
    readings = [process_tree_rss_mb(root_pid)]
    window = int(STEADY_SECONDS / 0.5)
    while time.perf_counter() - started < SETTLE_TIMEOUT:
        if len(readings) > window and abs(readings[-1] - readings[-1 - window]) < STEADY_MB:
            break
        time.sleep(0.5)
        readings.append(process_tree_rss_mb(root_pid))
    return readings[-1], time.perf_counter() - started


def process_tree_rss_mb(root_pid: int) -> float:
    """Resident memory of a process and all its descendants (OpenCode runs helpers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total_kb, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return total_kb / 1024


class SessionVanished(Exception):
    """The tmux session died under a run: not the app's doing (see measure_startup)."""


def measure_startup(name: str, command: list[str], cwd: Path, env: dict[str, str], *, idle: float,
                    timeout: float) -> Startup | None:
    """Start ``command`` in a fresh tmux session and watch its screen. On this shared
    machine other people's scripts sometimes kill every tmux server: such a run is run
    again (twice at most) instead of counting as a start that never showed the keys."""
    for _ in range(3):
        try:
            return watch_start(name, command, cwd, env, idle=idle, timeout=timeout)
        except SessionVanished:
            print(f"  ({name}: the tmux session vanished mid-run; running it again)")
    return None


def watch_start(name: str, command: list[str], cwd: Path, env: dict[str, str], *, idle: float,
                timeout: float) -> Startup | None:
    session = f"bench-{name}-{os.getpid()}"
    shell = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    started = time.perf_counter()
    # remain-on-exit: an app that exits (or crashes) leaves its last screen, so only a
    # killed tmux makes the session vanish.
    tmux("new-session", "-d", "-s", session, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
         f"cd {shlex.quote(str(cwd))} && exec env {shell} {shlex.join(command)}",
         ";", "set-option", "-t", session, "remain-on-exit", "on")
    try:
        first = typed = None
        screen = ""
        deadline = started + timeout
        while time.perf_counter() < deadline:
            screen = tmux("capture-pane", "-p", "-t", session)
            now = time.perf_counter()
            if first is None and screen.strip():
                first = now
                tmux("send-keys", "-t", session, "-l", MARKER)
            if first is not None and MARKER in screen:
                typed = now
                break
            if first is not None and not screen:  # a drawn screen never turns empty: tmux is gone
                break
            time.sleep(POLL)
        if session not in tmux("list-sessions", "-F", "#{session_name}").split():
            raise SessionVanished
        if first is None or typed is None:
            last = [line for line in screen.splitlines() if line.strip()][-3:]
            print(f"  ({name}: the typed keys never showed; its last lines: {last})")
            return None
        pane_pid = tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip()
        if not pane_pid:
            raise SessionVanished
        if idle >= IDLE_SECONDS:
            idle_mb, waited = steady_rss_mb(int(pane_pid), idle)
        else:
            time.sleep(idle)
            idle_mb, waited = process_tree_rss_mb(int(pane_pid)), idle
        if session not in tmux("list-sessions", "-F", "#{session_name}").split():
            raise SessionVanished
        return Startup((first - started) * 1000, (typed - started) * 1000, idle_mb, waited)
    finally:
        tmux("kill-session", "-t", session)


def our_command() -> list[str]:
    """`opencode` once the CLI opens the TUI without a subcommand; the entry itself until then."""
    script = REPO / ".venv" / "bin" / "opencode"
    if script.exists() and "run_tui" in (REPO / "app" / "cli.py").read_text(encoding="utf-8"):
        return [str(script)]
    entry = "import sys; from pathlib import Path; from app.tui.app import run_tui; " \
            "sys.exit(run_tui(Path('.'), model=None, continue_last=False))"
    return [str(PYTHON), "-c", entry]


def compile_bytecode() -> None:
    """Byte-compile the package, as any earlier start leaves it (Python writes __pycache__
    on import; Textual's files come compiled in its wheel), so the figures are of a usual
    start and not of compiling our sources, which a shell with PYTHONDONTWRITEBYTECODE
    set would otherwise make every measured start do."""
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(REPO / "app")], check=False)


def startup_figures(runs: int, peer: bool) -> None:
    compile_bytecode()
    tmux("new-session", "-d", "-s", "keep-alive")  # so no measured start waits for tmux to start
    try:
        measure_all(runs, peer)
    finally:
        tmux("kill-server")
        TMUX_SOCKET.unlink(missing_ok=True)


def measure_all(runs: int, peer: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as scratch:
        home, workspace = Path(scratch) / "home", Path(scratch) / "ws"
        home.mkdir()
        workspace.mkdir()
        # A provider key, as a user has: the model is then a real one and litellm loads in
        # the background (no request is made). Without it the app would run the offline demo.
        env = {"HOME": str(home), "TERM": "xterm-256color", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-bench-no-request"}
        command = our_command()
        print(f"opencode (ours): {shlex.join(command)[:100]}")
        bare, ours = [], []
        for run in range(runs):  # interleaved, so a busy moment on the machine hits both
            bare.append(measure_startup("bare", [str(PYTHON), "-c", BARE_APP], workspace, env, idle=0.2, timeout=20))
            # The last run also waits for litellm's background import before reading memory.
            idle = IDLE_SECONDS if run == runs - 1 else 0.2
            ours.append(measure_startup("ours", command, workspace, env, idle=idle, timeout=20))
        for name, results in (("bare Textual app", bare), ("opencode", ours)):
            if None in results:
                print(f"{name}: keys typed at its first frame did not show within 20 s")
                return
        report("bare Textual app (a TextArea; calibrates this machine)", bare, memory_of=bare)
        report("opencode", ours, memory_of=ours[-1:])
        report_overhead(bare, ours)
        if not peer:
            return
        if not PEER.exists():
            print(f"OpenCode TUI: not measured ({PEER} missing; npm install --prefix /tmp/opencode-bench opencode-ai)")
            return
        version = subprocess.run([str(PEER), "--version"], capture_output=True, text=True, env={**os.environ, **env})
        peer_result = measure_startup("peer", [str(PEER)], workspace, env, idle=IDLE_SECONDS, timeout=60)
        if peer_result is None:
            print("OpenCode TUI: did not show its prompt within 60 s")
        else:
            report(f"OpenCode TUI {version.stdout.strip()}", [peer_result], memory_of=[peer_result])


def report_overhead(bare: list[Startup], ours: list[Startup]) -> None:
    """Ours minus bare Textual, run by run: each pair ran back to back, so a busy spell on
    this shared machine moves both, and the median of the differences stays steadier
    than the difference of the medians."""
    first = statistics.median(o.first_frame_ms - b.first_frame_ms for b, o in zip(bare, ours, strict=True))
    ready = statistics.median(o.ready_ms - b.ready_ms for b, o in zip(bare, ours, strict=True))
    print(f"opencode above bare Textual (median of {len(ours)} paired runs): first frame {first:+.0f} ms,"
          f" ready to type {ready:+.0f} ms")


def startup_runs(argv: list[str]) -> int:
    """``--runs N`` (or ``--runs=N``) from the command line, else 3."""
    for index, arg in enumerate(argv):
        if arg.startswith("--runs="):
            return int(arg.removeprefix("--runs="))
        if arg == "--runs" and index + 1 < len(argv):
            return int(argv[index + 1])
    return 3


def report(name: str, results: list[Startup], memory_of: list[Startup]) -> None:
    first = statistics.median(r.first_frame_ms for r in results)
    ready = statistics.median(r.ready_ms for r in results)
    idle = statistics.median(r.idle_mb for r in memory_of)
    read_after = statistics.median(r.idle_read_s for r in memory_of)
    runs = f"median of {len(results)}" if len(results) > 1 else "1 run"
    print(f"{name}:")
    print(f"  first frame: {first:.0f} ms ({runs})")
    print(f"  ready to type: {ready:.0f} ms (target <= {GOAL_READY_MS} ms)")
    print(f"  idle memory: {idle:.0f} MB, read {read_after:.1f} s after ready (target < {GOAL_IDLE_MB} MB)")


# -- streaming -----------------------------------------------------------------------------


class PacedProvider:
    """A model that streams a fixed answer at ``tokens_per_second``, through the same
    ``stream(...)`` as the real provider, so the real agent loop and TUI do the rest."""

    def __init__(self, text: str, tokens_per_second: float = TOKENS_PER_SECOND, window: int = 200_000) -> None:
        self.tokens = re.findall(r"\S+\s*|\s+", text)
        self.tokens_per_second = tokens_per_second
        self.window = window
        self.started = self.finished = 0.0

    def context_window(self, model: str) -> int:
        return self.window

    async def stream(self, *, model: str, messages: list[dict], tools: list[dict] | None, **options: object):
        from app.llm.provider import Finish, TextDelta, Usage

        per_tick = max(int(self.tokens_per_second * TICK), 1)
        self.started = started = time.perf_counter()
        for index, token in enumerate(self.tokens):
            if index % per_tick == 0:
                await asyncio.sleep(max(started + index / self.tokens_per_second - time.perf_counter(), 0))
            yield TextDelta(token)
        self.finished = time.perf_counter()
        yield Usage(1000, len(self.tokens), 0.0)
        yield Finish("stop")


async def streaming_figures(words: int, tokens_per_second: float) -> None:

    from app.config import Config
    from app.llm.events import TurnFinished
    from app.llm.provider import ensure_litellm
    from app.runtime import Runtime
    from app.tui.app import OpencodeApp
    from app.tui.widgets.message_text import StreamedText

    provider = PacedProvider(streamed_text(words), tokens_per_second)
    frames: list[tuple[float, float]] = []
    stalls: list[tuple[float, float]] = []
    typing: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as scratch:
        workspace = Path(scratch)
        runtime = Runtime.build(workspace, config=Config(), policy="headless-yes")
        session = runtime.store.sessions.create(title="titled, so no title request")
        # pause_gc as run_tui sets it: the collector is managed as in a real start.
        app = OpencodeApp(workspace, runtime=runtime, model="openai/gpt-4o-mini", env={"OPENAI_API_KEY": "bench"}, pause_gc=True,
                          user_themes=Path("/nonexistent"), providers=lambda model: provider)
        async with app.run_test(size=SIZE) as pilot:
            await app.open_session(session.id)
            await pilot.pause()
            # A real reply starts after litellm's background import (the provider waits for
            # it); the paced one would otherwise stream while the import holds the interpreter.
            await ensure_litellm()
            time_frames(app.screen, frames)
            running = True

            async def watch_loop() -> None:
                while running:
                    before = time.perf_counter()
                    await asyncio.sleep(0.005)
                    stalls.append((before, time.perf_counter() - before - 0.005))

            async def type_keys() -> None:
                while running:
                    typing.append(await key_echo(app))
                    await asyncio.sleep(0.05)

            async with runtime.bus.subscribe(TurnFinished) as turn:
                watchers = [asyncio.create_task(watch_loop()), asyncio.create_task(type_keys())]
                await app.send_prompt("go")
                await turn.get()
            texts = list(app.query(StreamedText))
            while not all(text.drawn for text in texts):
                await asyncio.sleep(0.005)
            drawn = time.perf_counter()
            running = False
            await asyncio.gather(*watchers)
        runtime.close()
    window = (provider.started, drawn)  # "while streaming" lasts until the chat shows the last token
    elapsed = provider.finished - provider.started
    frame_starts = during(window, [(start, start) for start, _ in frames])
    gaps = [b - a for a, b in zip(frame_starts, frame_starts[1:], strict=False)]
    print(f"  streamed: {len(provider.tokens):,} tokens in {elapsed:.2f} s = {len(provider.tokens) / elapsed:,.0f} tokens/s"
          f" (target {tokens_per_second:,}); the chat caught up {(drawn - provider.finished) * 1000:.0f} ms after the last")
    print(f"  frames while streaming: {len(frame_starts)} ({len(frame_starts) / (drawn - provider.started):.0f}/s), "
          f"longest gap between frames {max(gaps, default=0) * 1000:.0f} ms")
    print(f"  frame time (layout and paint): {summary(during(window, frames))}")
    print(f"  event loop stall: {summary(during(window, stalls))}")
    print(f"  typed key to prompt while streaming: {summary(during(window, typing))} (goal: never stalls)")


async def key_echo(app) -> tuple[float, float]:
    """Post one printable key to the app: (when it was sent, seconds until the prompt holds it)."""
    from textual import events

    length = len(app.prompt.text)
    sent = time.perf_counter()
    app.post_message(events.Key("x", "x"))
    while len(app.prompt.text) == length:
        await asyncio.sleep(0.001)
    return sent, time.perf_counter() - sent


def during(window: tuple[float, float], samples: list[tuple[float, float]]) -> list[float]:
    return [value for at, value in samples if window[0] <= at <= window[1]]


def summary(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)
    p99 = ordered[min(int(0.99 * len(ordered)), len(ordered) - 1)]
    return (f"median {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
            f"max {ordered[-1] * 1000:.1f} ms ({len(ordered)} samples)")


def time_frames(screen, frames: list[tuple[float, float]]) -> None:
    """Record (start, duration) of every frame the screen makes: a layout refresh (which
    paints too) or a repaint. Headless runs make every frame but write none."""
    depth = 0

    def timed(step):
        def run(*args, **kwargs):
            nonlocal depth
            depth += 1
            begun = time.perf_counter()
            try:
                return step(*args, **kwargs)
            finally:
                depth -= 1
                if depth == 0:
                    frames.append((begun, time.perf_counter() - begun))

        return run

    screen._refresh_layout = timed(screen._refresh_layout)
    screen._compositor_refresh = timed(screen._compositor_refresh)


def streamed_text(words: int) -> str:
    """Markdown shaped like a model's answer: short paragraphs, a list, a code block."""
    blocks, written = [], 0
    while written < words:
        n = len(blocks)
        if n % 4 == 3:
            blocks.append("```python\n" + "\n".join(f"value_{n}_{i} = compute({i})" for i in range(6)) + "\n```")
            written += 24
        elif n % 4 == 2:
            blocks.append("\n".join(f"- item {i} of list {n}" for i in range(5)))
            written += 25
        else:
            blocks.append(" ".join(f"word{written + i}" for i in range(60)))
            written += 60
    return "\n\n".join(blocks)


# -- to the first frame, headless: instructions and profile ----------------------------

MAKE_APP = {
    "bare": BARE_APP.removesuffix("Bare().run()") + "app = Bare()\n",
    "ours": "import app.cli\napp.cli.gc_policy.pause()\nfrom pathlib import Path\n"
            "from app.tui.app import OpencodeApp\napp = OpencodeApp(Path('.'), pause_gc=True)\n",
}
"""Each app made as its start makes it (ours as `opencode` does: the CLI module, the
collector paused, then the TUI), bound to ``app``. The collector's module is reached
through the CLI's, wherever a tree keeps it, so bench_startup.py can run a baseline."""
TO_FIRST_FRAME = "import os\n{make}app.post_display_hook = lambda: os._exit(0)\napp.run(headless=True, size={size})\n"
"""A process that ends as its first frame is done (Textual's ``post_display_hook``):
nothing after it is counted."""


def first_frame_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "TERM": "xterm-256color", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-bench-no-request"}


def instruction_figures() -> None:
    if shutil.which("valgrind") is None:
        print("valgrind is needed for --instructions: apt-get install valgrind")
        return
    compile_bytecode()
    counts = {}
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as scratch:
        home, workspace = Path(scratch) / "home", Path(scratch) / "ws"
        home.mkdir()
        workspace.mkdir()
        for which, make in MAKE_APP.items():
            command = [str(PYTHON), "-c", TO_FIRST_FRAME.format(make=make, size=SIZE)]
            out = Path(scratch) / f"callgrind.{which}"
            done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
                                  cwd=workspace, env=first_frame_env(home), capture_output=True, text=True, check=False)
            found = re.search(r"Collected : (\d+)", done.stderr)
            if done.returncode != 0 or found is None:
                print(f"{which}: no first frame under valgrind: {done.stderr.strip()[-300:]}")
                return
            counts[which] = int(found.group(1))
    print(f"instructions from the interpreter's start to the first frame (headless, {SIZE[0]}x{SIZE[1]}):")
    print(f"  bare Textual app: {counts['bare'] / 1e6:,.0f} M")
    print(f"  opencode: {counts['ours'] / 1e6:,.0f} M ({(counts['ours'] - counts['bare']) / 1e6:+,.0f} M,"
          f" {counts['ours'] / counts['bare'] - 1:+.0%})")


def profile_first_frame(which: str) -> None:
    """Run one app to its first frame in this process under cProfile, then list the
    functions that took the most time, with and without what they call."""
    import cProfile
    import pstats

    profile = cProfile.Profile()

    def first_frame() -> None:
        profile.disable()
        for order in ("cumulative", "tottime"):
            pstats.Stats(profile).sort_stats(order).print_stats(30)
        sys.stdout.flush()
        os._exit(0)

    with tempfile.TemporaryDirectory(prefix="bench-tui-") as scratch:
        home, workspace = Path(scratch) / "home", Path(scratch) / "ws"
        home.mkdir()
        workspace.mkdir()
        os.environ.update(first_frame_env(home))
        os.chdir(workspace)
        namespace: dict[str, object] = {}
        profile.enable()
        exec(MAKE_APP[which], namespace)
        app = namespace["app"]
        app.post_display_hook = first_frame  # type: ignore[attr-defined]
        app.run(headless=True, size=SIZE)  # type: ignore[attr-defined]


def main() -> int:
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
        return 0
    if "--instructions" in sys.argv:
        instruction_figures()
        return 0
    if "--profile" in sys.argv:
        rest = sys.argv[sys.argv.index("--profile") + 1:]
        profile_first_frame(rest[0] if rest and rest[0] in MAKE_APP else "ours")
        return 1  # the first frame ends the process: reaching this line means it never came
    if shutil.which("tmux") is None:
        print("tmux is needed for the start-up figures: apt-get install tmux")
    else:
        startup_figures(runs=startup_runs(sys.argv), peer="--no-peer" not in sys.argv)
    if "--startup-only" in sys.argv:
        return 0
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name, (words, pace) in STREAM_REPLIES.items():
        print(f"streaming {name} ({words:,} words) at {pace:,} tokens/s:")
        asyncio.run(streaming_figures(words, pace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
