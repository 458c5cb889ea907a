"""The protocol's standard streams, whatever they are connected to.

asyncio's pipe transports (which the ACP SDK's ``stdio_streams`` uses) take only what its
event loop can poll: pipes, sockets and terminals. ``opencode acp < requests.jsonl``,
``< /dev/null``, ``> answers.jsonl`` or a closed standard input are none of those, so
each such stream is carried through a pipe of our own, filled (or drained) by a thread:
a file is read to its end like a pipe its writer closed, and a closed standard input is
an empty one. The agent then ends at that end of input, as ACP has it.
"""

from __future__ import annotations

import os
import selectors
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import BinaryIO

_CHUNK = 1 << 16


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd`` (a regular file or /dev/null it cannot)."""
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


class StdioPipes:
    """Pollable stand-ins for standard input and the protocol's output, and the threads
    that copy through them. ``stdin`` and ``stdout`` are what the SDK reads and writes;
    ``close`` ends the copying once the protocol output is closed, with every byte out."""

    def __init__(self, stdin: BinaryIO | None, protocol_out: BinaryIO) -> None:
        self._threads: list[threading.Thread] = []
        self.stdin = self._input(stdin)
        self.stdout = self._output(protocol_out)
        self._source = stdin

    def _input(self, stdin: BinaryIO | None) -> BinaryIO:
        if stdin is not None and pollable(stdin.fileno()):
            return stdin
        read_end, write_end = os.pipe()
        if stdin is None:  # closed: an input that has ended
            os.close(write_end)
        else:
            self._start(_copy, stdin.fileno(), write_end, daemon=True)
        return os.fdopen(read_end, "rb", buffering=0)

    def _output(self, protocol_out: BinaryIO) -> BinaryIO:
        if pollable(protocol_out.fileno()):
            return protocol_out
        read_end, write_end = os.pipe()
        self._start(_drain, read_end, protocol_out, daemon=False)
        return os.fdopen(write_end, "wb", buffering=0)

    def _start(self, target: Callable[..., None], *args: object, daemon: bool) -> None:
        thread = threading.Thread(target=target, args=args, name="opencode-acp-stdio", daemon=daemon)
        thread.start()
        self._threads.append(thread)

    def close(self) -> None:
        """Close our ends and wait for the output to be written out (its copier ends when
        the protocol's end of the pipe is closed; the input's may still be reading)."""
        self.stdout.close()
        if self.stdin is not self._source:
            self.stdin.close()  # a copier still writing gets EPIPE and ends
        for thread in self._threads:
            if not thread.daemon:
                thread.join()


def _copy(source: int, pipe: int) -> None:
    """Standard input into the pipe, then the pipe closed: the reader's end of input."""
    out = os.fdopen(pipe, "wb")
    try:
        while chunk := os.read(source, _CHUNK):
            out.write(chunk)
            out.flush()
    except OSError:
        pass  # the agent stopped reading (its end closed), or the input failed: input ends here
    finally:
        with suppress(OSError):
            out.close()  # the fd is closed even when a last flush fails


def _drain(pipe: int, out: BinaryIO) -> None:
    """The pipe into the real output until the protocol closes its end. An output that
    fails (a full disk) is still drained, so the agent never blocks on it."""
    failed = False
    with os.fdopen(pipe, "rb", buffering=0) as source:
        while chunk := source.read(_CHUNK):
            if failed:
                continue
            try:
                out.write(chunk)
                out.flush()
            except OSError:
                failed = True
