"""Long sessions in the TUI: resuming sessions of 200, 1,000 and 5,000 messages beside an
empty one, in one run.

Each session is written into a real SQLite store (a workspace's ``.opencode/`` folder) in
the shapes the agent loop stores: turns of a prompt, a markdown reply with a ``view`` call
and its result, and a longer markdown reply with a 25-line code block (four messages a
turn). Each case then runs in a process of its own, so memory readings do not mix: the
real app resumes the session as ``opencode --continue`` does (headless, 120x40) and we
record

- first frame: the first frame the app draws, from the process's start;
- last turn: when a frame first shows the session's last message (for the empty session,
  the first frame after the session is opened);
- CPU seconds and resident memory (RSS) at that moment;
- typed key to prompt: a key posted to the app until the prompt holds it, 200 keys (so
  that the p99 is the second slowest, not the slowest, which is printed beside it);
- streaming an 800-word reply at the end of the session, with bench_tui.py's measures,
  paced as a model streams it (bench_tui.py's MODEL_TOKENS_PER_SECOND: about ten seconds)
  while a key is typed every TYPING_INTERVAL: frame time and typed key to prompt while it
  streams, each with the number of samples its percentiles rest on;
- RSS after that reply: sending a prompt imports litellm (a real model has it imported
  from the start), so memory after the walk below is read beside this figure of the
  empty session, not beside its figure at the first turn;
- for a session with messages: walking the transcript from its end up to its first
  message (what a user scrolling up does) and back to the end (the end key), the time it
  takes and the RSS before and after it.

    .venv/bin/python bench/bench_long_session.py [--sizes 0,200,1000,5000] [--runs N] [--timeout S] [--no-walk] [--control]

--runs N runs every size N times, back to back, and ends with each run's opening figures
(last turn, RSS, typed key at rest) beside the empty session's of the same run and their
median over the runs, then each run's streaming p99s beside the empty session's, then
the p99s of all runs' samples pooled.
--control measures a second empty session last in each run, reported beside the first
like the others: how far two runs of the same session differ, the noise any comparison
with the empty session carries.
Last comes a line per session against its targets (OPENING_LIMIT_S, RSS_LIMIT_MB,
KEY_LIMIT_S, STREAM_LIMIT): the opening as the median of the runs, streaming as the
pooled p99s, the walk in every run. Read the targets from ``--runs 6 --control``: one
run's streaming p99s rest on a handful of slow frames and keys, and move by more than the
20% allowed even between the empty session and its control; pooled over six runs (about
2,000 keys a session) the control stays within about a tenth of the empty session.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STARTED = time.perf_counter()

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
SIZE = (120, 40)
SIZES = (0, 200, 1000, 5000)
KEYS = 200
STREAM_WORDS = 800
TYPING_INTERVAL = 0.02
STREAM_WINDOW = 100_000_000
"""The paced model's context window, more than any session here fills: the turn streams
the reply alone, as in the empty session (near its window, a session would first have
its history summarized, a second reply streamed before the one measured)."""
OPENING_LIMIT_S = 0.300
"""A session's last turn on screen at most this long after the empty session's first frame."""
RSS_LIMIT_MB = 60.0
"""Its memory at most this much above the empty session's, on opening and after the walk."""
KEY_LIMIT_S = 0.050
"""Typed keys echoed with a p99 under this while the session is on screen."""
STREAM_LIMIT = 0.20
"""Streaming at a session's end: frame and typed-key p99s at most this much above the empty
session's."""
TIMEOUT = 900.0
"""Seconds a case may take before it is reported as not finished."""
FIRST_PROMPT = "Where does the config loader start?"
WALK = True
"""Walk each transcript to its first message and back (--no-walk skips it: on a loaded
machine a 5,000-message walk takes many minutes)."""


# -- the sessions -------------------------------------------------------------------------


def code_block(turn: int) -> str:
    lines = [f"def step_{turn}_{n}(value: int) -> int:" if n % 5 == 0 else f"    value += {n}  # step {n}"
             for n in range(25)]
    return "```python\n" + "\n".join(lines) + "\n```"


def write_session(workspace: Path, messages: int) -> str:
    """A session of ``messages`` messages (a multiple of four) in ``workspace``'s store."""
    from app.config import Config
    from app.runtime import Runtime

    runtime = Runtime.build(workspace, config=Config(), policy="headless-yes")
    try:
        store = runtime.store
        session = store.sessions.create(title=f"A session of {messages:,} messages", model="scripted/bench")
        for turn in range(messages // 4):
            prompt = FIRST_PROMPT if turn == 0 else f"Turn {turn}: what does module_{turn}.py do next?"
            store.messages.add(session.id, "user", [{"type": "text", "text": prompt}])
            call = {"type": "tool_call", "id": f"call-{turn}", "name": "view",
                    "arguments": json.dumps({"filePath": f"src/module_{turn}.py"})}
            reply = (f"Let me read **module_{turn}.py** first.\n\n- it defines `step_{turn}`\n"
                     f"- it is called from `main`")
            store.messages.add(session.id, "assistant", [{"type": "text", "text": reply}, call],
                               model="scripted/bench")
            output = "\n".join(f"{n:>5}\t    value += {n}" for n in range(1, 21))
            store.messages.add(session.id, "tool", [{"type": "tool_result", "call_id": f"call-{turn}",
                                                     "name": "view", "output": output, "metadata": {}}])
            answer = (f"## What module_{turn} does\n\nIt adds each step to the value, in order. "
                      f"The function below is the whole of it:\n\n{code_block(turn)}\n\n"
                      f"Turn {turn} ends here; the **next** module reads the value it returns.")
            store.messages.add(session.id, "assistant", [{"type": "text", "text": answer}],
                               model="scripted/bench")
        store.sessions.update(session.id, prompt_tokens=1200 * messages, completion_tokens=300 * messages,
                              cost=0.001 * messages)
        return session.id
    finally:
        runtime.close()


# -- one case, in its own process -----------------------------------------------------------


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def last_message_shown(app, message_id: str | None, session_id: str) -> bool:
    """A frame shows the session: its last message's widget has a region on screen."""
    chat = app.chat
    if chat.session_id != session_id:
        return False
    if message_id is None:
        return True
    shown = [child for child in chat.children if getattr(child, "message_id", None) == message_id]
    return bool(shown) and shown[-1].region.height > 0 and bool(shown[-1].children)


async def type_keys(app, count: int, samples: list[tuple[float, float]], running=lambda: True) -> None:
    """Post ``count`` printable keys (or keep on while ``running()``), each once the last has
    reached the prompt; record (sent, seconds to reach the prompt)."""
    from bench_tui import key_echo

    typed = 0
    while typed < count and running():
        samples.append(await key_echo(app))
        typed += 1
        await asyncio.sleep(TYPING_INTERVAL)


async def walk_to_first(app, pilot) -> bool:
    """Scroll up (as the home key of a plain scroll view does: to the top of what is
    drawn, again and again) until the first prompt is on screen; then back to the end with
    the chat's end key."""
    chat = app.chat
    deadline = time.perf_counter() + TIMEOUT
    while not first_prompt_shown(chat):
        if time.perf_counter() > deadline:
            return False
        chat.scroll_home(animate=False)
        await pilot.pause()
    chat.focus()
    await pilot.press("end")
    while not (getattr(chat, "at_session_end", True) and chat.is_vertical_scroll_end):
        if time.perf_counter() > deadline:
            return False
        await pilot.pause()
    return True


def first_prompt_shown(chat) -> bool:
    from app.tui.widgets.message_user import UserMessage

    return any(isinstance(child, UserMessage) and child.text == FIRST_PROMPT and child.region.height > 0
               for child in chat.children)


async def run_case(workspace: Path) -> dict[str, object]:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_tui import MODEL_TOKENS_PER_SECOND, PacedProvider, during, streamed_text, time_frames

    from app.store.db import Database
    from app.tui.app import OpencodeApp

    db = Database(workspace / ".opencode" / "opencode.db", read_only=True)
    session_id = db.query_one("SELECT id FROM sessions")["id"]
    last = db.query_one("SELECT id FROM messages WHERE session_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                        (session_id,))
    db.close()
    last_id = last["id"] if last else None
    provider = PacedProvider(streamed_text(STREAM_WORDS), MODEL_TOKENS_PER_SECOND, window=STREAM_WINDOW)
    figures: dict[str, object] = {}
    app = OpencodeApp(workspace, model="scripted/bench", continue_last=True, pause_gc=True, env={},
                      user_themes=Path("/nonexistent"), providers=lambda model: provider)

    def frame_done() -> None:
        now = time.perf_counter()
        figures.setdefault("first_frame_s", now - STARTED)
        if "last_turn_s" not in figures and last_message_shown(app, last_id, session_id):
            figures["last_turn_s"] = now - STARTED
            figures["cpu_s"] = cpu_seconds()
            figures["rss_mb"] = rss_mb()

    app.post_display_hook = frame_done  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        while "last_turn_s" not in figures:
            if time.perf_counter() - STARTED > TIMEOUT:
                return {"timeout": True, **figures}
            await asyncio.sleep(0.005)
        echo: list[tuple[float, float]] = []
        await type_keys(app, KEYS, echo)
        from app.llm.events import TurnFinished
        from app.tui.widgets.message_text import StreamedText

        figures["echo"] = [seconds for _, seconds in echo]
        app.prompt.clear()
        # Streaming at the end of the session, as bench_tui.py measures it in an empty one:
        # with litellm imported and its objects frozen, as the app leaves them for a real
        # model (the scripted one has the first prompt import it, and the paced model would
        # stream meanwhile, with full collections scanning all it made).
        from app.core import gc_policy
        from app.llm.provider import ensure_litellm

        with gc_policy.full_passes_held():
            await ensure_litellm()
        gc_policy.freeze()
        frames: list[tuple[float, float]] = []
        typing: list[tuple[float, float]] = []
        time_frames(app.screen, frames)
        streaming = True
        runtime = app.runtime
        assert runtime is not None
        async with runtime.bus.subscribe(TurnFinished) as turn:
            typist = asyncio.create_task(type_keys(app, 10**9, typing, lambda: streaming))
            await app.send_prompt("go")
            await turn.get()
        while not all(text.drawn for text in app.query(StreamedText)):
            await asyncio.sleep(0.005)
        drawn = time.perf_counter()
        streaming = False
        await typist
        window = (provider.started, drawn)
        figures["stream_frames"] = during(window, frames)
        figures["stream_echo"] = during(window, typing)
        figures["stream_rss_mb"] = rss_mb()
        app.prompt.clear()
        if last_id is not None and WALK:
            begun = time.perf_counter()
            figures["walked"] = await walk_to_first(app, pilot)
            figures["walk_s"] = time.perf_counter() - begun
            figures["walk_rss_mb"] = rss_mb()
    return figures


# -- the report ---------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)] if ordered else float("nan")


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.0f} ms"


def run_child(workspace: Path, home: Path) -> dict[str, object]:
    env = {**os.environ, "HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    try:
        flags = [] if WALK else ["--no-walk"]
        done = subprocess.run([str(PYTHON), __file__, "--case", str(workspace), *flags], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=2 * TIMEOUT + 60, check=False)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


EMPTY = "empty session"
CONTROL = "empty session again"


def case_name(size: int) -> str:
    return EMPTY if size == 0 else f"{size:,} messages"


def report(name: str, figures: dict[str, object], empty: dict[str, object] | None) -> None:
    if "error" in figures or "last_turn_s" not in figures:
        print(f"{name}: {figures.get('error') or 'did not show its last turn within the time allowed'}")
        return
    last, first = float(figures["last_turn_s"]), float(figures["first_frame_s"])  # type: ignore[arg-type]
    beside_empty = opened_beside(figures, empty) if empty is not None and "first_frame_s" in empty else None
    line = f"{name}: first frame {ms(first)}, last turn on screen {ms(last)}"
    if beside_empty is not None:
        line += f" ({beside_empty[0] * 1000:+,.0f} ms beside the empty session's first frame)"
    print(line)
    rss = float(figures["rss_mb"])  # type: ignore[arg-type]
    memory = f"  CPU {float(figures['cpu_s']):.2f} s, RSS {rss:.0f} MB"  # type: ignore[arg-type]
    if beside_empty is not None:
        memory += f" ({beside_empty[1]:+.0f} MB beside the empty session)"
    print(memory)
    echo = list(figures["echo"])  # type: ignore[call-overload]
    print(f"  typed key to prompt: median {ms(percentile(echo, 0.5))}, p99 {ms(percentile(echo, 0.99))}, "
          f"slowest {ms(max(echo, default=None))} ({len(echo)} keys)")
    from bench_tui import MODEL_TOKENS_PER_SECOND

    frames, typing = list(figures["stream_frames"]), list(figures["stream_echo"])  # type: ignore[call-overload]
    print(f"  streaming {STREAM_WORDS} words at {MODEL_TOKENS_PER_SECOND} tokens/s: "
          f"frame p99 {ms(percentile(frames, 0.99))} (median {ms(percentile(frames, 0.5))}, {len(frames)} frames), "
          f"typed key to prompt p99 {ms(percentile(typing, 0.99))} (median {ms(percentile(typing, 0.5))}, "
          f"{len(typing)} keys)")
    streamed = float(figures["stream_rss_mb"])  # type: ignore[arg-type]
    if "walked" in figures:
        walked = "reached the first prompt and came back" if figures["walked"] else "did NOT reach the first prompt"
        after = float(figures["walk_rss_mb"])  # type: ignore[arg-type]
        line = (f"  scrolling to the first message and back: {walked} in {float(figures['walk_s']):.1f} s, "  # type: ignore[arg-type]
                f"RSS {streamed:.0f} MB before, {after:.0f} MB after")
        if empty is not None and "stream_rss_mb" in empty:
            line += f" ({walked_beside(figures, empty):+.0f} MB beside the empty session after its reply)"
        print(line)
    else:
        print(f"  RSS after the reply {streamed:.0f} MB")


def option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main() -> int:
    global TIMEOUT, WALK
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
        return 0
    TIMEOUT = float(option("--timeout", str(TIMEOUT)))
    WALK = "--no-walk" not in sys.argv
    if "--case" in sys.argv:
        print(json.dumps(asyncio.run(run_case(Path(option("--case", "."))))))
        return 0
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sizes = [int(size) for size in option("--sizes", ",".join(map(str, SIZES))).split(",")]
    cases = [(case_name(size), size) for size in dict.fromkeys(sizes)]
    if "--control" in sys.argv:
        cases.append((CONTROL, 0))
    runs = int(option("--runs", "1"))
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", str(REPO / "app")], check=False)
    streaming: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in cases}
    opening: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in cases if name != EMPTY}
    pooled: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _ in cases}
    walks: dict[str, list[tuple[bool, float]]] = {name: [] for name, _ in cases}
    with tempfile.TemporaryDirectory(prefix="bench-long-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        for size in dict.fromkeys(size for _, size in cases):
            write_session(Path(scratch) / f"session{size}", size)
        for run in range(runs):
            if runs > 1:
                print(f"-- run {run + 1} of {runs} (load average {os.getloadavg()[0]:.1f})")
            empty: dict[str, object] | None = None
            for index, (name, size) in enumerate(cases):
                # A copy per run: the reply streamed in a run is stored in its session.
                workspace = Path(scratch) / f"run{run}-{index}"
                shutil.copytree(Path(scratch) / f"session{size}", workspace)
                figures = run_child(workspace, home)
                report(name, figures, empty)
                if name == EMPTY:
                    empty = figures
                elif empty is not None and "last_turn_s" in figures and "first_frame_s" in empty:
                    opening[name].append(opened_beside(figures, empty))
                if "stream_frames" in figures:
                    frames, keys = list(figures["stream_frames"]), list(figures["stream_echo"])  # type: ignore[call-overload]
                    streaming[name].append((percentile(frames, 0.99), percentile(keys, 0.99)))
                    pooled[name][0].extend(frames)
                    pooled[name][1].extend(keys)
                if "walked" in figures and empty is not None and "stream_rss_mb" in empty:
                    walks[name].append((bool(figures["walked"]), walked_beside(figures, empty)))
    if runs > 1:
        report_opening(opening)
        report_streaming(streaming, pooled)
    report_targets(opening, pooled, walks)
    return 0


def opened_beside(figures: dict[str, object], empty: dict[str, object]) -> tuple[float, float, float]:
    """A case's opening beside the empty session of its run: its last turn after the empty
    session's first frame (seconds), its RSS beside the empty session's (MB), and its
    typed key p99 at rest (seconds)."""
    last = float(figures["last_turn_s"]) - float(empty["first_frame_s"])  # type: ignore[arg-type]
    rss = float(figures["rss_mb"]) - float(empty["rss_mb"])  # type: ignore[arg-type]
    return last, rss, percentile(list(figures["echo"]), 0.99)  # type: ignore[call-overload]


def walked_beside(figures: dict[str, object], empty: dict[str, object]) -> float:
    """A case's RSS after the walk beside the empty session's after its reply (MB)."""
    return float(figures["walk_rss_mb"]) - float(empty["stream_rss_mb"])  # type: ignore[arg-type]


def opening_medians(figures: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The median over the runs of each of ``opened_beside``'s figures."""
    lasts, rsss, keys = zip(*figures, strict=True)
    return percentile(list(lasts), 0.5), percentile(list(rsss), 0.5), percentile(list(keys), 0.5)


def report_opening(opening: dict[str, list[tuple[float, float, float]]]) -> None:
    """Each session's opening run by run, then the median of the runs: first frames alone
    move by a hundred milliseconds and more between processes (the control shows how far),
    so one run's figure carries that much noise."""
    print("opening: last turn beside the empty session's first frame / RSS beside it / typed key p99 at rest,"
          " each run; median of the runs")
    for name, figures in opening.items():
        if not figures:
            continue
        cells = "; ".join(f"{last * 1000:+,.0f} ms / {rss:+.0f} MB / {ms(key)}" for last, rss, key in figures)
        last, rss, key = opening_medians(figures)
        median = f"{last * 1000:+,.0f} ms / {rss:+.0f} MB / {ms(key)}"
        print(f"  {name}: {cells}; median {median}")


def report_streaming(
    streaming: dict[str, list[tuple[float, float]]], pooled: dict[str, tuple[list[float], list[float]]]
) -> None:
    """Each session's streaming p99s, run by run, beside the empty session's in the same
    run (the runs are back to back, so a busy spell on the machine moves both); then the
    p99s of all runs' samples pooled. A run's p99 rests on its three or four slowest
    frames, so it moves by a third between runs of the same session; the pooled one
    rests on the slowest 1% of every run."""
    empty = streaming.get(EMPTY, [])
    print(f"streaming {STREAM_WORDS} words, frame p99 / typed key p99, each run (beside the empty session's):")
    for name, figures in streaming.items():
        cells = [
            f"{ms(frame)} / {ms(key)}" + (f" ({beside(frame, empty[index][0])} / {beside(key, empty[index][1])})"
                                          if name != EMPTY and index < len(empty) else "")
            for index, (frame, key) in enumerate(figures)
        ]  # fmt: skip
        print(f"  {name}: " + "; ".join(cells))
    print(f"streaming {STREAM_WORDS} words, all runs pooled: frame p99 / typed key p99 (beside the empty session's):")
    empty_frames, empty_keys = pooled.get(EMPTY, ([], []))
    for name, (frames, keys) in pooled.items():
        if not frames or not keys:
            continue
        frame, key = percentile(frames, 0.99), percentile(keys, 0.99)
        cell = f"{ms(frame)} / {ms(key)} ({len(frames)} frames, {len(keys)} keys)"
        if name != EMPTY and empty_frames and empty_keys:
            cell += f" ({beside(frame, percentile(empty_frames, 0.99))} / {beside(key, percentile(empty_keys, 0.99))})"
        print(f"  {name}: {cell}")


def report_targets(
    opening: dict[str, list[tuple[float, float, float]]],
    pooled: dict[str, tuple[list[float], list[float]]],
    walks: dict[str, list[tuple[bool, float]]],
) -> None:
    """Each session against the targets a long session is held to (see the module's
    docstring for what each figure is): the opening figures as the median of the runs,
    streaming as the pooled p99s, the walk in every run. Read the control's line as the
    noise of the machine: it compares the empty session with itself."""
    print("targets: median of the runs for the opening, all runs pooled for streaming, every run for the walk:")
    empty_frames, empty_keys = pooled.get(EMPTY, ([], []))
    for name, figures in opening.items():
        if not figures:
            continue
        last, rss, key = opening_medians(figures)
        checks = [
            (f"last turn {last * 1000:+,.0f} ms (at most +{OPENING_LIMIT_S * 1000:.0f})", last <= OPENING_LIMIT_S),
            (f"RSS {rss:+.0f} MB (at most +{RSS_LIMIT_MB:.0f})", rss <= RSS_LIMIT_MB),
            (f"key p99 at rest {ms(key)} (under {ms(KEY_LIMIT_S)})", key < KEY_LIMIT_S),
        ]
        frames, typed = pooled.get(name, ([], []))
        if frames and typed and empty_frames and empty_keys:
            frame_ratio = above(percentile(frames, 0.99), percentile(empty_frames, 0.99))
            key_ratio = above(percentile(typed, 0.99), percentile(empty_keys, 0.99))
            checks.append((f"streaming frame p99 {frame_ratio:+.0%}, key p99 {key_ratio:+.0%} "
                           f"(at most +{STREAM_LIMIT:.0%})", max(frame_ratio, key_ratio) <= STREAM_LIMIT))
        walked_runs = walks.get(name, [])
        if walked_runs:
            reached = sum(walked for walked, _ in walked_runs)
            highest = max(after for _, after in walked_runs)
            checks.append((f"walk reached the first prompt in {reached} of {len(walked_runs)} runs, RSS after it "
                           f"up to {highest:+.0f} MB (at most +{RSS_LIMIT_MB:.0f})",
                           reached == len(walked_runs) and highest <= RSS_LIMIT_MB))
        verdict = "meets every target" if all(met for _, met in checks) else "MISSES a target"
        print(f"  {name}: {verdict}: " + "; ".join(f"{text} {'ok' if met else 'MISSED'}" for text, met in checks))


def above(value: float, reference: float) -> float:
    """How far ``value`` lies above ``reference``, as a fraction of it (negative: below)."""
    return value / reference - 1


def beside(value: float, reference: float) -> str:
    return f"{above(value, reference):+.0%}"


if __name__ == "__main__":
    sys.exit(main())
