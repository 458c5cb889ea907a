"""`opencode acp`: serve the agent over stdio. stdout carries only protocol frames: the
process's own fd 1 is pointed at stderr before anything can print, and the protocol
writes to a private duplicate of the original stdout. Logs go to a file."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

from acp.agent.router import build_agent_router
from acp.connection import Connection
from acp.stdio import stdio_streams

from app.acp.agent import OpencodeAgent
from app.acp.channel import ClientChannel
from app.acp.stdio_pipes import StdioPipes
from app.config import load_config
from app.core.errors import OpencodeError
from app.store.location import data_directory

HELP = "serve the agent to editors over the Agent Client Protocol (stdio)"
STREAM_LIMIT = 50 * 1024 * 1024  # prompts may embed whole files
LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


def run_acp(root: Path | None) -> int:
    """Serve until the editor closes stdin; returns the exit code."""
    root = (root or Path.cwd()).expanduser().resolve()
    if not root.is_dir():  # checked before the log folder would be made inside it
        print(f"opencode: error: workspace {root} is not a directory: pass an existing directory to -C", file=sys.stderr)
        return 2
    if sys.stdout is None:  # fd 1 closed: a file opened later would take its number
        print("opencode: error: standard output is closed: opencode acp answers the editor on it; "
              "run it with its output connected (an editor does)", file=sys.stderr)
        return 2
    try:
        log_file = _start_logging(root)
    except OpencodeError as error:
        print(f"opencode: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a file where the logs folder goes, a folder that cannot be written
        print(
            f"opencode: error: cannot keep the ACP log at {error.filename}: {error.strerror or error}; "
            "remove what is in the way, or set OPENCODE_DATA__DIRECTORY to a writable folder",
            file=sys.stderr,
        )
        return 2
    pipes = StdioPipes(sys.stdin.buffer if sys.stdin is not None else None, os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)  # a stray print (a library's banner) must not corrupt the protocol
    sys.stdout = sys.stderr
    logging.getLogger(__name__).info("serving ACP; log in %s", log_file)
    try:
        asyncio.run(_serve(pipes))
    except KeyboardInterrupt:
        return 130
    finally:
        pipes.close()
    return 0


async def _serve(pipes: StdioPipes) -> None:
    # The SDK's stdio_streams reads sys.stdin and writes sys.stdout: set only for this call.
    sys.stdin, sys.stdout = pipes.stdin, pipes.stdout
    try:
        reader, writer = await stdio_streams(limit=STREAM_LIMIT)
    finally:
        sys.stdin, sys.stdout = sys.__stdin__, sys.stderr
    agent = OpencodeAgent()
    # The SDK's Agent protocol lists every ACP method; its router serves those an agent
    # defines and answers "method not found" for the rest, which is what this agent wants.
    router = build_agent_router(agent)  # type: ignore[arg-type]
    connection = Connection(router, writer, reader, listening=False)
    agent.channel = ClientChannel(connection)
    try:
        await connection.main_loop()
    finally:
        await agent.close()
        await connection.close()


def _start_logging(root: Path) -> Path:
    data = data_directory(root, load_config(root))
    if data.notice:
        print(f"opencode: {data.notice}", file=sys.stderr)
    log_dir = data.path / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / "acp.log"
    log_to(log_file)
    return log_file


def log_to(log_file: Path) -> None:
    """Send this process's log to ``log_file`` (INFO and above), and nowhere else."""
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    # litellm adds its own stream handler on import and logs a line per model call at INFO:
    # the editor would get that chatter on stderr. Its warnings and errors still come.
    for name in LITELLM_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
